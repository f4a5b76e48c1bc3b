/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files the target controls: its /tmp/perf-PID.map, the ELF files it
 * maps, their debug links, anything under /proc/PID/root.  Every reader
 * of such a file opens it here, so that no file a target (or another
 * local user) plants can hang syncprof, exhaust its memory, or make root
 * read what the target itself cannot:
 *   - only regular files are opened (a FIFO, /dev/zero, a tape drive are
 *     looked at, never opened), and none on a FUSE file system;
 *   - a symbolic link as the last component is refused, unless the
 *     caller allows it; under /proc/PID/root every link resolves inside
 *     the target's root, as the target sees it;
 *   - reads are bounded in size, and every call in time: a file system
 *     that never answers costs 1 s once, 100 ms after that; a read that
 *     goes on, however slowly, is given up to 20 s.
 * What is refused is said once per file on stderr, with the reason.
 */
#ifndef SYNCPROF_TARGETFILE_H
#define SYNCPROF_TARGETFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* The last component may be a symbolic link (a debug directory's). */
#define TARGETFILE_LINKS 0x1u

/* A file's identity and age: read again only when it changed. */
struct targetfile_stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uid_t uid;
};

struct targetfile_content {
	char *data;		/* malloc'ed, NUL-terminated; NULL: unchanged */
	size_t len;
	bool truncated;		/* the file is longer than what was read */
	struct targetfile_stamp stamp;
};

/* A read-only descriptor (O_CLOEXEC); 0 or -errno. */
int targetfile__open(const char *path, unsigned int flags, int *fd);
/* What targetfile__open would open, without opening it. */
int targetfile__stat(const char *path, unsigned int flags,
		     struct targetfile_stamp *stamp);
/*
 * Reads at most max bytes.  When prev is given and the file still has
 * its stamp, nothing is read (out->data NULL).  0 or -errno.
 */
int targetfile__read(const char *path, unsigned int flags, size_t max,
		     const struct targetfile_stamp *prev,
		     struct targetfile_content *out);
#endif
