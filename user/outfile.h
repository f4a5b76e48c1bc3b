/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every file syncprof writes (-o, --states-csv, --chrome, --record's
 * files, profiles) is made here, so that nothing another user plants at
 * its name (a symbolic link, a hard link, a FIFO) is written through:
 *
 *   - a file is made with openat(dirfd, O_CREAT | O_EXCL | O_NOFOLLOW)
 *     under a fresh temporary name in its directory, then renamed over
 *     its name: rename replaces a link planted there, never its target;
 *   - OUTFILE_GROWING (-o, --states-csv): renamed at once, so the file
 *     grows as reports are printed, as before;
 *     OUTFILE_WHOLE (--chrome, profiles, a recording's files kept
 *     current): renamed when complete, so a reader sees the old file or
 *     the new one, never half of one;
 *     OUTFILE_NEW (a recording's logs, in its own directory): made at its
 *     name with O_EXCL, and never replaced;
 *   - a path that names a stream (a FIFO, a socket, a character device:
 *     /dev/stdout, /dev/null, bash's >(...)) is opened and written as it
 *     is, when it and any link to it belong to the caller or root;
 *     a block device or a directory is refused;
 *   - a recording's directory (outdir) is made by syncprof, or is an
 *     empty directory of the caller's; anything else is refused, and
 *     syncprof never deletes a file it did not make.
 * Every error is printed with the file's name and errno's text ("No space
 * left on device"): writes go through a stream that keeps the first
 * write's errno, not stdio's ferror().
 */
#ifndef SYNCPROF_OUTFILE_H
#define SYNCPROF_OUTFILE_H

#include <stdio.h>

struct outfile;
struct outdir;

enum outfile_kind {
	OUTFILE_GROWING,	/* in place at once, written as it grows */
	OUTFILE_WHOLE,		/* in place when closed, complete */
	OUTFILE_NEW,		/* a new name in an outdir; never replaces */
	OUTFILE_APPEND,		/* one made as OUTFILE_NEW, opened again */
};

/*
 * Opens a file for writing: path is the user's (dir NULL) or a name in
 * dir.  Errors are printed.  0 or -errno.
 */
int outfile__open(struct outdir *dir, const char *path,
		  enum outfile_kind kind, struct outfile **out);
/* The stream to write to (buffered; its errors are kept, see close). */
FILE *outfile__stream(struct outfile *f);
/* The file's descriptor, for write()/pread() (OUTFILE_NEW logs). */
int outfile__fd(struct outfile *f);
/* The file's name as the user gave it (with its directory's). */
const char *outfile__path(const struct outfile *f);
/* Flushes the stream; the first error of any write, printed once. */
int outfile__flush(struct outfile *f);
/*
 * OUTFILE_WHOLE: puts what was written so far in place, and starts the
 * next version of the file on the same stream (a profile per report;
 * the last complete one stays at the name).  Others: a flush.
 */
int outfile__commit(struct outfile *f);
/*
 * Flushes, closes and (OUTFILE_WHOLE) puts the file in place; frees.
 * Returns the first error of any write, printed with the name.  NULL: 0.
 */
int outfile__close(struct outfile *f);
/* Closes and, when the file was never put in place, removes it. */
void outfile__discard(struct outfile *f);

/*
 * A recording's directory: made (mode 0755) when path does not exist;
 * else it must be a directory owned by the caller and empty.  Errors are
 * printed.  0 or -errno (-ENOTEMPTY, -EPERM: refused).
 */
int outdir__make(const char *path, struct outdir **out);
/* The directory's descriptor (reads of it go through this too). */
int outdir__fd(const struct outdir *d);
const char *outdir__path(const struct outdir *d);
/*
 * From now on the write errors of the directory's files (open ones too)
 * are returned, not printed: its owner says them, once.
 */
void outdir__quiet(struct outdir *d);
void outdir__free(struct outdir *d);

/*
 * The width of the terminal stream writes to, in columns; 0 when it is
 * not a terminal (a pipe, a file: no limit).
 */
int outfile__terminal_cols(FILE *stream);

#endif
