// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's plan: the experiment's windows and delay budget, fitted to
 * the hold measured before it.
 *
 * A window must hold enough progress (WHATIFPLAN_MIN_UNITS) and enough
 * of the lock's holds (WHATIFPLAN_MIN_HOLDS): the delay reaches the
 * progress only through the holds it lengthens, and the progress of a
 * lock held long comes in bursts (PostgreSQL's WALWriteLock commits a
 * group of transactions at each release of a flush: with holds of 8 ms,
 * 100 commits' time, 0.08 s, saw 8 of them).  So the window is the
 * longer of the two: the units' at most UNITS_MAX_S (a slow target: the
 * former windows, unchanged), the holds' at most WINDOW_MAX_S, at least
 * WINDOW_MIN_S.  A lock released 40 times or more in 100 units' time
 * (one hold a unit, the test target's) keeps the former windows.
 *
 * The delay a round injects is expected at most window x holds per
 * second x (d25 + d50) (summed over threads: a lock held by several at
 * once is delayed in each); fewer holds go by once they are longer, so
 * that is an upper bound.  It grows with the hold: the same 40 holds a
 * window lengthened by a quarter and a half cost 30 holds' time a
 * round, 6 ms for holds of 200 us, 0.6 s for holds of 20 ms.  A fixed
 * budget (3 s, the former one) spent itself in a few windows on the
 * long holds (PostgreSQL on a slow disk: holds of 12.5 ms, no
 * prediction).  The budget is the plan's expected spend times a margin
 * (the hold phase's rate moves with the machine's load), never below
 * WHATIFPLAN_BUDGET_MIN_S nor above WHATIFPLAN_BUDGET_MAX_S; the rounds
 * are cut to fit the largest budget and the windows' time
 * (WHATIFPLAN_TIME_MAX_S), down to WHATIFPLAN_ROUNDS_MIN (12
 * estimates, the fewest whose median's interval leaves out two on each
 * side), below which no experiment is made.
 * An exclusive lock always fits: it is held at most all the time, so a
 * round injects at most 0.75 of a window, 0.75 s, and 8 rounds fit the
 * largest budget with the margin.  Only a lock held by several threads
 * at once (a rwlock read-shared) can need more.
 *
 * Rejected: smaller delays (a tenth of the hold) to fit a fixed budget:
 * a window's estimate of the slope is its rate's noise divided by the
 * delay, so at one budget fewer, larger delays are the surer (and the
 * delays go as far up as the prediction goes down, whatifmodel.c).
 */
#include <errno.h>

#include "whatifplan.h"

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double spend(const struct whatifplan *p, double holds_per_s,
		    unsigned int rounds)
{
	return (double)rounds * p->window_s * holds_per_s *
	       (p->delay_s[0] + p->delay_s[1]);
}

int whatifplan__make(const struct whatifplan_input *in,
		     struct whatifplan *out)
{
	unsigned int rounds = WHATIFPLAN_ROUNDS_MAX;
	double time_max = in->time_max_s > 0 ? in->time_max_s
					     : WHATIFPLAN_TIME_MAX_S;
	double window;

	*out = (struct whatifplan){ 0 };
	if (!(in->rate > 0) || !(in->holds_per_s > 0) || !(in->hold_s > 0) ||
	    !(in->max_delay_s > 0))
		return -EINVAL;
	window = clamp(WHATIFPLAN_MIN_UNITS / in->rate, 0,
		       WHATIFPLAN_UNITS_MAX_S);
	if (WHATIFPLAN_MIN_HOLDS / in->holds_per_s > window)
		window = WHATIFPLAN_MIN_HOLDS / in->holds_per_s;
	out->window_s = clamp(window, WHATIFPLAN_WINDOW_MIN_S,
			      WHATIFPLAN_WINDOW_MAX_S);
	out->delay_s[0] = clamp(0.25 * in->hold_s, 0, in->max_delay_s);
	out->delay_s[1] = clamp(0.5 * in->hold_s, 0, in->max_delay_s);
	out->holds_per_window = out->window_s * in->holds_per_s;
	while (rounds > WHATIFPLAN_ROUNDS_MIN &&
	       (double)(rounds * 4 + 1) * out->window_s > time_max)
		rounds--;
	while (rounds > WHATIFPLAN_ROUNDS_MIN &&
	       spend(out, in->holds_per_s, rounds) * WHATIFPLAN_MARGIN >
	       WHATIFPLAN_BUDGET_MAX_S)
		rounds--;
	out->rounds = rounds;
	out->spend_s = spend(out, in->holds_per_s, rounds);
	out->budget_s = clamp(out->spend_s * WHATIFPLAN_MARGIN,
			      WHATIFPLAN_BUDGET_MIN_S, WHATIFPLAN_BUDGET_MAX_S);
	if (out->spend_s * WHATIFPLAN_MARGIN > WHATIFPLAN_BUDGET_MAX_S)
		return -ENOSPC;
	return whatifplan__time(out) > time_max ? -ETIME : 0;
}

/* Reference, +25%, reference, +50%; the two swapped every other round. */
double whatifplan__delay(const struct whatifplan *p, unsigned int i)
{
	unsigned int round = i / 4, slot = i % 4;

	if (i >= p->rounds * 4 || !(slot & 1))
		return 0;
	return (slot == 1) == !(round & 1) ? p->delay_s[0] : p->delay_s[1];
}

unsigned int whatifplan__windows(const struct whatifplan *p)
{
	return p->rounds * 4 + 1;
}

double whatifplan__time(const struct whatifplan *p)
{
	return (double)whatifplan__windows(p) * p->window_s;
}
