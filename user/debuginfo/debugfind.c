// SPDX-License-Identifier: GPL-2.0
/*
 * Where libdwfl's dwfl_standard_find_debuginfo looks, in its order: the
 * build ID under each absolute directory of the path
 * (DIR/.build-id/xx/rest.debug), then the debug link next to the file,
 * under each relative directory there (.debug/), and under each
 * absolute one followed by the file's own directory.  libdwfl opens
 * these itself, with open(2): a FIFO planted as the debug file next to a
 * target's binary blocked syncprof for good, a link resolved in
 * syncprof's root.  Here each goes through targetfile.h, and the debug
 * link, a name the target's ELF chose, is refused when it holds a '/'.
 * A candidate must carry the module's build ID when it has one (what
 * libdwfl checks too); the CRC of a debug link without one is not
 * checked.  No debuginfod, as before.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debugfind.h"
#include "targetfile.h"

struct want {
	const unsigned char *id;
	int id_len;
};

/* fd's build ID is the module's (or the module has none). */
static bool same_build(int fd, const struct want *want)
{
	const void *id;
	ssize_t n;
	Elf *elf;
	bool same;

	if (want->id_len <= 0)
		return true;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	same = n == want->id_len && !memcmp(id, want->id, (size_t)n);
	if (elf)
		elf_end(elf);
	return same;
}

/* a + b + c as one path; false when it does not fit. */
static bool join(char *buf, size_t len, const char *a, const char *b,
		 const char *c)
{
	int n = snprintf(buf, len, "%s%s%s", a, b, c);

	return n >= 0 && (size_t)n < len;
}

static int try_path(const char *path, unsigned int flags,
		    const struct want *want, char **found)
{
	int fd;

	if (!path || targetfile__open(path, flags, &fd))
		return -1;
	if (!same_build(fd, want) || !(*found = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The directory part of path ("" for none), in buf. */
static const char *dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "%.*s", slash ? (int)(slash - path) : 0, path);
	return buf;
}

/* Each directory of dirs, as given (empty ones too). */
static int for_each_dir(const char *dirs, int (*fn)(const char *dir, void *ctx),
			void *ctx)
{
	for (const char *at = dirs;;) {
		const char *end = strchrnul(at, ':');
		char dir[PATH_MAX];
		int fd;

		snprintf(dir, sizeof(dir), "%.*s", (int)(end - at), at);
		fd = fn(dir, ctx);
		if (fd >= 0 || !*end)
			return fd;
		at = end + 1;
	}
}

struct search {
	struct want want;
	const char *file_dir;	/* of the opened path */
	const char *mod_dir;	/* of the target's own path */
	const char *debuglink;
	char **found;
};

static int by_build_id(const char *dir, void *ctx)
{
	struct search *s = ctx;
	char path[PATH_MAX], hex[2 * 64 + 1];
	int n = s->want.id_len < 64 ? s->want.id_len : 64;

	if (dir[0] != '/' || n < 2)
		return -1;
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", s->want.id[i]);
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir,
		     hex, hex + 2) >= (int)sizeof(path))
		return -1;
	return try_path(path, TARGETFILE_LINKS, &s->want, s->found);
}

static int by_link(const char *dir, void *ctx)
{
	struct search *s = ctx;
	char path[PATH_MAX];

	char sub[PATH_MAX];
	int fd;

	if (!dir[0])
		return try_path(join(path, sizeof(path), s->file_dir, "/",
				     s->debuglink) ? path : NULL,
				0, &s->want, s->found);
	if (dir[0] != '/')
		return try_path(join(sub, sizeof(sub), s->file_dir, "/", dir) &&
				join(path, sizeof(path), sub, "/", s->debuglink)
				? path : NULL, 0, &s->want, s->found);
	/* Debug directories belong to root: their links are followed. */
	fd = try_path(join(sub, sizeof(sub), dir, s->mod_dir, "/") &&
		      join(path, sizeof(path), sub, "", s->debuglink) ? path : NULL,
		      TARGETFILE_LINKS, &s->want, s->found);
	if (fd >= 0)
		return fd;
	return try_path(join(path, sizeof(path), dir, "/", s->debuglink)
			? path : NULL, TARGETFILE_LINKS, &s->want, s->found);
}

int debugfind__open(Dwfl_Module *mod, const char *dirs, const char *modname,
		    const char *file_name, const char *debuglink, char **found)
{
	char file_dir[PATH_MAX], mod_dir[PATH_MAX];
	struct search s = {
		.file_dir = dir_of(file_name ? file_name : "", file_dir,
				   sizeof(file_dir)),
		.mod_dir = dir_of(modname && modname[0] == '/' ? modname : "",
				  mod_dir, sizeof(mod_dir)),
		.debuglink = debuglink,
		.found = found,
	};
	GElf_Addr vaddr;
	int fd;

	s.want.id_len = dwfl_module_build_id(mod, &s.want.id, &vaddr);
	fd = for_each_dir(dirs, by_build_id, &s);
	if (fd >= 0)
		return fd;
	if (!debuglink || !debuglink[0] || strchr(debuglink, '/'))
		return -1;
	return for_each_dir(dirs, by_link, &s);
}
