// SPDX-License-Identifier: GPL-2.0
/*
 * whatifmodel: from windows' rates to the slope, and from the slope to
 * the gain of shorter holds, capped by the CPUs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "whatifmodel.h"

#define UNUSED __attribute__((unused))

/*
 * A lock that bounds progress: a unit takes hold + gap, the delay adds
 * d x hold to each; drift multiplies every rate by a slow factor.
 */
static size_t lock_bound(struct whatif_window *w, size_t rounds, double hold,
			 double gap, double drift)
{
	size_t n = 0;

	for (size_t r = 0; r < rounds; r++) {
		static const double d[4] = { 0, 0.25, 0, 0.5 };

		for (int k = 0; k < 4; k++) {
			double f = 1 + drift * (double)n;

			w[n].delay = d[k];
			w[n].rate = f / (hold * (1 + d[k]) + gap);
			n++;
		}
	}
	w[n].delay = 0;
	w[n].rate = (1 + drift * (double)n) / (hold + gap);
	return n + 1;
}

static void test_saturated_lock_gives_its_arithmetic(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	struct whatif_prediction p;
	size_t n = lock_bound(w, 8, 200e-6, 20e-6, 0);

	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	assert_int_equal(fit.pairs, 16);
	/* T = hold + gap: slope = hold / (hold + gap). */
	assert_true(fabs(fit.slope - 200.0 / 220) < 1e-9);
	whatifmodel__predict(&fit, 0.5, w, 0, NULL, &p);
	/* 220 us -> 120 us a unit: 83.3% more. */
	assert_true(fabs(p.gain_pct - (220.0 / 120 - 1) * 100) < 1e-6);
	assert_false(p.capped);
	assert_true(p.low_pct <= p.gain_pct && p.gain_pct <= p.high_pct);
}

static void test_drift_cancels_in_pairs(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	size_t n = lock_bound(w, 8, 200e-6, 20e-6, 0.01);

	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	/* 1% a window: a first-baseline comparison would be off by ~30%. */
	assert_true(fabs(fit.slope - 200.0 / 220) < 0.02);
}

/* A lock apart from the progress: only its holds' CPU, where the CPUs
   were the limit. */
static void test_apart_lock_frees_only_its_cpu(void **state UNUSED)
{
	struct whatif_prediction p = { .gain_pct = 16.5, .low_pct = 8,
				       .high_pct = 30, .lock_gain_pct = 16.5,
				       .capped = true, .at_held = true };

	/* 1000 holds/s of 10 us on a CPU, half shorter: 5 ms/s of 1 CPU. */
	whatifmodel__apart(&p, 0.5, 1000 * 10e-6, 1.0, 1.0);
	assert_true(fabs(p.gain_pct - 0.5) < 1e-9);
	assert_true(p.low_pct == 0 && fabs(p.high_pct - 0.5) < 1e-9);
	assert_true(p.lock_gain_pct == 16.5);	/* what the delay showed */
	assert_false(p.capped);
	assert_false(p.at_held);
	/* An idle CPU takes what it frees: nothing gained. */
	whatifmodel__apart(&p, 0.5, 1000 * 10e-6, 1.0, 1.6);
	assert_true(p.gain_pct == 0 && fabs(p.high_pct - 0.5) < 1e-9);
	/* Holds off a CPU (asleep under the lock) free nothing. */
	whatifmodel__apart(&p, 0.5, 0, 1.0, 1.0);
	assert_true(p.gain_pct == 0 && p.high_pct == 0);
}

static void test_lock_nothing_needs_predicts_nothing(void **state UNUSED)
{
	struct whatif_window w[17];
	struct whatif_fit fit;
	struct whatif_prediction p;

	for (size_t i = 0; i < 17; i++) {
		w[i].delay = (i % 2) ? ((i % 4) == 1 ? 0.25 : 0.5) : 0;
		/* noise of +-1%, none from the delay */
		w[i].rate = 1000 * (1 + ((int)((i * 7) % 3) - 1) * 0.01);
	}
	assert_int_equal(whatifmodel__fit(w, 17, &fit), 0);
	whatifmodel__predict(&fit, 0.5, w, 0, NULL, &p);
	assert_true(p.gain_pct < 2);
	assert_true(p.low_pct >= 0);	/* never a loss */
}

