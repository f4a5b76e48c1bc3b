// SPDX-License-Identifier: GPL-2.0
/*
 * cfitable: .eh_frame and .debug_frame of an x86-64 ELF file into the
 * unwind rows the BPF walker searches.
 *
 * Beyond memory safety, the table's promises: rows sorted, disjoint and
 * not empty; an unsupported row carries no half-rule; a lookup finds
 * each row at both its ends; with ranges, no row outside them.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfitable.h"

/* [start, end) lies in the union of ranges (any order, maybe touching). */
static bool covered(uint64_t start, uint64_t end,
		    const struct cfitable_range *ranges, size_t n_ranges)
{
	while (start < end) {
		size_t k;

		for (k = 0; k < n_ranges; k++)
			if (ranges[k].start <= start && start < ranges[k].end)
				break;
		if (k == n_ranges)
			return false;
		start = ranges[k].end;
	}
	return true;
}

static void check(const struct cfitable *table,
		  const struct cfitable_range *ranges, size_t n_ranges)
{
	const struct sp_unwind_row *rows;
	struct cfitable_range fn;
	size_t n;

	rows = cfitable__rows(table, &n);
	for (size_t i = 0; i < n; i++) {
		const struct sp_unwind_row *r = &rows[i];

		if (r->start >= r->end || (i && rows[i - 1].end > r->start))
			abort();
		if ((r->flags & SP_UNWIND_F_UNSUPPORTED) &&
		    (r->cfa_reg != SP_UNWIND_CFA_NONE || r->cfa_offset ||
		     r->rbp_rule != SP_UNWIND_RBP_SAME || r->rbp_offset))
			abort();
		if (!(r->flags & SP_UNWIND_F_UNSUPPORTED) &&
		    r->cfa_reg == SP_UNWIND_CFA_NONE)
			abort();
		if (cfitable__lookup(table, r->start) != r ||
		    cfitable__lookup(table, r->end - 1) != r)
			abort();
		if (n_ranges && !covered(r->start, r->end, ranges, n_ranges))
			abort();
		if (!cfitable__function_at(table, r->start, &fn) &&
		    (r->start < fn.start || r->start >= fn.end))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfitable_range ranges[3];
	struct cfitable *table;
	const struct sp_unwind_row *rows;
	char *copy;
	size_t n;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE || !size)
		return 0;
	/* libelf may decompress sections in place: its own copy. */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (elf && !cfitable__build_elf(elf, NULL, 0, &table)) {
		check(table, NULL, 0);
		/* Again within the first row, the middle of the last, and
		 * an empty range, in no order. */
		rows = cfitable__rows(table, &n);
		if (n) {
			ranges[0] = (struct cfitable_range){
				rows[n - 1].start + (rows[n - 1].end - rows[n - 1].start) / 2,
				rows[n - 1].end };
			ranges[1] = (struct cfitable_range){ rows[0].start, rows[0].end };
			ranges[2] = (struct cfitable_range){ rows[0].end, rows[0].start };
			cfitable__free(table);
			if (!cfitable__build_elf(elf, ranges, 3, &table)) {
				/* An empty range holds nothing. */
				check(table, ranges, 2);
				cfitable__free(table);
			}
		} else {
			cfitable__free(table);
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
