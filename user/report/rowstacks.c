// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "rowstacks.h"

static int rowstacks__push_pc(struct rowstacks *rs, struct symbolizer *sym,
			      uint64_t pc, bool is_return_address)
{
	struct rowstacks_pc *p;
	int err;

	if (array__grow(&rs->pcs, &rs->pcs_cap, rs->n_pcs + 1, sizeof(*rs->pcs)))
		return -ENOMEM;
	p = &rs->pcs[rs->n_pcs++];
	p->pc = pc;
	p->is_return_address = is_return_address;
	/* Unnamed (no module maps it) is still a frame: its address. */
	err = symbolizer__frames(sym, pc, is_return_address, &p->frames,
				 &p->n_frames);
	return err == -ENOMEM ? err : 0;
}

/*
 * A stack made of the pcs pushed since index first.  Stacks take the pcs
 * in order, so their pointers are set once all are pushed.
 */
static int rowstacks__push_stack(struct rowstacks *rs,
				 const struct rowstacks_stack *stack,
				 size_t first)
{
	if (array__grow(&rs->stacks, &rs->stacks_cap, rs->n_stacks + 1,
			sizeof(*rs->stacks)))
		return -ENOMEM;
	rs->stacks[rs->n_stacks] = *stack;
	rs->stacks[rs->n_stacks].n_pcs = rs->n_pcs - first;
	rs->n_stacks++;
	return 0;
}

int rowstacks__name(struct rowstacks *rs, struct symbolizer *sym,
		    const struct stacktab *tab, const struct report_row *row)
{
	struct rowstacks_stack rest = {
		.count = row->count,
		.wait_ns = row->wait_ns,
		.failed = row->failed,
		.end = STACKTAB_END_COMPLETE,
	};
	const struct rowstacks_pc *next;
	uint64_t stacks_max = 0;
	int err = 0;

	rs->n_stacks = rs->n_pcs = 0;
	for (size_t i = 0; i < row->n_stacks && !err; i++) {
		const struct report_stack *in = &row->stacks[i];
		struct rowstacks_stack out = {
			.stack_id = in->stack_id,
			.count = in->count,
			.wait_ns = in->wait_ns,
			.max_ns = in->max_ns,
			.failed = in->failed,
		};
		const uint64_t *frames;
		size_t first = rs->n_pcs;
		uint32_t n;

		if (!tab || stacktab__get(tab, in->stack_id, &frames, &n,
					  &out.end) || !n)
			continue;	/* not known: counted with the rest */
		/* Every frame is a return address, the first one too: the
		   call into libc (or into a --skip function). */
		for (uint32_t j = 0; j < n && !err; j++)
			err = rowstacks__push_pc(rs, sym, frames[j], true);
		if (!err)
			err = rowstacks__push_stack(rs, &out, first);
		rest.count -= in->count < rest.count ? in->count : rest.count;
		rest.wait_ns -= in->wait_ns < rest.wait_ns ? in->wait_ns
							   : rest.wait_ns;
		rest.failed -= in->failed < rest.failed ? in->failed : rest.failed;
		if (in->max_ns > stacks_max)
			stacks_max = in->max_ns;
	}
	/* The waits without a known stack: at the row's call site. */
	if (!err && (!rs->n_stacks || rest.count || rest.wait_ns || rest.failed)) {
		size_t first = rs->n_pcs;

		rest.max_ns = !rs->n_stacks || row->max_ns > stacks_max
			      ? row->max_ns : 0;
		err = rowstacks__push_pc(rs, sym, row->callsite, true);
		if (!err)
			err = rowstacks__push_stack(rs, &rest, first);
	}
	if (err) {
		rs->n_stacks = rs->n_pcs = 0;
		return err;
	}
	next = rs->pcs;
	for (size_t i = 0; i < rs->n_stacks; i++) {
		rs->stacks[i].pcs = next;
		next += rs->stacks[i].n_pcs;
	}
	return 0;
}

void rowstacks__release(struct rowstacks *rs)
{
	free(rs->stacks);
	free(rs->pcs);
	*rs = (struct rowstacks){ 0 };
}