static void test_cpus_cap_where_the_bottleneck_moves(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	struct whatif_prediction p;
	size_t n = lock_bound(w, 8, 200e-6, 20e-6, 0);
	/* 200 us of each unit's CPU is the hold's. */
	struct whatif_cpu cpu = { .hold_cpu_per_unit = 200e-6 };
	double rate = w[0].rate;	/* 1 / 220 us */

	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	/* Used: rate x 240 us (20 us more outside); could: 2 CPUs. */
	for (size_t i = 0; i < n; i++)
		if (w[i].delay == 0) {
			w[i].used = rate * 240e-6;
			w[i].capacity = 2;
		}
	whatifmodel__predict(&fit, 0.5, w, n, &cpu, &p);
	/* The lock says +83%; the CPUs allow 2 / (1.09 - 0.45): +212%. */
	assert_false(p.capped);
	assert_true(p.cap_pct > 200);
	/* Could: 1.2 CPUs, of which 1.09 are used: 1.2 / 0.636, +88.6%,
	   less than a tenth above the lock's +83.3%: near the knee, the
	   p-norm of the two (below, by hand) reads +81.5%, said bound by
	   the CPUs.  One window at 1.3, one at 1.1: an interval around it. */
	for (size_t i = 0; i < n; i++)
		if (w[i].delay == 0)
			w[i].capacity = 1.2;
	whatifmodel__predict(&fit, 0.5, w, n, &cpu, &p);
	assert_true(p.capped);
	assert_true(p.cap_pct > p.lock_gain_pct);
	assert_true(p.gain_pct > 81 && p.gain_pct < 82);
	whatifmodel__predict(&fit, 0.75, w, n, &cpu, &p);
	/* 75% shorter: the lock +214%; the CPUs 1.2 / (1.09 - 0.68): +194%. */
	assert_true(p.capped);
	assert_true(fabs(p.cap_pct - (1.2 / (rate * 240e-6 - rate * 150e-6)
				      - 1) * 100) < 1e-6);
	/* The knee: the lock's part of a unit (200/220) and the CPUs'
	   (1.09 / 1.2) are alike, p = ln 2 / -ln(200/220), and the unit
	   then takes the p-norm of 0.25 x 200/220 and 0.41 / 1.2. */
	{
		double l = 200.0 / 220, c = rate * 240e-6 / 1.2;
		double pw = log(2) / -log(l);
		double c2 = (rate * 240e-6 - rate * 150e-6) / 1.2;
		double t = pow(pow(0.25 * l, pw) + pow(c2, pw), 1 / pw);

		assert_true(fabs(c - l) < 1e-9);
		assert_true(fabs(p.gain_pct - (1 / t - 1) * 100) < 1e-6);
		assert_true(p.gain_pct < p.cap_pct);
	}
	assert_true(p.lock_gain_pct > p.gain_pct);
	w[0].capacity = 1.3;
	w[2].capacity = 1.1;
	whatifmodel__predict(&fit, 0.75, w, n, &cpu, &p);
	assert_true(p.capped);
	assert_true(p.low_pct < p.gain_pct && p.gain_pct < p.high_pct);
}

/*
 * Where the lock's part of a unit or the CPUs' is the whole unit (a
 * lock held all the time), there is no knee: the capped prediction is
 * the CPUs' bound itself.  Where neither is (a unit takes longer than
 * each: the target runs below both bounds), the capped prediction lies
 * below the bound by the same p-norm.  The case measured: 4 threads on
 * one CPU, the lock's part 0.656 of a unit, 0.874 of the CPU used,
 * 0.137 of it the holds' half.
 */
