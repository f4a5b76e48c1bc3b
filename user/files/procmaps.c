// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procmaps.h"
#include "array.h"
#include "linereader.h"
#include "targetfile.h"

struct procmaps {
	struct procmaps_entry *entries;
	size_t count, cap;
};

/*
 * A number in base 16 (or 10) at *p, which moves past it: false when
 * there is no digit.  By hand: --all reads every new process's maps, and
 * sscanf's parsing was a tenth of syncprof's time under a fork storm.
 */
static bool parse_number(char **p, unsigned int base, uint64_t *out)
{
	uint64_t v = 0;
	char *c = *p;

	for (;; c++) {
		unsigned int d;

		if (*c >= '0' && *c <= '9')
			d = (unsigned int)(*c - '0');
		else if (base == 16 && *c >= 'a' && *c <= 'f')
			d = (unsigned int)(*c - 'a' + 10);
		else if (base == 16 && *c >= 'A' && *c <= 'F')
			d = (unsigned int)(*c - 'A' + 10);
		else
			break;
		v = v * base + d;
	}
	if (c == *p)
		return false;
	*out = v;
	*p = c;
	return true;
}

/* A number then the separator sep, both consumed. */
static bool parse_field(char **p, unsigned int base, char sep, uint64_t *out)
{
	if (!parse_number(p, base, out) || **p != sep)
		return false;
	(*p)++;
	return true;
}

int procmaps__parse_line(char *line, struct procmaps_entry *entry)
{
	uint64_t start, end, offset, inode, dev_major, dev_minor;
	char perms[5] = { 0 };
	char *p = line;
	size_t len, n = 0;
	char *path;

	if (!parse_field(&p, 16, '-', &start) ||
	    !parse_field(&p, 16, ' ', &end))
		return -EINVAL;
	/*
	 * r, w, x, s or p, or '-' for each (zeroed: a field shorter than
	 * "r-x" leaves perms[2] '\0', not stale); anything else is no maps
	 * line.
	 */
	for (; *p && *p != ' '; p++)
		if (!strchr("rwxsp-", *p))
			return -EINVAL;
		else if (n < sizeof(perms) - 1)
			perms[n++] = *p;
	if (!n || *p++ != ' ' || !parse_field(&p, 16, ' ', &offset) ||
	    !parse_field(&p, 16, ':', &dev_major) ||
	    !parse_field(&p, 16, ' ', &dev_minor) ||
	    !parse_number(&p, 10, &inode) || start >= end ||
	    (*p && !isspace((unsigned char)*p)))
		return -EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	path = p;
	len = strlen(path);
	while (len && isspace((unsigned char)path[len - 1]))
		path[--len] = '\0';
	*entry = (struct procmaps_entry){
		.start = start,
		.end = end,
		.offset = offset,
		.inode = inode,
		.dev = makedev((unsigned int)dev_major, (unsigned int)dev_minor),
		.exec = perms[2] == 'x',
		.path = path,
	};
	static const char deleted[] = " (deleted)";
	if (len > sizeof(deleted) - 1 &&
	    !strcmp(path + len - (sizeof(deleted) - 1), deleted)) {
		path[len - (sizeof(deleted) - 1)] = '\0';
		entry->deleted = true;
	}
	return 0;
}

void procmaps__free(struct procmaps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->count; i++)
		free((char *)maps->entries[i].path);
	free(maps->entries);
	free(maps);
}

struct procmaps *procmaps__new(void)
{
	return calloc(1, sizeof(struct procmaps));
}

int procmaps__add(struct procmaps *maps, const struct procmaps_entry *entry)
{
	struct procmaps_entry copy = *entry;

	if (array__grow(&maps->entries, &maps->cap, maps->count + 1,
			sizeof(*maps->entries)))
		return -ENOMEM;
	copy.path = strdup(entry->path);
	if (!copy.path)
		return -ENOMEM;
	maps->entries[maps->count++] = copy;
	return 0;
}

int procmaps__parse(FILE *file, struct procmaps **out)
{
	struct procmaps *maps = procmaps__new();
	struct linereader *lines = NULL;
	char *line;
	int err, end;

	err = maps ? linereader__stream(file, &lines) : -ENOMEM;
	while (!err && (line = linereader__next(lines, NULL))) {
		struct procmaps_entry entry;

		if (procmaps__parse_line(line, &entry))
			err = -EINVAL;
		else
			err = procmaps__add(maps, &entry);
	}
	end = linereader__close(lines);
	if (!err)
		err = end;
	if (err) {
		procmaps__free(maps);
		return err;
	}
	*out = maps;
	return 0;
}

