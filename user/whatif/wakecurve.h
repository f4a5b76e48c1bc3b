/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's handoffs: the lock's waiters' wake-up latency against how
 * long their CPU had been idle (a curve from the target's own wake-ups
 * in the hold phase), and how far its handoffs move along it when the
 * holds are shorter, beyond what the delays' straight line already
 * says (wakecurve.c).
 */
#ifndef SYNCPROF_WAKECURVE_H
#define SYNCPROF_WAKECURVE_H

#include <stdbool.h>
#include <stddef.h>

#include "whatifbpf.h"

#define WAKECURVE_BINS	WHATIF_WAKE_BINS

/* Sums over one bin (whatifbpf.h's bins: by the CPU's idle). */
struct wakecurve_bin {
	double count;
	double idle_ns;
	double lat_ns;
	double handoff_ns;
};

/* What the hold phase measured. */
struct wakecurve {
	struct wakecurve_bin wakes[WAKECURVE_BINS];	/* every waiter's */
	struct wakecurve_bin handoffs[WAKECURVE_BINS];	/* woken handoffs' */
	double n_handoffs;		/* all handoffs */
	double handoff_ns;		/* their sum */
};

/* A point of the curve: the mean of its wake-ups. */
struct wakecurve_point {
	double idle;		/* ns the CPU was idle before */
	double lat;		/* ns woken -> on the CPU */
	double wakes;
};

/* The handoffs with the holds shorter. */
struct wakecurve_shift {
	bool known;		/* a curve of two points or more */
	double handoff_ns;	/* mean handoff now */
	double after_ns;	/* predicted, the whole move along the curve */
	/* Per handoff, the part of the move the delays' straight line
	   does not hold (what the slope misses); may be negative. */
	double extra_ns;
	double woken_share;	/* handoffs whose waiter was woken */
	double wakes;		/* the waiters' wake-ups */
	double busy_share;	/* of them, those whose CPU was busy */
	/* Of the woken handoffs, those whose idle, shortened, falls below
	   the curve: left as they are. */
	double below_share;
};

/* The curve's points in order of idle (bins merged until each has
   enough wake-ups); their number. */
size_t wakecurve__points(const struct wakecurve *c,
			 struct wakecurve_point p[WAKECURVE_BINS]);

/*
 * The mean wake-up latency after idle_ns of idle, along the curve
 * (linear between its points, flat past its ends); NAN: no curve.
 */
double wakecurve__at(const struct wakecurve *c, double idle_ns);

/*
 * The handoffs with holds `shorter` shorter: every idle before a woken
 * handoff shrinks by shorter x held (held: the share of the time the
 * lock is held, the part of an idle that is holds), and the delays
 * (fractions of the hold) lengthened it by delay x held; the straight
 * line through those is what the slope already holds.
 */
void wakecurve__shift(const struct wakecurve *c, double held, double shorter,
		      const double *delays, size_t n_delays,
		      struct wakecurve_shift *out);

#endif