static void test_capped_below_its_bound_at_the_knee(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	struct whatif_prediction p;
	/* Saturated: a unit is the hold alone. */
	size_t n = lock_bound(w, 8, 200e-6, 0, 0);
	struct whatif_cpu cpu = { .hold_cpu_per_unit = 100e-6 };
	double rate = w[0].rate;

	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	for (size_t i = 0; i < n; i++)
		if (w[i].delay == 0) {
			w[i].used = rate * 180e-6;
			w[i].capacity = 1;
		}
	whatifmodel__predict(&fit, 0.5, w, n, &cpu, &p);
	/* The lock +100%; the CPUs 1 / (0.9 - 0.25): +53.8%, as is. */
	assert_true(p.capped);
	assert_true(fabs(p.gain_pct - (1 / (0.9 - 0.25) - 1) * 100) < 1e-6);
	assert_true(fabs(p.gain_pct - p.cap_pct) < 1e-9);

	/* The case measured: a unit 381 us (2623/s), the lock's part
	   0.656 of it, 0.874 of a CPU used, holds of 105 us on a CPU. */
	n = lock_bound(w, 8, 0.656 * 381e-6, 0.344 * 381e-6, 0);
	cpu.hold_cpu_per_unit = 105e-6;
	rate = w[0].rate;
	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	for (size_t i = 0; i < n; i++)
		if (w[i].delay == 0) {
			w[i].used = 0.874;
			w[i].capacity = 1;
		}
	whatifmodel__predict(&fit, 0.5, w, n, &cpu, &p);
	/* The lock +48.8%, the CPUs 1 / (0.874 - 0.138): +35.8%; at the
	   knee (p near 2.8) about +30%.  (The real gain: +33%.) */
	assert_true(p.capped);
	assert_true(fabs(p.lock_gain_pct - (1 / (1 - 0.656 / 2) - 1) * 100) < 1e-6);
	assert_true(fabs(p.cap_pct - (1 / (0.874 - rate * 52.5e-6) - 1) * 100)
		    < 1e-6);
	assert_true(p.gain_pct > 28 && p.gain_pct < 32);
	assert_true(p.low_pct <= p.gain_pct && p.gain_pct <= p.high_pct);

	/* The hold phase ran the loop slower (141 us of CPU a hold), yet
	   the holds took the same share of the CPU the target used then
	   (0.158): the share, not the seconds, is what the windows free. */
	{
		struct whatif_prediction by_share;
		double share = rate * 105e-6 / 0.874;

		cpu.hold_cpu_per_unit = 141e-6;
		cpu.hold_cpu_share = share;
		whatifmodel__predict(&fit, 0.5, w, n, &cpu, &by_share);
		assert_true(fabs(by_share.cap_pct - p.cap_pct) < 1e-6);
		assert_true(fabs(by_share.gain_pct - p.gain_pct) < 1e-6);
		cpu.hold_cpu_share = 0;
		whatifmodel__predict(&fit, 0.5, w, n, &cpu, &by_share);
		assert_true(by_share.cap_pct > p.cap_pct + 3);
	}
}

/* Two windows starved of CPU (a tenth of the rate) among 16: the
   median's slope stays the lock's, a mean's would not. */
static void test_starved_windows_leave_the_slope(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	size_t n = lock_bound(w, 8, 200e-6, 20e-6, 0);

	w[5].rate /= 10;
	w[13].rate /= 10;
	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	assert_true(fabs(fit.slope - 200.0 / 220) < 0.05);
	assert_true(fit.low <= fit.slope && fit.slope <= fit.high);
}

/* A slope past the share of the time the lock is held is the delay's
   own cost: the lock's arithmetic takes the share (Amdahl). */
static void test_slope_bounded_by_the_time_held(void **state UNUSED)
{
	struct whatif_fit fit = { .slope = 6, .low = 5, .high = 7,
				  .held = 0.9 };
	struct whatif_prediction p;

	whatifmodel__predict(&fit, 0.5, NULL, 0, NULL, &p);
	/* Between 1 / (1 - 0.5 x 0.9) - 1 and the whole lock's 1 / 0.5 - 1 */
	assert_true(fabs(p.gain_pct - ((1 / 0.55 - 1) + 1) * 50) < 1e-6);
	assert_true(p.low_pct <= p.gain_pct && p.gain_pct <= p.high_pct);
	/* Holds that read more than all the time: all of it. */
	fit.held = 1.4;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &p);
	assert_true(fabs(p.gain_pct - (1 / 0.75 - 1) * 100) < 1e-6);
	/* Not known: the slope alone. */
	fit.held = 0;
	fit.slope = 0.5;
	whatifmodel__predict(&fit, 0.5, NULL, 0, NULL, &p);
	assert_true(fabs(p.gain_pct - (1 / 0.75 - 1) * 100) < 1e-6);
}

