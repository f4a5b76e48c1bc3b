// SPDX-License-Identifier: GPL-2.0
/*
 * One libdwfl session per target, in the manner of eu-stack.
 *
 * Modules are reported by syncprof, not by dwfl_linux_proc_report: each
 * file is opened here, through the target's root or its map_files, so a
 * process in a container resolves, and its ELF is opened at once, so
 * reports printed after the target exited are still named.  Its DWARF is
 * read when a name is first asked for, unless the process has a root of
 * its own (a container): a separate debug file found through
 * /proc/PID/root is gone with the process, so there it is read at once.
 * Reading every module's DWARF at once cost each new program its libc
 * debug file (tens of MB, decompressed) even when nothing of it was ever
 * named: under --all, memory grew by hundreds of MB a minute.
 *
 * Separate debug files are found by debugfind.c, else fetched by
 * debugfetch.c, and read from a private copy (dwflfile.c).  Each
 * module's index (modindex.c: sorted symbols and DWARF function ranges)
 * is built on first use and lives in the module's userdata.
 */
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "debugfetch.h"
#include "debugfind.h"
#include "dwflfile.h"
#include "dwflsession.h"
#include "log.h"
#include "modindex.h"
#include "procmaps.h"
#include "targetfile.h"

/* A separate debug file is copied into memory (dwflfile.c): up to this. */
#define DEBUG_FILE_MAX (1ull << 30)

/* Each module's userdata: what its callbacks and lookups need. */
struct module_slot {
	const char *debuginfo_path;	/* the session's */
	struct modindex *idx;		/* built on first use */
	struct dwflfile *file;		/* until libdwfl's find_elf takes it */
	int fd;				/* then libdwfl's descriptor of it */
	uint64_t size;			/* and its size when opened */
	bool shrank;			/* said it was truncated */
};

struct reported_file {
	uint64_t dev;
	uint64_t inode;
	uint64_t base;
};

struct dwflsession {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	bool own_root;		/* its / is not ours: DWARF read at once */
	struct reported_file *reported;
	size_t n_reported, reported_cap;
};

static bool dwflsession__was_reported(struct dwflsession *s,
				      const struct reported_file *file)
{
	for (size_t i = 0; i < s->n_reported; i++) {
		const struct reported_file *r = &s->reported[i];

		if (r->dev == file->dev && r->inode == file->inode &&
		    r->base == file->base)
			return true;
	}
	return false;
}

/* The lowest mapping of the same file at or before index i. */
static const struct procmaps_entry *first_mapping(const struct procmaps *maps,
						  size_t i)
{
	const struct procmaps_entry *e = procmaps__entry(maps, i);
	const struct procmaps_entry *first = e;

	while (i-- > 0) {
		const struct procmaps_entry *prev = procmaps__entry(maps, i);

		if (prev->inode != e->inode || prev->dev != e->dev)
			break;
		first = prev;
	}
	return first;
}

/*
 * The module's slot, for its file, its debug file's search and its
 * index; file (taken over) is kept for find_elf, or freed when the
 * module had its file already.  false: no slot (no memory).
 */
static bool dwflsession__slot(struct dwflsession *s, Dwfl_Module *mod,
			      struct dwflfile *file)
{
	void **userdata;
	struct module_slot *slot;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata) {
		dwflfile__free(file);
		return true;
	}
	if (!(slot = calloc(1, sizeof(*slot)))) {
		dwflfile__free(file);
		return false;
	}
	slot->debuginfo_path = s->debuginfo_path;
	slot->file = file;
	slot->fd = -1;
	*userdata = slot;
	return true;
}

/* libdwfl's find_elf: the file opened when the module was reported. */
static int dwflsession__find_elf(Dwfl_Module *mod, void **userdata,
				 const char *modname, Dwarf_Addr base,
				 char **file_name, Elf **elfp)
{
	struct module_slot *slot = *userdata;
	int fd;

	if (!slot || !slot->file)
		return -1;
	slot->size = dwflfile__size(slot->file);
	fd = dwflfile__hand_over(slot->file, file_name, elfp);
	slot->file = NULL;
	slot->fd = fd;
	return fd;
}

