/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --why in a profile: a row's stacks split by the roots of their chains.
 * Each stack's sample becomes one part per root, valued with the wait
 * charged to that root, and a remainder no root was charged with, so the
 * parts of a stack add up to the stack exactly (rootsplit.c says how).
 */
#ifndef SYNCPROF_ROOTSPLIT_H
#define SYNCPROF_ROOTSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "rowstacks.h"
#include "whyrows.h"

/* One part of a stack's sample. */
struct rootsplit_part {
	const struct why_root *root;	/* NULL: the remainder */
	uint64_t count;		/* the stack's count, in the parts' shares
				   of its wait */
	uint64_t ns;
};

/*
 * The roots of each of rs's stacks (rs named row's): (*out)[i] for
 * rs->stacks[i]; freed with rootsplit__stacks_free(*out, rs->n_stacks).
 * 0 or -ENOMEM.
 */
int rootsplit__stacks(const struct why *w, const struct report_row *row,
		      const struct report_settings *settings,
		      const struct rowstacks *rs, struct why_row **out);
void rootsplit__stacks_free(struct why_row *roots, size_t n);
/*
 * A stack of count waits and wait_ns, split by roots into *parts (grown
 * as needed; *cap its room): the roots' parts in their order, then the
 * remainder; parts of neither count nor wait left out.  The parts' ns
 * add up to wait_ns and their counts to count.  0 or -ENOMEM.
 */
int rootsplit__parts(const struct why_row *roots, uint64_t count,
		     uint64_t wait_ns, struct rootsplit_part **parts,
		     size_t *n, size_t *cap);

#endif