/* A host that takes a share of the guest's CPUs widens the interval by
   that share of the slope, both ways; the point stays. */
static void test_stolen_share_widens_the_interval(void **state UNUSED)
{
	struct whatif_fit fit = { .slope = 0.8, .low = 0.78, .high = 0.82,
				  .held = 0.9 };
	struct whatif_prediction own, guest;

	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &own);
	fit.stolen = 0.1;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &guest);
	assert_true(fabs(guest.gain_pct - own.gain_pct) < 1e-9);
	/* 1 / (1 - 0.25 x 0.78 x 0.9) - 1, 1 / (1 - 0.25 x 0.8 x 1.1) - 1 */
	assert_true(fabs(guest.low_pct - (1 / (1 - 0.25 * 0.702) - 1) * 100) <
		    1e-6);
	assert_true(fabs(guest.high_pct - (1 / (1 - 0.25 * 0.88) - 1) * 100) <
		    1e-6);
	assert_true(guest.low_pct < own.low_pct &&
		    guest.high_pct > own.high_pct);
	/* Past half of the time, no wider. */
	fit.stolen = 0.9;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &guest);
	assert_true(fabs(guest.low_pct - (1 / (1 - 0.25 * 0.39) - 1) * 100) <
		    1e-6);
}

/* Cut to the share held, the interval reaches down to the queue's gain;
   a slope inside the share keeps its own. */
static void test_queue_widens_a_prediction_cut_to_the_share_held(
	void **state UNUSED)
{
	struct whatif_fit fit = { .slope = 1.2, .low = 1.1, .high = 1.3,
				  .held = 0.9 };
	struct whatif_prediction p;

	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &p);
	assert_true(p.at_held);
	assert_true(p.low_pct > 25);
	whatifmodel__span_queue(&p, 20);
	assert_true(fabs(p.low_pct - 20) < 1e-9);
	assert_true(p.lock_low_pct > 25);
	/* Above the low end already, or none: no change. */
	whatifmodel__span_queue(&p, 30);
	assert_true(fabs(p.low_pct - 20) < 1e-9);
	whatifmodel__span_queue(&p, NAN);
	assert_true(fabs(p.low_pct - 20) < 1e-9);
	fit.slope = 0.8;
	fit.low = 0.7;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &p);
	assert_false(p.at_held);
	whatifmodel__span_queue(&p, 5);
	assert_true(p.low_pct > 15);
}

/*
 * Handoffs woken on idle CPUs (a sixth of a unit's time): the point
 * takes them shorter with the holds, in proportion, up to the whole
 * unit; the interval's high end allows them to vanish; the low end
 * stays the slope's.  The case measured on a quiet guest: 215 us held,
 * 40 us handoffs, slope 0.86; the real gain for 25% shorter 33.6%,
 * past the whole lock's arithmetic (33.3%).
 */
