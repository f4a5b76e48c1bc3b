/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What contended mode needs to know about the target's libc: its unwind
 * rows, which code implements which lock (to classify a blocking wait by
 * its outermost libc frame), and where that code is mapped in the target.
 */
#ifndef SYNCPROF_LIBCMODEL_H
#define SYNCPROF_LIBCMODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfitable.h"
#include "syncprof.h"

struct libcmodel;

/* Where the library's code is in one process. */
struct libcmodel_placement {
	uint64_t bias;		/* runtime address - file virtual address */
	uint64_t text_start;	/* runtime [start, end) of its code */
	uint64_t text_end;
};

/* The lock a public libc function implements, by name; SP_FUNC_OTHER if none. */
enum sp_func_class libcmodel__classify(const char *name);

/*
 * Reads the library at path: unwind rows from its CFI, the classified
 * functions from .dynsym plus the internal functions they tail-call
 * (jmp to another FDE), and __lll_lock_wait_private.
 */
int libcmodel__build(const char *path, struct libcmodel **out);
void libcmodel__free(struct libcmodel *m);

const struct sp_unwind_row *libcmodel__rows(const struct libcmodel *m,
					    size_t *n);
/* Sorted by start, disjoint. */
const struct sp_func_range *libcmodel__funcs(const struct libcmodel *m,
					     size_t *n);
/* __lll_lock_wait_private's file-relative range; -ENOENT if unknown. */
int libcmodel__lll_private(const struct libcmodel *m,
			   struct cfitable_range *range);
/* The class of the code at a file-relative address. */
enum sp_func_class libcmodel__class_at(const struct libcmodel *m,
				       uint64_t addr);
/*
 * Where PID maps the file at path (the same device and inode); -ENOENT if
 * it maps no code of it.
 */
int libcmodel__place(const struct libcmodel *m, pid_t pid, const char *path,
		     struct libcmodel_placement *out);

/*
 * Sorts ranges, drops duplicates (aliases of one function), and resolves
 * overlaps in favour of the earlier range; returns the new count.
 */
size_t libcmodel__normalize(struct sp_func_range *ranges, size_t n);

#endif
