/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's arithmetic, without BPF: from the progress rates of the
 * experiment's windows (holds lengthened by a delay, or not) to the
 * slope of the time a unit of progress takes against the hold, and from
 * the slope to the gain of shorter holds, capped where the CPUs would
 * become the limit.
 */
#ifndef SYNCPROF_WHATIFMODEL_H
#define SYNCPROF_WHATIFMODEL_H

#include <stdbool.h>
#include <stddef.h>

/* The windows one fit reads at most. */
#define WHATIF_MAX_WINDOWS	256

/* One window of the experiment. */
struct whatif_window {
	double delay;		/* delay per hold, as a fraction of the mean
				   hold; 0: a reference window */
	double rate;		/* progress per second in it */
	/* Reference windows: the CPUs the target's threads used in it,
	   the CPUs they could have had (theirs and the idle ones), and at
	   most (a CPU per thread, within the CPUs it may run on); 0: not
	   known. */
	double used;
	double capacity;
	double most;
};

/*
 * The slope: how much longer (relative) a unit of progress takes per
 * mean hold added to each hold, with its interval.
 */
struct whatif_fit {
	double slope;
	double low;
	double high;
	size_t pairs;		/* delayed windows with a reference */
	double base_rate;	/* progress per second, reference windows */
	/* The share of the time the lock was held (its holds per second x
	   the mean hold), set by the caller; 0: not known.  The slope is
	   bounded by it (whatifmodel__predict). */
	double held;
	/* The share of the machine's busy time its host took (a guest's
	   steal), set by the caller: the interval widens by it. */
	double stolen;
	/* The share of a unit's time holds `shorter` shorter take off
	   beyond the slope (the handoffs' wake-ups, wakecurve.c), set by
	   the caller for each shortening; 0: none. */
	double handoff_cut;
	/* The share of a unit's time in handoffs whose waiter was woken on
	   an idle CPU, set by the caller; 0: none or not known.  Shorter
	   holds shorten those idles, and a wake-up after a shorter idle
	   can be faster (a guest's vCPU still polled by its host), which
	   lengthened holds never show: the interval's high end allows
	   them to vanish. */
	double handoff_idle;
};

/* Whether the lock's holders reach a thread that makes progress
   (wakereach.c). */
enum whatif_reach {
	WHATIF_REACH_UNKNOWN,	/* no --progress, none seen, maps full */
	WHATIF_REACH_YES,
	WHATIF_REACH_NO,	/* apart: only its holds' CPU can matter */
};

/*
 * What the lock's holds cost the CPUs: seconds on a CPU per unit, and
 * their share of the CPU the target's threads used in the same seconds
 * (0: not known; the share is then taken from the seconds per unit).
 */
struct whatif_cpu {
	double hold_cpu_per_unit;
	double hold_cpu_share;
};

struct whatif_prediction {
	double gain_pct;	/* predicted change in progress */
	double low_pct;
	double high_pct;
	double lock_gain_pct;	/* the lock's arithmetic alone */
	double cap_pct;		/* the CPUs' bound; < 0: none known */
	double cap_low_pct;	/* its interval */
	double cap_high_pct;
	bool capped;		/* the CPUs, not the lock, would bound it */
	bool at_held;		/* the slope cut to the share held */
	double lock_low_pct;	/* the slope's own low, before the queue's */
	/* The CPUs the target used, of those it could have, in the
	   reference windows (summed), and what it would use with the
	   holds shorter at the same rate; 0: not known. */
	double cpu_share;
	double cpu_share_after;
	/* The points of lock_gain_pct that fit->handoff_cut adds. */
	double handoff_pct;
};

/*
 * Fits the slope: each delayed window against the reference windows on
 * either side of it (drift cancels), one estimate per window; their mean,
 * with an interval from their spread (Student's t, 95%) widened to hold
 * the mean of each delay on its own (a slope that bends).  -EINVAL:
 * fewer than two delayed windows with a reference.
 */
int whatifmodel__fit(const struct whatif_window *w, size_t n,
		     struct whatif_fit *out);
/*
 * The gain of holds `shorter` (0.25: 25%) shorter: the time a unit takes
 * falls by slope x shorter; capped by the CPUs, one bound per reference
 * window of w that knows its CPUs (cpu may be NULL: no cap).  A shorter
 * hold never predicts a loss: negatives read 0.
 */
void whatifmodel__predict(const struct whatif_fit *fit, double shorter,
			  const struct whatif_window *w, size_t n,
			  const struct whatif_cpu *cpu,
			  struct whatif_prediction *out);

/*
 * The second method, a queue: the lock as one server that `threads`
 * customers visit `visits` times per unit of progress, each hold
 * `hold_s` long, and between visits a delay (the rest of their work)
 * solved so that the closed network's throughput (exact mean value
 * analysis) is the `rate` measured; the gain of holds `shorter` shorter
 * is the network's throughput with them.  From the hold phase alone,
 * no delay injected: it cross-checks the slope.  -ERANGE when no delay
 * gives the rate (the holds overlap: a lock read-shared, or more holds
 * than the lock can serve), -EINVAL for nonsense input.
 */
int whatifmodel__queue(unsigned int threads, double visits, double hold_s,
		       double rate, double shorter, double *gain_pct);

/*
 * A prediction cut to the share held (at_held) takes the queue's gain
 * into its interval: the slope then says only that the lock bounds at
 * least that much.
 */
void whatifmodel__span_queue(struct whatif_prediction *p, double queue_pct);

/*
 * The CPUs the lock's holds take, of `used` CPUs at `rate` units per
 * second: their share of the CPU used, when known, else their seconds
 * a unit at that rate.
 */
double whatifmodel__holds_cpu(const struct whatif_cpu *cpu, double used,
			      double rate);

/*
 * A lock apart from the progress (WHATIF_REACH_NO): holds `shorter`
 * shorter free that share of their CPU (hold_cpu_per_s: seconds on a
 * CPU per second) for the target's threads, which used `used` CPUs and
 * could have had `capacity`.  The gain is that CPU's share of theirs
 * where they had no more to take, else 0; the interval from 0 to the
 * share.  lock_gain_pct keeps the slope's gain: what the delay showed.
 */
void whatifmodel__apart(struct whatif_prediction *p, double shorter,
			double hold_cpu_per_s, double used, double capacity);

#endif