static void test_idle_handoffs_widen_the_high_end(void **state UNUSED)
{
	struct whatif_window w[40];
	struct whatif_fit fit;
	struct whatif_prediction plain, idle;
	size_t n = lock_bound(w, 8, 215e-6, 40e-6, 0);

	assert_int_equal(whatifmodel__fit(w, n, &fit), 0);
	fit.held = 0.9;
	whatifmodel__predict(&fit, 0.25, w, n, NULL, &plain);
	fit.handoff_idle = 40.0 / 255;
	whatifmodel__predict(&fit, 0.25, w, n, NULL, &idle);
	assert_true(fabs(idle.gain_pct - (1 / (1 - fmin(fit.slope + 40.0 / 255,
							1) * 0.25) - 1) * 100)
		    < 1e-6);
	assert_true(idle.gain_pct > plain.gain_pct + 3);
	assert_true(fabs(idle.low_pct - plain.low_pct) < 1e-9);
	assert_true(plain.high_pct < 33.6);
	assert_true(fabs(idle.high_pct - (1 / (1 - fit.slope * 0.25 -
						40.0 / 255) - 1) * 100) < 1e-6);
	assert_true(idle.high_pct > 33.6);
	/* Past the most a cut may take: at the cap of 95%. */
	fit.handoff_idle = 2;
	whatifmodel__predict(&fit, 0.5, w, n, NULL, &idle);
	assert_true(fabs(idle.high_pct - 1900) < 1e-6);
}

static void test_too_few_windows_is_einval(void **state UNUSED)
{
	struct whatif_window w[3] = {
		{ .delay = 0, .rate = 100 },
		{ .delay = 0.25, .rate = 90 },
		{ .delay = 0, .rate = 100 },
	};
	struct whatif_fit fit;

	assert_int_equal(whatifmodel__fit(w, 3, &fit), -EINVAL);
}

/* One thread: no queue; a unit takes d + z, z = 1/rate - d. */
static void test_queue_of_one_thread_is_its_own_cycle(void **state UNUSED)
{
	double gain;

	assert_int_equal(whatifmodel__queue(1, 1, 0.005, 100, 0.5, &gain), 0);
	/* 1 / (0.0025 + 0.005) = 133.3 units/s */
	assert_true(fabs(gain - 100.0 / 3) < 0.01);
}

/* Many threads, the lock nearly always held: most of the lock's
   arithmetic (1 / (1 - s) - 1, 100%: by MVA 74%, the rest of a cycle
   then bounding); a lock far from saturated: little. */
static void test_queue_saturated_and_idle_locks(void **state UNUSED)
{
	double gain, half;

	assert_int_equal(whatifmodel__queue(20, 1, 0.001, 999, 0.5, &gain),
			 0);
	assert_true(gain > 70 && gain < 78);
	assert_int_equal(whatifmodel__queue(4, 1, 0.0001, 100, 0.5, &half),
			 0);
	assert_true(half >= 0 && half < 1);
	/* Every other unit takes a hold twice as long: the same demand. */
	assert_int_equal(whatifmodel__queue(20, 0.5, 0.002, 999, 0.5, &half),
			 0);
	assert_true(fabs(half - gain) < 0.01);
}

/* More holds than one lock serves (overlapping: read-shared). */
static void test_queue_overlapping_holds_is_erange(void **state UNUSED)
{
	double gain;

	assert_int_equal(whatifmodel__queue(8, 1, 0.001, 2000, 0.25, &gain),
			 -ERANGE);
	assert_int_equal(whatifmodel__queue(0, 1, 0.001, 10, 0.25, &gain),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_saturated_lock_gives_its_arithmetic),
		cmocka_unit_test(test_drift_cancels_in_pairs),
		cmocka_unit_test(test_lock_nothing_needs_predicts_nothing),
		cmocka_unit_test(test_cpus_cap_where_the_bottleneck_moves),
		cmocka_unit_test(test_capped_below_its_bound_at_the_knee),
		cmocka_unit_test(test_starved_windows_leave_the_slope),
		cmocka_unit_test(test_slope_bounded_by_the_time_held),
		cmocka_unit_test(test_stolen_share_widens_the_interval),
		cmocka_unit_test(test_queue_widens_a_prediction_cut_to_the_share_held),
		cmocka_unit_test(test_too_few_windows_is_einval),
		cmocka_unit_test(test_idle_handoffs_widen_the_high_end),
		cmocka_unit_test(test_apart_lock_frees_only_its_cpu),
		cmocka_unit_test(test_queue_of_one_thread_is_its_own_cycle),
		cmocka_unit_test(test_queue_saturated_and_idle_locks),
		cmocka_unit_test(test_queue_overlapping_holds_is_erange),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
