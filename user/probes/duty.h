/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --duty: full mode's uprobes sampling a window of each period only,
 * and what the reports need to scale what the windows saw.
 */
#ifndef SYNCPROF_DUTY_H
#define SYNCPROF_DUTY_H

#include <stdbool.h>
#include <stdint.h>

struct duty;
struct probes;
struct snapshot;

/* The cycle so far, at one instant. */
struct duty_times {
	unsigned int pct;	/* asked */
	uint64_t on_ns;		/* the windows open, since the start */
	uint64_t off_ns;	/* closed */
	uint64_t attached_ns;	/* the probes in place (what the target paid) */
	uint64_t switches;	/* times detached */
	uint64_t switch_ns;	/* the detaches and attaches, summed */
	uint64_t kept;		/* periods the probes stayed (switches too slow) */
	uint64_t cut;		/* calls and holds of a window whose end came
				   after their probes left: not counted */
};

/*
 * Starts cycling p's full-mode probes (attached now, live since
 * probes__live_ns) in a thread of its own: a window of pct% of each
 * period_ns.  -EOPNOTSUPP (said) where they are not one uprobe_multi
 * link pair.
 */
int duty__new(struct probes *p, unsigned int pct, uint64_t period_ns,
	      struct duty **out);
void duty__times(struct duty *d, uint64_t now_ns, struct duty_times *out);
/*
 * Scales rows counted from the last mark (since_start: from the start)
 * up to now_ns by that span's time over the windows' time in it, and
 * marks now_ns (mark) as the next span's start.  A span with under a
 * quarter of its share of window time (a live refresh shorter than a
 * period) takes the whole run's ratio.  d NULL: nothing.
 */
void duty__scale(struct duty *d, struct snapshot *rows, uint64_t now_ns,
		 bool since_start, bool mark);
/*
 * Holds the links still (no switch runs until duty__resume): false
 * when a switch is running now (try again later).  For what moves the
 * probes; a move that leaves them other than one uprobe_multi pair ends
 * the cycle, the probes on from then.
 */
bool duty__pause(struct duty *d);
void duty__resume(struct duty *d);
/* Stops the thread; the probes stay as they are, the window open. */
void duty__free(struct duty *d);

#endif
