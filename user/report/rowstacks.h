/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A report row's stacks, named: the one model the stack renderers read
 * (the table's -g, the live screen's stack pane, folded, pprof).  Each
 * distinct stack of the row is its pcs, innermost first, each pc with
 * its source frames (inlined calls expanded, see symbolizer__frames).
 * Waits the row counted without a stack (--stack-depth 0, or a stack
 * lost) get a stack of their own made of the row's call site, so the
 * stacks of a row always add up to the row.
 */
#ifndef SYNCPROF_ROWSTACKS_H
#define SYNCPROF_ROWSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stacktab.h"
#include "symbolizer.h"

/* One pc of a stack and its frames. */
struct rowstacks_pc {
	uint64_t pc;			/* as the stack holds it */
	bool is_return_address;		/* looked up at pc - 1: every pc of
					   a stack the kernel kept */
	const struct symbol_frame *frames;	/* innermost first, >= 1;
						   the symbolizer's */
	size_t n_frames;
};

struct rowstacks_stack {
	uint64_t stack_id;	/* 0: no stack kept: the row's call site
				   alone (end is COMPLETE then) */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t max_ns;	/* 0 if not known (part of a row) */
	uint64_t failed;
	const struct rowstacks_pc *pcs;	/* innermost first, >= 1 */
	size_t n_pcs;
	enum stacktab_end end;
};

/* Reused row after row: zero it once, release it at the end. */
struct rowstacks {
	struct rowstacks_stack *stacks;	/* the row's order: largest wait
					   first, the call-site stack last */
	size_t n_stacks;
	/* storage */
	size_t stacks_cap;
	struct rowstacks_pc *pcs;
	size_t n_pcs, pcs_cap;
};

/*
 * Names row's stacks into rs (what it held before is dropped).  tab may
 * be NULL (no stacks kept: the call-site stack only).  0 or -ENOMEM.
 */
int rowstacks__name(struct rowstacks *rs, struct symbolizer *sym,
		    const struct stacktab *tab, const struct report_row *row);
void rowstacks__release(struct rowstacks *rs);

#endif
