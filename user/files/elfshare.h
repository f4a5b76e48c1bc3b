/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One open file and one libelf handle per ELF file, whichever followed
 * processes map it: files are known by identity (device, inode, size,
 * modification time), not by process.
 */
#ifndef SYNCPROF_ELFSHARE_H
#define SYNCPROF_ELFSHARE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfshare_file;

/* What the table holds now, and what it did (for /metrics). */
struct elfshare_stats {
	uint64_t files;		/* files known now */
	uint64_t open_files;	/* of which open (descriptors held) */
	uint64_t memory_bytes;	/* deleted files read into memory */
	uint64_t shared;	/* opens answered by a file known already */
};

/*
 * The file open at fd (taken over: closed when it is a file known
 * already, or on failure), one more user of it.  -ENOEXEC: not ELF.
 */
int elfshare__get(int fd, struct elfshare_file **out);
/* One user fewer; the last closes the file and ends the handle. */
void elfshare__put(struct elfshare_file *f);
/* A new reference to the file's handle (elf_end it), or NULL. */
Elf *elfshare__elf(struct elfshare_file *f);
/* Its size when it was opened. */
uint64_t elfshare__size(const struct elfshare_file *f);
/*
 * Whether the file is now shorter than when it was opened (sections
 * past its end read as missing).  *now: its size.
 */
bool elfshare__shrank(const struct elfshare_file *f, uint64_t *now);
/* A user's process maps the file now (delta 1), or no more (-1). */
void elfshare__mapped(struct elfshare_file *f, int delta);
/*
 * A file deleted on disk that no followed process maps any more is not
 * kept open: it is read into memory (at most max_bytes of such files in
 * all) and closed, so its disk space is freed.  0: not open any more
 * (or still mapped, or not deleted); -EFBIG: too large to keep, its
 * users must let it go.
 */
int elfshare__release_deleted(struct elfshare_file *f, uint64_t max_bytes);
void elfshare__stats(struct elfshare_stats *out);

#endif