/* A debug file libdwfl will map: its copy in memory (see dwflfile.c). */
static int dwflsession__debug_copy(int fd, const char *name)
{
	int copy = dwflfile__copy(fd, DEBUG_FILE_MAX);

	close(fd);
	if (copy < 0)
		pr_warn("symbols: %s not read: %s", name ? name : "a debug file",
			strerror(-copy));
	return copy < 0 ? -1 : copy;
}

/*
 * Debug files from debuginfod (debugfetch.c), for every session: libdwfl
 * calls find_debuginfo with the module alone, so the fetcher is reached
 * from here, not from the session.  NULL: off.
 */
static struct debugfetch *session_fetch;

void dwflsession__use_debuginfod(struct debugfetch *fetch)
{
	session_fetch = fetch;
}

/* libdwfl's find_debuginfo: the search of debugfind.h. */
static int dwflsession__find_debuginfo(Dwfl_Module *mod, void **userdata,
				       const char *modname, Dwarf_Addr base,
				       const char *file_name,
				       const char *debuglink_file,
				       GElf_Word debuglink_crc,
				       char **debuginfo_file_name)
{
	const struct module_slot *slot = *userdata;
	const unsigned char *id;
	GElf_Addr vaddr;
	int fd, len;

	fd = debugfind__open(mod, slot ? slot->debuginfo_path
				       : ":.debug:/usr/lib/debug",
			     modname, file_name, debuglink_file,
			     debuginfo_file_name);
	if (fd >= 0)
		return dwflsession__debug_copy(fd, *debuginfo_file_name);
	if (!session_fetch)
		return fd;
	/* Not on this machine: debuginfod (debugfetch.c), with its limit. */
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len <= 0)
		return fd;
	fd = debugfetch__find(session_fetch, id, (size_t)len,
			      file_name ? file_name : modname,
			      debuginfo_file_name);
	return fd >= 0 ? dwflsession__debug_copy(fd, *debuginfo_file_name) : -1;
}

/*
 * The name libdwfl searches a debuglink's directory by: with our root,
 * /proc/PID/root/X is X (procmaps__file_path checked the identity), and
 * X stays valid after the process is gone, when its DWARF may be read.
 */
static const char *dwflsession__link_base(const struct dwflsession *s,
					  const char *path)
{
	char root[32];
	int n;

	if (s->own_root || s->pid <= 0)
		return path;
	n = snprintf(root, sizeof(root), "/proc/%d/root/", (int)s->pid);
	if (n > 0 && !strncmp(path, root, (size_t)n))
		return path + n - 1;
	return path;
}

/*
 * Reports the files of maps not reported yet.  All files are opened
 * first, then their DWARF loaded: loading is slow (libc's separate debug
 * file takes ~100 ms) and a short-lived target may be gone by then, but
 * an open file outlives it.
 */
void dwflsession__report(struct dwflsession *s, const struct procmaps *maps)
{
	Dwfl_Module **added = calloc(procmaps__count(maps) + 1, sizeof(*added));
	size_t n_added = 0;

	dwfl_report_begin_add(s->dwfl);
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const struct procmaps_entry *first;
		struct reported_file file;
		struct dwflfile *elf;
		char path[PATH_MAX];
		Dwfl_Module *mod;
		int fd, err;

		if (!e->exec || e->path[0] != '/')
			continue;
		first = first_mapping(maps, i);
		file = (struct reported_file){
			.dev = e->dev,
			.inode = e->inode,
			.base = first->start - first->offset,
		};
		if (dwflsession__was_reported(s, &file))
			continue;
		if (s->pid <= 0) {
			/* No process (symbolizer__new_file): a file here. */
			snprintf(path, sizeof(path), "%s", e->path);
		} else if (procmaps__file_path(s->pid, e, path, sizeof(path))) {
			pr_debug("symbols: cannot open %s", e->path);
			continue;
		}
		if (targetfile__open(path, 0, &fd))
			continue;
		/* dwflfile owns fd from here. */
		err = dwflfile__open(fd, file.base,
				     dwflsession__link_base(s, path), &elf);
		if (err) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 strerror(-err));
			continue;
		}
		mod = dwflfile__report(elf, s->dwfl, e->path);
		if (!mod) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 dwfl_errmsg(-1));
			dwflfile__free(elf);
			continue;
		}
		if (!dwflsession__slot(s, mod, elf))
			continue;
		pr_debug("symbols: %s at 0x%" PRIx64, e->path, file.base);
		if (added)
			added[n_added++] = mod;
		if (!array__grow(&s->reported, &s->reported_cap,
				 s->n_reported + 1, sizeof(*s->reported)))
			s->reported[s->n_reported++] = file;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	/* Each file to libdwfl now (find_elf): build IDs are read from it. */
	for (size_t i = 0; i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getelf(added[i], &bias))
			pr_debug("symbols: cannot use %s: %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL),
				 dwfl_errmsg(-1));
	}
	for (size_t i = 0; s->own_root && i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getdwarf(added[i], &bias))
			pr_debug("symbols: no DWARF for %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL));
	}
	free(added);
}

