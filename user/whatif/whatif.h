/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's results: one entry per lock and per shortening, what the
 * table's "What if" section and JSON "what_if" print (whatifout.h).
 */
#ifndef SYNCPROF_WHATIF_RESULTS_H
#define SYNCPROF_WHATIF_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolinfo.h"
#include "wakecurve.h"
#include "whatifmodel.h"

/* The shortenings predicted, as fractions of the mean hold. */
#define WHATIF_SHORTER_1	0.25
#define WHATIF_SHORTER_2	0.50

struct whatif_entry {
	uint64_t object;
	char *object_name;		/* owned; NULL: none */
	uint64_t site;			/* the holders' lock call: return address */
	struct symbol_info site_info;	/* the symbolizer's strings */
	double shorter;			/* 0.25, 0.5 */
	struct whatif_prediction p;
	/* The queue's cross-check (whatifmodel__queue); NAN: none */
	double queue_pct;
	unsigned int holders;		/* threads that held it */
	uint64_t hold_ns;		/* mean hold measured */
	uint64_t hold_cpu_ns;		/* the part of it on a CPU */
	uint64_t probe_ns;		/* the probes' part taken off it */
	double hold_cpu_share;		/* of the target's CPU; 0: unknown */
	/* CPUs the target used and could have, reference windows; 0:
	   unknown */
	double cpus_used, cpus_could;
	double base_rate;		/* progress/s without delay */
	double delayed_rate;		/* during the delayed windows */
	double after_rate;		/* the last window, delay off */
	uint64_t injected_ns;		/* delay injected */
	uint64_t budget_ns;		/* the most it could (its plan's) */
	unsigned int windows;		/* the windows run */
	double experiment_s;		/* the lock's experiment, in all */
	double stolen;			/* the host's share of the busy time */
	enum whatif_reach reach;	/* its holders and the progress */
	/* The handoffs (hold phase, wakecurve.c): mean now, predicted
	   with these holds, the share whose waiter was woken, and the
	   waiters' wake-up curve; handoff_ns 0: none timed */
	double handoff_ns;
	double handoff_after_ns;
	double handoff_woken;
	double wakes, wakes_busy;	/* the waiters' wake-ups; the share
					   whose CPU was busy (no idle) */
	double handoff_below;		/* woken handoffs shortened below
					   the curve: not moved */
	/* The points of the lock's gain their move past the slope's line
	   would add (whatifmodel.h's handoff_pct; not in p) */
	double handoff_pct;
	/* The share of a unit's time in handoffs woken on an idle CPU
	   (whatifmodel.h's handoff_idle) */
	double handoff_idle;
	struct wakecurve_point curve[WAKECURVE_BINS];
	size_t n_curve;
};

struct whatif {
	struct whatif_entry *entries;
	size_t n, cap;
	char *progress;			/* the measure of progress, named */
};

/* Appends a copy of e (its object_name becomes the results'). */
int whatif__add(struct whatif *w, const struct whatif_entry *e);
void whatif__free(struct whatif *w);

#endif
