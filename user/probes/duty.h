/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --duty: full mode's uprobes attached for a slice of each period only,
 * and what the reports need to scale what the slices saw.
 */
#ifndef SYNCPROF_DUTY_H
#define SYNCPROF_DUTY_H

#include <stdint.h>

struct duty;
struct probes;

/* The cycle so far, at one instant. */
struct duty_times {
	unsigned int pct;	/* asked */
	uint64_t on_ns;		/* the probes attached, since the start */
	uint64_t off_ns;	/* detached */
	uint64_t switches;	/* times detached */
	uint64_t switch_ns;	/* the entry links' closes, summed: calls
				   entering during one still count */
	uint64_t cut;		/* calls and holds in progress at a switch
				   off whose end was not seen: not counted */
};

/*
 * Starts cycling p's full-mode probes (attached now, live since
 * probes__live_ns): on for pct% of each period_ns.  -EOPNOTSUPP (said)
 * where they are not one uprobe_multi link pair.
 */
int duty__new(struct probes *p, unsigned int pct, uint64_t period_ns,
	      struct duty **out);
/* A timer descriptor, readable when a switch is due. */
int duty__fd(const struct duty *d);
/* Makes the switches due: detaches or attaches the probes. */
int duty__tick(struct duty *d);
void duty__times(const struct duty *d, uint64_t now_ns, struct duty_times *out);
/*
 * What the counts seen up to now_ns are multiplied by, as num / den:
 * the time since the start over the time attached.
 */
void duty__factor(const struct duty *d, uint64_t now_ns, uint64_t *num,
		  uint64_t *den);
/* Stops cycling; the probes stay as they are. */
void duty__free(struct duty *d);

#endif
