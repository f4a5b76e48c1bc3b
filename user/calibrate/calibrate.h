/* SPDX-License-Identifier: GPL-2.0 */
/* The probes' own time inside each measured call, measured at startup. */
#ifndef SYNCPROF_CALIBRATE_H
#define SYNCPROF_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "syncprof.h"

/* Calls per sample, each on a mutex of its own: one interval each. */
#define CALIBRATE_CALLS 101
/* Samples per kind of site at most, until one is stable. */
#define CALIBRATE_TRIES 3

/* One sample's single-call intervals. */
struct calibrate_sample {
	unsigned int calls;
	uint64_t min_ns;
	uint64_t quartile_ns;	/* the lower quartile: the figure */
	uint64_t median_ns;
	uint64_t max_ns;
	bool stable;		/* the quartile is close to the fastest call */
};

struct calibration {
	uint64_t ns;		/* at pthread_mutex_lock's own site */
	/* What to subtract per kind of probed instruction. */
	uint64_t by_site[SP_SITE__COUNT];
	bool measured[SP_SITE__COUNT];	/* else the smaller measured figure */
	struct calibrate_sample sample[SP_SITE__COUNT];
	unsigned int calls;	/* per sample */
	bool unstable;		/* a figure is a fastest call, or capped */
	bool inverted;		/* single-stepped read below emulated */
};

/*
 * Times uncontended pthread_mutex_lock calls of a child process through
 * probes placed as the real ones will be, and at the first instruction;
 * 0 or -errno.
 */
int calibrate__run(bool probe_at_entry, struct calibration *out);
/*
 * calibrate__run in a thread of its own, started now (the caller loads
 * the real programs meanwhile); 0 or -errno (no thread: nothing runs).
 */
struct calibrate_run;
int calibrate__start(bool probe_at_entry, struct calibrate_run **out);
/* Waits for it to end, and frees it: calibrate__run's result. */
int calibrate__join(struct calibrate_run *run, struct calibration *out);
/* The median of n values (sorts them). */
uint64_t calibrate__median(uint64_t *values, unsigned int n);
/* Sorts n single-call intervals and sums them up in *out. */
void calibrate__summarize(uint64_t *intervals, unsigned int n,
			  struct calibrate_sample *out);
/*
 * From the samples to the figures: a stable sample's quartile, else its
 * fastest call; emulated capped at single-stepped; a kind not measured
 * gets the smaller figure.
 */
void calibrate__settle(struct calibration *cal);

#endif
