// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a lock's holds can reach the progress, before its slope is
 * believed.  A lock can bound progress only through the threads that
 * make it: they hold it themselves, or they wait for something a holder
 * does (a release, a signal, a post), directly or through other threads
 * in between.  Every such wait ends in a wakeup, so a path of wakeups
 * from a holder to a thread that made progress is what "needed" means
 * here.  A lock with none (threads that only wake each other, making
 * nothing any progress thread waits for) can change progress only
 * through the CPU its holds take.
 *
 * Chosen over the slope alone: the delay that lengthens a hold spins on
 * a CPU, and beside load that CPU is taken from the progress threads,
 * so a lock no progress needs read a slope worth 1% to 11% of gain.  A
 * placebo that spent the same CPU elsewhere cancelled that, and also
 * lowered the slope of the lock that bounds progress, whose holder's
 * CPU the delay does not take from anyone waiting.
 *
 * What it cannot see: a thread that polls a flag (no wakeup), or a
 * dependency that took no wakeup while the hold phase ran.  Wakeups
 * from interrupts name the task interrupted: edges too many, which only
 * make a lock look needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sortorder.h"
#include "wakereach.h"

/* The index of tid among the sorted distinct threads. */
static size_t index_of(const uint32_t *tids, size_t n, uint32_t tid)
{
	const uint32_t *at = bsearch(&tid, tids, n, sizeof(*tids),
				     order__u32_at);

	return (size_t)(at - tids);
}

int wakereach__judge(const struct wakereach_graph *g, bool *reached)
{
	size_t n = g->n_holders + g->n_progress + 2 * g->n_wakes, k = 0;
	uint32_t *tids = malloc((n ? n : 1) * sizeof(*tids));
	bool *seen = calloc(n ? n : 1, sizeof(*seen));
	bool grew = true;

	*reached = false;
	if (!tids || !seen) {
		free(tids);
		free(seen);
		return -ENOMEM;
	}
	memcpy(tids, g->holders, g->n_holders * sizeof(*tids));
	k = g->n_holders;
	memcpy(tids + k, g->progress, g->n_progress * sizeof(*tids));
	k += g->n_progress;
	for (size_t i = 0; i < g->n_wakes; i++) {
		tids[k++] = g->wakes[i].waker;
		tids[k++] = g->wakes[i].wakee;
	}
	qsort(tids, n, sizeof(*tids), order__u32_at);
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	for (size_t i = 0; i < g->n_holders; i++)
		seen[index_of(tids, k, g->holders[i])] = true;
	/* Each pass follows every edge once: as many passes as the longest
	   chain of wakeups, over at most the maps' WHATIF_MAX_WAKES. */
	while (grew) {
		grew = false;
		for (size_t i = 0; i < g->n_wakes; i++) {
			size_t from = index_of(tids, k, g->wakes[i].waker);
			size_t to = index_of(tids, k, g->wakes[i].wakee);

			if (seen[from] && !seen[to])
				seen[to] = grew = true;
		}
	}
	for (size_t i = 0; i < g->n_progress && !*reached; i++)
		*reached = seen[index_of(tids, k, g->progress[i])];
	free(tids);
	free(seen);
	return 0;
}
