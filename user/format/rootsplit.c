// SPDX-License-Identifier: GPL-2.0
/*
 * --why's roots by stack, for the profile (see rootsplit.h).
 *
 * The programs key their charges by the waiter's stats key, and that key
 * holds the wait's stack: each stack a row names gets the roots of its
 * own waits, not a share of the row's.  The row's last stack (rowstacks'
 * waits without a known stack) gets the row's roots less those of the
 * named stacks, so the stacks' roots add up to the row's whatever the
 * stack table lost.
 *
 * A stack's parts: the roots' charges, and the rest as the remainder.
 * The stats and the charges are two maps read one after the other, so
 * during a run a stack's roots can exceed its wait by the waits that
 * ended between the reads; they are then scaled down to it.  Counts are
 * whole numbers and a wait is charged to several roots in part (its
 * holder slept, then ran): a part's count is the stack's count in the
 * part's share of the wait, rounded by largest remainders so the counts
 * still add up to the stack's.  Rejected: each root's own waits as its
 * count (a wait charged to three states would count three times, and
 * go tool pprof -sample_index=contentions would read three times the
 * waits the table shows).
 */
#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "rootsplit.h"

/* from -= sub, root by root (site, pid, state); emptied roots dropped. */
static void rootsplit__subtract(struct why_row *from,
				const struct why_row *sub)
{
	size_t kept = 0;

	for (size_t i = 0; i < sub->n_roots; i++) {
		const struct why_root *s = &sub->roots[i];

		for (size_t j = 0; j < from->n_roots; j++) {
			struct why_root *f = &from->roots[j];

			if (f->site != s->site || f->pid != s->pid ||
			    f->state != s->state)
				continue;
			f->ns -= s->ns < f->ns ? s->ns : f->ns;
			f->waits -= s->waits < f->waits ? s->waits : f->waits;
			break;
		}
	}
	for (size_t j = 0; j < from->n_roots; j++)
		if (from->roots[j].ns)
			from->roots[kept++] = from->roots[j];
	from->n_roots = kept;
}

void rootsplit__stacks_free(struct why_row *roots, size_t n)
{
	for (size_t i = 0; roots && i < n; i++)
		why__row_free(&roots[i]);
	free(roots);
}

int rootsplit__stacks(const struct why *w, const struct report_row *row,
		      const struct report_settings *settings,
		      const struct rowstacks *rs, struct why_row **out)
{
	struct why_row *roots = calloc(rs->n_stacks ? rs->n_stacks : 1,
				       sizeof(*roots));
	int err = roots ? 0 : -ENOMEM;

	/* Named stacks have their ids; the rest (id 0) is what is left. */
	for (size_t i = 0; !err && i < rs->n_stacks; i++)
		if (rs->stacks[i].stack_id)
			err = why__row_stack(w, row, settings,
					     rs->stacks[i].stack_id, &roots[i]);
	for (size_t i = 0; !err && i < rs->n_stacks; i++) {
		if (rs->stacks[i].stack_id)
			continue;
		err = why__row(w, row, settings, &roots[i]);
		for (size_t k = 0; !err && k < rs->n_stacks; k++)
			if (rs->stacks[k].stack_id)
				rootsplit__subtract(&roots[i], &roots[k]);
	}
	if (err) {
		rootsplit__stacks_free(roots, rs->n_stacks);
		return err;
	}
	*out = roots;
	return 0;
}

/*
 * out[i] = amount * weights[i] / sum(weights), rounded down, then one
 * more to the largest remainders (the first of equal ones) until the
 * outs add up to amount.  All weights 0: amount goes to the last.
 */
static int rootsplit__apportion(const uint64_t *weights, size_t n,
				uint64_t amount, uint64_t *out)
{
	unsigned __int128 sum = 0, *rem;
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++)
		sum += weights[i];
	if (!sum) {
		for (size_t i = 0; i < n; i++)
			out[i] = i + 1 == n ? amount : 0;
		return 0;
	}
	rem = calloc(n, sizeof(*rem));
	if (!rem)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 x = (unsigned __int128)amount * weights[i];

		out[i] = (uint64_t)(x / sum);
		rem[i] = x % sum;
		given += out[i];
	}
	for (; given < amount; given++) {
		size_t best = 0;

		for (size_t i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		out[best]++;
		rem[best] = 0;
	}
	free(rem);
	return 0;
}

int rootsplit__parts(const struct why_row *roots, uint64_t count,
		     uint64_t wait_ns, struct rootsplit_part **parts,
		     size_t *n, size_t *cap)
{
	size_t k = roots->n_roots + 1;	/* the remainder last */
	uint64_t *charged = calloc(k, sizeof(*charged));
	uint64_t *ns = calloc(k, sizeof(*ns));
	uint64_t *counts = calloc(k, sizeof(*counts));
	unsigned __int128 total = 0;
	int err = charged && ns && counts ? 0 : -ENOMEM;

	*n = 0;
	for (size_t i = 0; !err && i < roots->n_roots; i++) {
		charged[i] = roots->roots[i].ns;
		total += charged[i];
	}
	if (!err && total > wait_ns) {
		err = rootsplit__apportion(charged, k - 1, wait_ns, ns);
	} else if (!err) {
		for (size_t i = 0; i + 1 < k; i++)
			ns[i] = charged[i];
		ns[k - 1] = wait_ns - (uint64_t)total;
	}
	if (!err)
		err = rootsplit__apportion(ns, k, count, counts);
	if (!err)
		err = array__grow(parts, cap, k, sizeof(**parts));
	for (size_t i = 0; !err && i < k; i++) {
		if (!ns[i] && !counts[i])
			continue;
		(*parts)[(*n)++] = (struct rootsplit_part){
			.root = i + 1 < k ? &roots->roots[i] : NULL,
			.count = counts[i],
			.ns = ns[i],
		};
	}
	free(charged);
	free(ns);
	free(counts);
	return err;
}
