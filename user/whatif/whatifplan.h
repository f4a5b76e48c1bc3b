/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's plan for one lock's experiment, from its hold phase: how
 * long each window is, how many rounds of windows, the two delays per
 * hold, and the delay budget the BPF program enforces.  Arithmetic only
 * (experiment.c runs the plan).
 */
#ifndef SYNCPROF_WHATIFPLAN_H
#define SYNCPROF_WHATIFPLAN_H

/* Rounds of four windows (reference, +25%, reference, +50%). */
#define WHATIFPLAN_ROUNDS_MAX	16
#define WHATIFPLAN_ROUNDS_MIN	6
#define WHATIFPLAN_WINDOWS_MAX	(WHATIFPLAN_ROUNDS_MAX * 4 + 1)
/* A window: at least this much progress, and this many of the lock's
   holds (a delay shows in a window only through the holds it lengthens;
   a lock held long is released a few times a window). */
#define WHATIFPLAN_MIN_UNITS	100.0
#define WHATIFPLAN_MIN_HOLDS	40.0
#define WHATIFPLAN_WINDOW_MIN_S	0.08
#define WHATIFPLAN_UNITS_MAX_S	0.5	/* the units' window at most */
#define WHATIFPLAN_WINDOW_MAX_S	1.0	/* the holds' */
/* The windows of one experiment, in all, at most. */
#define WHATIFPLAN_TIME_MAX_S	45.0
/* The delay budget: the plan's expected delay times the margin, within
   [BUDGET_MIN_S, BUDGET_MAX_S]. */
#define WHATIFPLAN_MARGIN	1.5
#define WHATIFPLAN_BUDGET_MIN_S	3.0
#define WHATIFPLAN_BUDGET_MAX_S	10.0

/* What the hold phase measured. */
struct whatifplan_input {
	double rate;		/* progress per second */
	double holds_per_s;	/* the lock's holds per second */
	double hold_s;		/* their mean length */
	double max_delay_s;	/* the delay per hold at most (10 ms) */
	/* The windows' time at most; 0: WHATIFPLAN_TIME_MAX_S */
	double time_max_s;
};

struct whatifplan {
	double window_s;
	unsigned int rounds;		/* n windows: rounds x 4 + 1 */
	double delay_s[2];		/* per hold: 25% and 50% of it, each
					   at most max_delay_s */
	double holds_per_window;	/* expected, without delay */
	double spend_s;			/* delay the rounds inject, expected */
	double budget_s;		/* the BPF program's budget */
};

/*
 * The plan for in: -ENOSPC when even WHATIFPLAN_ROUNDS_MIN rounds would
 * inject more than the largest budget (a lock held by many threads at
 * once, each release delayed); out then holds what they would need.
 * -ETIME when their windows would take longer than in->time_max_s (out
 * as well).  -EINVAL when in has no rate, holds or hold.
 */
int whatifplan__make(const struct whatifplan_input *in,
		     struct whatifplan *out);
/* Window i's delay per hold in seconds; 0: a reference window. */
double whatifplan__delay(const struct whatifplan *p, unsigned int i);
/* The windows the plan runs, and the time they take. */
unsigned int whatifplan__windows(const struct whatifplan *p);
double whatifplan__time(const struct whatifplan *p);

#endif
