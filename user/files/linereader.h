/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text files read line by line: /proc/PID/maps and status, a recording's
 * metadata and names, os-release; and the one-line files of /proc (stat,
 * comm, schedstat) read whole.
 *
 * One reader, so that each caller handles its lines and none keeps
 * getline's buffer, strips a line's '\n', or tells a file's end from a
 * read cut short on its own: a /proc file whose process ends mid-read
 * must give an error, never a silently shorter list.  Chosen: getline
 * under an iterator (any line length: a maps line's path may be
 * PATH_MAX long; a recording's header line is read as any other).
 * Rejected: fgets into fixed buffers (a long line comes back as two),
 * and a callback per line (every caller would need a context struct for
 * what its loop now keeps in locals).
 */
#ifndef SYNCPROF_LINEREADER_H
#define SYNCPROF_LINEREADER_H

#include <stddef.h>
#include <stdio.h>

struct linereader;

/* path opened for reading (O_CLOEXEC); -errno when it cannot be. */
int linereader__open(const char *path, struct linereader **out);
/* The lines of an open stream; linereader__close leaves it open. */
int linereader__stream(FILE *stream, struct linereader **out);

/*
 * The next line, without its '\n', writable until the next call; NULL
 * at the end or when the read fails (linereader__close tells which).
 * *len (may be NULL): its length (a line may hold a NUL byte).
 */
char *linereader__next(struct linereader *r, size_t *len);

/* Frees r: 0, or -EIO when a read failed (the end was not the file's). */
int linereader__close(struct linereader *r);

/*
 * A small file whole, for /proc's one-line files: up to len - 1 bytes
 * in buf, NUL-terminated, a final '\n' dropped; its length, or -errno
 * (-ENOENT for a file that reads empty: a /proc file of a thread that
 * has just ended).  Read whole, not to its first '\n': a thread's name,
 * inside /proc/PID/stat's parentheses, may hold one.
 */
int linereader__small(const char *path, char *buf, size_t len);

#endif