/*
 * Whether an earlier read of the process placed the same file at the same
 * range with the same text: its link then said what the text says (a
 * name the text spells otherwise had its own, different path there).
 */
static bool procmaps__named_before(const struct procmaps *prev,
				   const struct procmaps_entry *e)
{
	const struct procmaps_entry *p = prev ? procmaps__find(prev, e->start)
					      : NULL;

	return p && p->start == e->start && p->end == e->end &&
	       p->offset == e->offset && p->dev == e->dev &&
	       p->inode == e->inode && p->deleted == e->deleted &&
	       !strcmp(p->path, e->path);
}

/*
 * The maps file prints a newline in a path as "\012" (and a name that is
 * "\012" itself the same way) and drops trailing blanks, so its text does
 * not always name the file.  map_files' links do: each code mapping's
 * path is taken from there when it can be read (root: CAP_SYS_ADMIN),
 * without the " (deleted)" the link adds.  A mapping an earlier read of
 * the process (prev) already named from its link, and found as its text
 * says, is not asked again: a process re-read at each library it loads
 * cost a readlink per code mapping each time.
 */
static void procmaps__resolve_paths(struct procmaps *maps, pid_t pid,
				    const struct procmaps *prev)
{
	static const char deleted[] = " (deleted)";

	for (size_t i = 0; i < maps->count; i++) {
		struct procmaps_entry *e = &maps->entries[i];
		char link[64], target[PATH_MAX];
		ssize_t n;
		char *copy;

		if (!e->exec || e->path[0] != '/' ||
		    procmaps__named_before(prev, e))
			continue;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)pid, e->start, e->end);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (e->deleted && (size_t)n > sizeof(deleted) - 1 &&
		    !strcmp(target + n - (sizeof(deleted) - 1), deleted))
			target[n - (sizeof(deleted) - 1)] = '\0';
		if (!strcmp(target, e->path) || target[0] != '/')
			continue;
		copy = strdup(target);
		if (!copy)
			continue;
		free((char *)e->path);
		e->path = copy;
	}
}

/*
 * A live thread of process pid whose /proc maps file shows its memory
 * (once the main thread has exited its maps file is empty, its root
 * gone), or pid when there is none.
 */
static pid_t procmaps__live_thread(pid_t pid)
{
	char path[64], line[8];
	struct dirent *entry;
	pid_t found = pid;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return pid;
	while ((entry = readdir(dir))) {
		pid_t tid = (pid_t)atoi(entry->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid,
			 (int)tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f))
			found = tid;
		fclose(f);
		if (found != pid)
			break;
	}
	closedir(dir);
	return found;
}

/* Bytes asked of the kernel a read: most processes' maps in one. */
#define MAPS_READ_BUF (64 * 1024)

/* /proc/PID/maps, read through buf (NULL: stdio's own); NULL, errno. */
static FILE *procmaps__open(pid_t pid, char *buf)
{
	char path[64];
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	file = fopen(path, "re");
	if (file && buf)
		setvbuf(file, buf, _IOFBF, MAPS_READ_BUF);
	return file;
}

/*
 * /proc/PID/maps opened once and parsed from there: opening it first to
 * see whether it was empty, then again to parse it, made the kernel
 * print its first page twice, for every new process under --all.  Only
 * an empty file (a main thread that exited) asks the other threads.
 */
int procmaps__read(pid_t pid, struct procmaps **out)
{
	return procmaps__read_since(pid, NULL, out);
}

int procmaps__read_since(pid_t pid, const struct procmaps *prev,
			 struct procmaps **out)
{
	char *buf = malloc(MAPS_READ_BUF);
	FILE *file = procmaps__open(pid, buf);
	int err, c;

	if (file && (c = getc(file)) != EOF) {
		ungetc(c, file);
	} else if (file) {
		fclose(file);
		pid = procmaps__live_thread(pid);
		file = procmaps__open(pid, buf);
	}
	if (!file) {
		err = -errno;
		free(buf);
		return err;
	}
	/* A read cut short (the process ended meanwhile) is not the list. */
	err = procmaps__parse(file, out);
	fclose(file);
	free(buf);
	if (!err)
		procmaps__resolve_paths(*out, pid, prev);
	return err;
}

void procmaps__keep_exec_files(struct procmaps *maps)
{
	size_t kept = 0;

	for (size_t i = 0; i < maps->count; i++) {
		struct procmaps_entry *e = &maps->entries[i];

		if (e->exec && e->path[0] == '/')
			maps->entries[kept++] = *e;
		else
			free((char *)e->path);
	}
	maps->count = kept;
}

