// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's handoffs along the wake-up curve.
 *
 * A handoff (a release to the next acquisition by a thread that was
 * waiting) costs a waiter's wake-up, and a wake-up costs more after a
 * longer idle of the CPU it runs on: a guest's vCPU halted past its
 * host's polling window, a CPU in a deeper idle state.  The delays only
 * lengthen the holds, the idles with them, where the curve is flat; the
 * slope then says nothing of the step below, which shorter holds cross.
 *
 * The curve is the target's own: the hold phase bins every wake-up of
 * the lock's waiters by the idle of the CPU it ran on (bpf/whatifbpf.h),
 * and the bins, merged in order until each point has WAKECURVE_MIN_WAKES
 * wake-ups (a few wake-ups of a bin are noise, and a step between two
 * noisy bins would read as a shrink), give the mean latency at their
 * mean idle.  A woken handoff whose idle, shortened, falls below the
 * curve's first point moves by nothing measured and is left as it is
 * (below_share says how many): on the development guest at rest the
 * test target's 200 us holds woke their waiters only after 200 us of
 * idle or more (33.8 us each), so the step below (6 to 7 us up to
 * 150 us, measured alone) was not on the target's own curve, and a
 * flat extension under it read the line's small rise above as a
 * negative rest (-0.3 and -1.4 points where the real gains were 25% and
 * 27% above the slope's).  A longer idle never wakes faster (a deeper
 * idle state, a vCPU its host stopped polling): a point below the one
 * before it is noise, pooled with it until the curve rises or stays
 * (adjacent violators pooled, weighted by their wake-ups).  Between
 * points the curve is linear, past its ends flat (no shrink is read
 * where nothing was measured).  A wake-up whose CPU was busy (it
 * queued behind another task) is off the curve and moves with nothing.
 *
 * The woken handoffs' own idles say where they sit on it.  With holds
 * s shorter an idle shrinks by s x held of itself (held: the share of
 * the time the lock is held; an idle spent waiting for the lock is holds
 * and handoffs in that proportion), and each woken handoff by the
 * curve's difference.  The delays d moved the idles up by d x held, and
 * the slope holds the line through those: s/d of each delay's move, the
 * mean over the delays.  What the slope misses is the rest: the whole
 * move less the line's.  On a loaded machine the CPUs do not idle, the
 * wake-ups sit in the busy bin or on a flat curve, and the rest is 0.
 *
 * Rejected: the waiter's own sleep as the curve's abscissa (the CPU's
 * idle is what the host or the idle states see; a waiter that slept
 * while its CPU ran others wakes fast); one mean latency per handoff
 * (the mean of a step is not on it).
 */
#include <math.h>
#include <string.h>

#include "wakecurve.h"

/* Wake-ups one point of the curve holds at least. */
#define WAKECURVE_MIN_WAKES	20.0

/* Sums of n more wake-ups (idle, lat: their sums) into point at. */
static void merge(struct wakecurve_point *p, size_t at, double idle,
		  double lat, double n)
{
	double all = n + p[at].wakes;

	p[at] = (struct wakecurve_point){ (p[at].idle * p[at].wakes + idle) /
					  all,
					  (p[at].lat * p[at].wakes + lat) / all,
					  all };
}

/* The curve's points, in order of idle; their number. */
static size_t points(const struct wakecurve *c,
		     struct wakecurve_point p[WAKECURVE_BINS])
{
	double n = 0, idle = 0, lat = 0;
	size_t m = 0;

	for (size_t i = 0; i < WHATIF_WAKE_BUSY; i++) {
		n += c->wakes[i].count;
		idle += c->wakes[i].idle_ns;
		lat += c->wakes[i].lat_ns;
		if (n < WAKECURVE_MIN_WAKES)
			continue;
		p[m++] = (struct wakecurve_point){ idle / n, lat / n, n };
		n = idle = lat = 0;
	}
	/* The last few: into the last point. */
	if (n > 0 && m)
		merge(p, m - 1, idle, lat, n);
	/* Never faster after a longer idle: a point below the one before
	   it is pooled with it (and again, down the curve). */
	for (size_t i = 1; i < m;) {
		if (p[i].lat >= p[i - 1].lat) {
			i++;
			continue;
		}
		merge(p, i - 1, p[i].idle * p[i].wakes, p[i].lat * p[i].wakes,
		      p[i].wakes);
		memmove(&p[i], &p[i + 1], (m - i - 1) * sizeof(*p));
		m--;
		if (i > 1)
			i--;
	}
	return m;
}

size_t wakecurve__points(const struct wakecurve *c,
			 struct wakecurve_point p[WAKECURVE_BINS])
{
	return points(c, p);
}

static double along(const struct wakecurve_point *p, size_t m, double x)
{
	if (x <= p[0].idle)
		return p[0].lat;
	for (size_t i = 1; i < m; i++)
		if (x <= p[i].idle) {
			double span = p[i].idle - p[i - 1].idle;

			return span > 0 ? p[i - 1].lat + (p[i].lat - p[i - 1].lat) *
					  (x - p[i - 1].idle) / span : p[i].lat;
		}
	return p[m - 1].lat;
}

double wakecurve__at(const struct wakecurve *c, double idle_ns)
{
	struct wakecurve_point p[WAKECURVE_BINS];
	size_t m = points(c, p);

	return m >= 2 ? along(p, m, idle_ns) : NAN;
}

void wakecurve__shift(const struct wakecurve *c, double held, double shorter,
		      const double *delays, size_t n_delays,
		      struct wakecurve_shift *out)
{
	struct wakecurve_point p[WAKECURVE_BINS];
	size_t m = points(c, p), lines = 0;
	double whole = 0, extra = 0, woken = 0, below = 0;

	*out = (struct wakecurve_shift){ 0 };
	if (!(c->n_handoffs > 0))
		return;
	out->handoff_ns = c->handoff_ns / c->n_handoffs;
	out->after_ns = out->handoff_ns;
	for (size_t i = 0; i < WAKECURVE_BINS; i++) {
		woken += c->handoffs[i].count;
		out->wakes += c->wakes[i].count;
	}
	out->woken_share = woken / c->n_handoffs;
	if (out->wakes > 0)
		out->busy_share = c->wakes[WHATIF_WAKE_BUSY].count / out->wakes;
	for (size_t k = 0; k < n_delays; k++)
		lines += delays[k] > 0;
	held = fmin(fmax(held, 0), 1);
	if (m < 2 || !lines || !(shorter > 0) || !(held > 0))
		return;
	out->known = true;
	for (size_t i = 0; i < WHATIF_WAKE_BUSY; i++) {
		const struct wakecurve_bin *b = &c->handoffs[i];
		double x, now, move, line = 0;

		if (!(b->count > 0))
			continue;
		x = b->idle_ns / b->count;
		/* Shortened below the curve: nothing measured says how far
		   it moves (neither way). */
		if (x * (1 - shorter * held) < p[0].idle) {
			below += b->count;
			continue;
		}
		now = along(p, m, x);
		move = now - along(p, m, x * (1 - shorter * held));
		for (size_t k = 0; k < n_delays; k++)
			if (delays[k] > 0)
				line += (along(p, m, x * (1 + delays[k] * held)) -
					 now) / delays[k];
		/* The line's move down: s x its rise per delay. */
		line *= shorter / (double)lines;
		whole += b->count * move;
		extra += b->count * (move - line);
	}
	out->after_ns = (c->handoff_ns - whole) / c->n_handoffs;
	out->extra_ns = extra / c->n_handoffs;
	out->below_share = woken > 0 ? below / woken : 0;
}
