/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An x86-64 ELF file's call frame information as a sorted table of unwind
 * rows (struct sp_unwind_row, bpf/unwind.h), ready for a BPF array map.
 */
#ifndef SYNCPROF_CFITABLE_H
#define SYNCPROF_CFITABLE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

struct cfitable;

/* [start, end), file-relative virtual addresses. */
struct cfitable_range {
	uint64_t start;
	uint64_t end;
};

struct cfitable_stats {
	size_t rows;		/* rows in the table, after merging */
	size_t unsupported;	/* of which have SP_UNWIND_F_UNSUPPORTED */
	size_t fdes;		/* FDEs walked: .eh_frame, then .debug_frame */
	size_t debug_fdes;	/* of which from .debug_frame */
	size_t bad_fdes;	/* CFI entries skipped: not decodable */
};

/*
 * Builds the table for the code of an x86-64 ELF file (its executable
 * sections), from .eh_frame, and from .debug_frame where .eh_frame has no
 * FDE.  With n_ranges > 0 only addresses inside the union of ranges get
 * rows (e.g. one section, or a list of functions); ranges may overlap
 * and come in any order.  -ENOEXEC: not ELF; -EOPNOTSUPP: not an x86-64
 * executable or shared object; -ENOENT: no .eh_frame nor .debug_frame
 * section (a file without section headers has none); -EINVAL: libdw
 * cannot read .eh_frame; -errno from open().
 */
int cfitable__build(const char *path, const struct cfitable_range *ranges,
		    size_t n_ranges, struct cfitable **out);
/*
 * The same from an open ELF handle, which the caller keeps (a compressed
 * .debug_frame is decompressed in it).
 */
int cfitable__build_elf(Elf *elf, const struct cfitable_range *ranges,
			size_t n_ranges, struct cfitable **out);
void cfitable__free(struct cfitable *table);

/* The rows, sorted by start, disjoint; *n is their count. */
const struct sp_unwind_row *cfitable__rows(const struct cfitable *table,
					   size_t *n);
void cfitable__stats(const struct cfitable *table, struct cfitable_stats *st);
/* Sorts rows by start; an array already sorted is only checked. */
void cfitable__sort_rows(struct sp_unwind_row *rows, size_t n);
/*
 * The row whose [start, end) holds addr, or NULL: a binary search, as the
 * BPF side does it.  For a return address look up ra - 1.
 */
const struct sp_unwind_row *cfitable__lookup(const struct cfitable *table,
					     uint64_t addr);

/*
 * The code range of the .eh_frame FDE that covers addr: one function, or
 * one part of a split one (.cold).  -ENOENT if none does.
 */
int cfitable__function_at(const struct cfitable *table, uint64_t addr,
			  struct cfitable_range *range);

#endif
