/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One module build's unwind rows as the kernel walks them: the rows of
 * its CFI (cfitable), with the ranges of --skip functions marked, and
 * whether its code without rows is walked by frame pointer.
 */
#ifndef SYNCPROF_MODTABLE_H
#define SYNCPROF_MODTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "cfitable.h"
#include "elfimage.h"
#include "skiplist.h"
#include "unwind.h"

struct modtable;

/*
 * Reads the image's CFI and marks the functions skip names (may be
 * NULL).  A module whose CFI covers less than a quarter of its own
 * functions (none: built with -fno-asynchronous-unwind-tables) is walked
 * by frame pointer where it has no row.  -ENOEXEC / -EOPNOTSUPP: not an x86-64 ELF file.
 */
int modtable__build(struct elfimage *image, const struct skiplist *skip,
		    struct modtable **out);
void modtable__free(struct modtable *t);
/* Sorted by start, disjoint; NULL when there are none. */
const struct sp_unwind_row *modtable__rows(const struct modtable *t,
					   size_t *n);
bool modtable__frame_pointers(const struct modtable *t);
/* How many skipped functions the module has (merged ranges)... */
size_t modtable__skipped(const struct modtable *t);
/* ...and how many of them a --skip glob named. */
size_t modtable__user_skipped(const struct modtable *t);

/*
 * rows (sorted, disjoint) with every address inside ranges (sorted,
 * disjoint) marked with the range's attributes, rows split at the ranges'
 * edges.
 * With fp, the parts of ranges that no row covers get a frame-pointer
 * row, marked too.  *out is malloc'ed.
 */
int modtable__mark(const struct sp_unwind_row *rows, size_t n,
		   const struct skiplist_range *ranges, size_t n_ranges,
		   bool fp, struct sp_unwind_row **out, size_t *n_out);

#endif