int procmaps__exec_files(const struct procmaps *maps, struct procmaps **out)
{
	struct procmaps *copy = procmaps__new();
	int err = copy ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < maps->count; i++)
		if (maps->entries[i].exec && maps->entries[i].path[0] == '/')
			err = procmaps__add(copy, &maps->entries[i]);
	if (err) {
		procmaps__free(copy);
		return err;
	}
	*out = copy;
	return 0;
}

size_t procmaps__count(const struct procmaps *maps)
{
	return maps->count;
}

const struct procmaps_entry *procmaps__entry(const struct procmaps *maps,
					     size_t index)
{
	return index < maps->count ? &maps->entries[index] : NULL;
}

bool procmaps__maps_file(const struct procmaps *maps, uint64_t dev,
			 uint64_t inode, bool exec)
{
	for (size_t i = 0; i < maps->count; i++) {
		const struct procmaps_entry *e = &maps->entries[i];

		if (e->inode == inode && e->dev == dev && (e->exec || !exec))
			return true;
	}
	return false;
}

const struct procmaps_entry *procmaps__find(const struct procmaps *maps,
					    uint64_t addr)
{
	/* /proc/PID/maps is sorted by address. */
	size_t lo = 0, hi = maps->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct procmaps_entry *e = &maps->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e->path[0] == '/' ? e : NULL;
	}
	return NULL;
}

bool procmaps__is_library(const char *path, const char *stem)
{
	const char *base = strrchr(path, '/');
	size_t stem_len = strlen(stem);
	const char *rest;

	base = base ? base + 1 : path;
	if (strncmp(base, stem, stem_len))
		return false;
	rest = base + stem_len;
	if (!strncmp(rest, ".so", 3)) {
		/* libc.so, libc.so.6 */
		rest += 3;
		if (!*rest)
			return true;
		if (*rest != '.')
			return false;
		rest++;
		if (!isdigit((unsigned char)*rest))
			return false;
		while (isdigit((unsigned char)*rest) || *rest == '.')
			rest++;
		return !*rest;
	}
	if (*rest == '-') {
		/* libc-2.31.so */
		rest++;
		if (!isdigit((unsigned char)*rest))
			return false;
		while (isdigit((unsigned char)*rest) || *rest == '.')
			rest++;
		return !strcmp(rest - 1, ".so") && rest - 1 > base + stem_len + 1;
	}
	return false;
}

const struct procmaps_entry *procmaps__find_library(const struct procmaps *maps,
						    const char *stem)
{
	for (size_t i = 0; i < maps->count; i++) {
		if (procmaps__is_library(maps->entries[i].path, stem))
			return &maps->entries[i];
	}
	return NULL;
}

static bool same_file(const char *path, const struct procmaps_entry *entry)
{
	struct targetfile_stamp st;

	return !targetfile__stat(path, 0, &st) && st.ino == entry->inode &&
	       st.dev == entry->dev;
}

/*
 * The maps path is printed relative to the reader's root, so through
 * /proc/PID/root it names the target's file only when the identity
 * checks out.  map_files names the mapped inode itself, across mount
 * namespaces and replacements on disk, but needs CAP_SYS_ADMIN; and its
 * directory is no place to look for a debuglink, hence second.
 */
static bool procmaps__file_path_as(pid_t pid,
				   const struct procmaps_entry *entry,
				   char *path, size_t len)
{
	snprintf(path, len, "/proc/%d/root%s", (int)pid, entry->path);
	if (same_file(path, entry))
		return true;
	snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pid, entry->start, entry->end);
	return same_file(path, entry);
}

/*
 * Whether process pid's maps file is empty (its main thread exited):
 * then its other threads show its memory.
 */
static bool procmaps__leader_gone(pid_t pid)
{
	char path[64];
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	c = getc(f);
	fclose(f);
	return c == EOF;
}

int procmaps__file_path(pid_t pid, const struct procmaps_entry *entry,
			char *path, size_t len)
{
	pid_t tid;

	if (entry->path[0] != '/')
		return -ENOENT;
	/* The process's own files first: its main thread mostly lives, and
	   asking whether it does read the first page of its maps. */
	if (procmaps__file_path_as(pid, entry, path, len))
		return 0;
	tid = procmaps__leader_gone(pid) ? procmaps__live_thread(pid) : pid;
	if (tid != pid && procmaps__file_path_as(tid, entry, path, len))
		return 0;
	/* The process has exited since its maps were read: the same file
	   (device and inode) under its name in syncprof's root. */
	snprintf(path, len, "%s", entry->path);
	if (same_file(path, entry))
		return 0;
	return -ENOENT;
}
