/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a row of waits counts, and the one way two rows of it add up
 * (wait_stats__add): the snapshot's entries of one key when it seals,
 * the report's rows of one group, the windows a report merges.  A
 * struct that counts waits holds these fields as an anonymous member:
 *
 *	union {
 *		struct wait_stats stats;
 *		struct { WAIT_STATS_FIELDS };
 *	};
 *
 * so its users read e->count as before and the merge takes &e->stats.
 * Chosen over a struct member (e->stats.count at every use) so that a
 * field is added once, here, and every merge adds it.
 */
#ifndef SYNCPROF_WAITSTATS_H
#define SYNCPROF_WAITSTATS_H

#include <stdint.h>

#include "syncprof.h"

#define WAIT_STATS_FIELDS						\
	uint64_t count;							\
	uint64_t wait_ns;						\
	uint64_t failed;						\
	uint64_t failed_ns;	/* the part of wait_ns that failed */	\
	uint64_t futile;	/* futile wakeups (futile.bpf.h) */	\
	uint64_t max_ns;	/* since attach; in a delta: window */	\
	uint64_t window_max_ns;	/* in the window a snapshot closed */	\
	uint64_t hist[SP_HIST_SLOTS];	/* single waits, log2 */	\
	/* --hold: holds of the locks the row took, ended by unlock */	\
	uint64_t hold_count;						\
	uint64_t hold_ns;						\
	uint64_t hold_max_ns;		/* as max_ns */			\
	uint64_t hold_window_max_ns;	/* as window_max_ns */

struct wait_stats {
	WAIT_STATS_FIELDS
};

/* from's counts, times and histogram added to into's; maxima the larger. */
void wait_stats__add(struct wait_stats *into, const struct wait_stats *from);

#endif
