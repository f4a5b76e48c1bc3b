/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's first question about a lock: can its holds reach the
 * progress at all?  From the hold phase: the threads that held it, the
 * threads that made progress, and who woke whom among the experiment's
 * processes.
 */
#ifndef SYNCPROF_WAKEREACH_H
#define SYNCPROF_WAKEREACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "whatifbpf.h"

struct wakereach_graph {
	const uint32_t *holders;
	size_t n_holders;
	const uint32_t *progress;	/* threads that made progress */
	size_t n_progress;
	const struct whatif_wake *wakes;
	size_t n_wakes;
};

/*
 * Sets *reached when a holder made progress, or woke a thread that made
 * progress, or woke a thread that woke one, and so on.  -ENOMEM.
 */
int wakereach__judge(const struct wakereach_graph *g, bool *reached);

#endif