/* Whether the process sees the same / as syncprof (not a container's). */
static bool dwflsession__shares_root(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
	if (stat("/", &ours) || stat(path, &theirs))
		return false;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

static int free_module_index(Dwfl_Module *mod, void **userdata,
			     const char *name, Dwarf_Addr start, void *arg)
{
	struct module_slot *slot = *userdata;

	if (slot) {
		modindex__free(slot->idx);
		dwflfile__free(slot->file);
	}
	free(slot);
	*userdata = NULL;
	return DWARF_CB_OK;
}

int dwflsession__new(pid_t pid, const char *debuginfo_path,
		     struct dwflsession **out)
{
	struct dwflsession *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->pid = pid;
	if (debuginfo_path)
		s->debuginfo_path = strdup(debuginfo_path);
	else if (pid <= 0)
		s->debuginfo_path = strdup(":.debug:/usr/lib/debug");
	else if (asprintf(&s->debuginfo_path,
			  ":.debug:/usr/lib/debug:/proc/%d/root/usr/lib/debug",
			  (int)pid) < 0)
		s->debuginfo_path = NULL;
	s->own_root = pid > 0 && !dwflsession__shares_root(pid);
	if (!s->debuginfo_path) {
		dwflsession__free(s);
		return -ENOMEM;
	}
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwflsession__find_elf,
		.find_debuginfo = dwflsession__find_debuginfo,
		.debuginfo_path = &s->debuginfo_path,
	};
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl) {
		dwflsession__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void dwflsession__free(struct dwflsession *s)
{
	if (!s)
		return;
	if (s->dwfl) {
		dwfl_getmodules(s->dwfl, free_module_index, NULL, 0);
		dwfl_end(s->dwfl);
	}
	free(s->reported);
	free(s->debuginfo_path);
	free(s);
}

Dwfl *dwflsession__dwfl(const struct dwflsession *s)
{
	return s->dwfl;
}

Dwfl_Module *dwflsession__module(const struct dwflsession *s, uint64_t addr)
{
	return dwfl_addrmodule(s->dwfl, addr);
}

/* The module's index, built on first use; NULL if it cannot be. */
struct modindex *dwflsession__index(Dwfl_Module *mod)
{
	void **userdata;
	const char *name = dwfl_module_info(mod, &userdata, NULL, NULL, NULL,
					    NULL, NULL, NULL);
	struct module_slot *slot = *userdata;
	uint64_t now;

	if (!slot || slot->idx)
		return slot ? slot->idx : NULL;
	if (modindex__build(mod, &slot->idx))
		slot->idx = NULL;
	/* Read once: a file cut short meanwhile is said once. */
	if (!slot->shrank && dwflfile__shrank(slot->fd, slot->size, &now)) {
		slot->shrank = true;
		pr_warn("symbols: %s was truncated while syncprof read it (%"
			PRIu64 " bytes, then %" PRIu64 "); what was past its "
			"end is not named", name, slot->size, now);
	}
	return slot->idx;
}
