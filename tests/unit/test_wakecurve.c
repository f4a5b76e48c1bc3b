// SPDX-License-Identifier: GPL-2.0
/*
 * wakecurve: the waiters' wake-up latency against their CPU's idle, and
 * the handoffs' move along it with shorter holds, past the delays' line;
 * and whatifmodel__predict with that move.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "wakecurve.h"
#include "whatifmodel.h"

#define UNUSED __attribute__((unused))

static const double delays[] = { 0.25, 0.5 };

/* n wake-ups after idle_us of idle, lat_us each (the BPF's bins). */
static void wakes(struct wakecurve *c, double idle_us, double n, double lat_us)
{
	size_t bin = (size_t)(idle_us * 1e3 / WHATIF_WAKE_STEP_NS);

	assert_true(bin < WHATIF_WAKE_FINE);
	c->wakes[bin].count += n;
	c->wakes[bin].idle_ns += n * idle_us * 1e3;
	c->wakes[bin].lat_ns += n * lat_us * 1e3;
}

/* n woken handoffs of handoff_us after idle_us of idle. */
static void handoffs(struct wakecurve *c, double idle_us, double n,
		     double handoff_us)
{
	size_t bin = (size_t)(idle_us * 1e3 / WHATIF_WAKE_STEP_NS);

	c->handoffs[bin].count += n;
	c->handoffs[bin].idle_ns += n * idle_us * 1e3;
	c->handoffs[bin].handoff_ns += n * handoff_us * 1e3;
	c->n_handoffs += n;
	c->handoff_ns += n * handoff_us * 1e3;
}

/* The guest's curve: fast up to 150 us of idle, slow from 200 us. */
static void step_curve(struct wakecurve *c)
{
	for (double idle = 10; idle < 1000; idle += 25)
		wakes(c, idle, 30, idle < 175 ? 6 : 20);
}

static void test_step_crossed_by_shorter_holds(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_shift s;
	double held = 0.8, x = 210, now, after, fall;

	step_curve(&c);
	handoffs(&c, x, 100, 40);
	/* The line (delays up: 210 us x 1.2, x 1.4) is flat there. */
	assert_true(fabs(wakecurve__at(&c, x * 1.2e3) - 20e3) < 1e-9);
	assert_true(fabs(wakecurve__at(&c, x * 1.4e3) - 20e3) < 1e-9);
	wakecurve__shift(&c, held, 0.5, delays, 2, &s);
	assert_true(s.known);
	assert_true(fabs(s.handoff_ns - 40e3) < 1e-6);
	assert_true(fabs(s.woken_share - 1) < 1e-9);
	assert_true(s.busy_share == 0);
	assert_true(s.below_share == 0);
	/* 210 us -> 126 us of idle: the step, 20 us -> 6 us, all of it
	   past the line. */
	now = wakecurve__at(&c, x * 1e3);
	after = wakecurve__at(&c, x * (1 - 0.5 * held) * 1e3);
	fall = now - after;
	assert_true(fabs(fall - 14e3) < 1e-6);
	assert_true(fabs(s.after_ns - (40e3 - fall)) < 1e-6);
	assert_true(fabs(s.extra_ns - fall) < 1e-6);
}

static void test_flat_curve_moves_nothing(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_shift s;

	for (double idle = 10; idle < 1000; idle += 25)
		wakes(&c, idle, 30, 9);
	handoffs(&c, 210, 100, 30);
	wakecurve__shift(&c, 0.9, 0.5, delays, 2, &s);
	assert_true(s.known);
	assert_true(fabs(s.after_ns - s.handoff_ns) < 1e-9);
	assert_true(fabs(s.extra_ns) < 1e-9);
}

/* A straight curve: the delays' line holds all of its move. */
static void test_straight_curve_is_the_slopes(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_shift s;

	for (double idle = 10; idle < 1000; idle += 25)
		wakes(&c, idle, 30, 5 + idle / 20);
	handoffs(&c, 410, 100, 40);
	wakecurve__shift(&c, 0.9, 0.25, delays, 2, &s);
	assert_true(s.known);
	/* 410 us -> 317.75 us: 4.6 us less, none of it past the line. */
	assert_true(fabs(s.handoff_ns - s.after_ns - 92.25 / 20 * 1e3) < 1);
	assert_true(fabs(s.extra_ns) < 1);
}

/* A busy CPU's wake-ups are off the curve: nothing is read. */
static void test_busy_machine_has_no_curve(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_shift s;

	c.wakes[WHATIF_WAKE_BUSY] = (struct wakecurve_bin){
		.count = 400, .lat_ns = 400 * 500e3 };
	c.handoffs[WHATIF_WAKE_BUSY] = (struct wakecurve_bin){
		.count = 300, .handoff_ns = 300 * 50e3 };
	c.n_handoffs = 350;
	c.handoff_ns = 350 * 45e3;
	assert_true(isnan(wakecurve__at(&c, 100e3)));
	wakecurve__shift(&c, 0.9, 0.5, delays, 2, &s);
	assert_false(s.known);
	assert_true(fabs(s.handoff_ns - 45e3) < 1e-6);
	assert_true(fabs(s.after_ns - 45e3) < 1e-6);
	assert_true(fabs(s.woken_share - 300.0 / 350) < 1e-9);
	assert_true(fabs(s.wakes - 400) < 1e-9);
	assert_true(fabs(s.busy_share - 1) < 1e-9);
	assert_true(s.extra_ns == 0);
}

/* Thin bins merge into points of 20 wake-ups or more. */
static void test_thin_bins_merge(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_point p[WAKECURVE_BINS];
	size_t n;

	for (double idle = 10; idle < 200; idle += 25)
		wakes(&c, idle, 5, idle < 100 ? 6 : 20);
	/* 8 bins of 5: two points of 20. */
	n = wakecurve__points(&c, p);
	assert_int_equal(n, 2);
	assert_true(fabs(p[0].wakes - 20) < 1e-9);
	assert_true(fabs(p[0].lat - 6e3) < 1e-6);
	assert_true(fabs(p[1].lat - 20e3) < 1e-6);
	assert_true(fabs(p[0].idle - 47.5e3) < 1e-6);
	/* 3 more in a last bin: folded into the last point. */
	wakes(&c, 510, 3, 40);
	n = wakecurve__points(&c, p);
	assert_int_equal(n, 2);
	assert_true(fabs(p[1].wakes - 23) < 1e-9);
	assert_true(fabs(p[1].lat - (20 * 20e3 + 3 * 40e3) / 23) < 1e-6);
}

/* A point below the one before it is pooled with it: never faster
   after a longer idle. */
static void test_dips_are_pooled(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_point p[WAKECURVE_BINS];
	size_t n;

	wakes(&c, 10, 20, 6);
	wakes(&c, 110, 20, 20);
	wakes(&c, 135, 60, 8);		/* a dip: pooled with 110 us */
	wakes(&c, 160, 20, 30);
	n = wakecurve__points(&c, p);
	assert_int_equal(n, 3);
	assert_true(fabs(p[1].wakes - 80) < 1e-9);
	assert_true(fabs(p[1].lat - (20 * 20e3 + 60 * 8e3) / 80) < 1e-6);
	assert_true(fabs(p[1].idle - (20 * 110e3 + 60 * 135e3) / 80) < 1e-6);
	/* A dip below two points: pooled down the curve. */
	wakes(&c, 185, 200, 1);
	n = wakecurve__points(&c, p);
	assert_int_equal(n, 1);
	for (size_t i = 1; i < n; i++)
		assert_true(p[i].lat >= p[i - 1].lat);
}

/* Below the curve's first point nothing was measured: flat. */
static void test_below_the_curve_is_flat(void **state UNUSED)
{
	struct wakecurve c = { 0 };
	struct wakecurve_shift s;

	for (double idle = 210; idle < 1000; idle += 25)
		wakes(&c, idle, 30, 20 + idle / 100);
	handoffs(&c, 210, 100, 40);
	assert_true(fabs(wakecurve__at(&c, 50e3) - wakecurve__at(&c, 210e3))
		    < 1e-9);
	wakecurve__shift(&c, 0.9, 0.5, delays, 2, &s);
	/* 210 us -> 115.5 us: below the curve, nothing measured says how
	   far (the line's rise above is no guide to the step below). */
	assert_true(s.known);
	assert_true(s.extra_ns == 0);
	assert_true(fabs(s.below_share - 1) < 1e-9);
	assert_true(fabs(s.after_ns - s.handoff_ns) < 1e-6);
	/* Handoffs higher up, shortened within it: moved, and the line's
	   part taken off. */
	handoffs(&c, 460, 100, 40);
	wakecurve__shift(&c, 0.9, 0.25, delays, 2, &s);
	assert_true(fabs(s.below_share - 0.5) < 1e-9);
	assert_true(s.after_ns < s.handoff_ns);
	assert_true(fabs(s.extra_ns) < 1);
}

/* The shrink past the line, in the prediction: a cut of the unit. */
static void test_predict_adds_the_handoffs(void **state UNUSED)
{
	struct whatif_fit fit = { .slope = 0.8, .low = 0.75, .high = 0.85,
				  .pairs = 16, .base_rate = 4000 };
	struct whatif_prediction plain, with;

	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &plain);
	assert_true(fabs(plain.handoff_pct) < 1e-12);
	fit.handoff_cut = 0.05;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &with);
	/* 1 / (1 - 0.2 - 0.05) - 1 against 1 / (1 - 0.2) - 1. */
	assert_true(fabs(with.gain_pct - (1 / 0.75 - 1) * 100) < 1e-9);
	assert_true(fabs(with.handoff_pct - (with.gain_pct - plain.gain_pct))
		    < 1e-9);
	assert_true(with.high_pct > plain.high_pct);
	assert_true(fabs(with.low_pct - plain.low_pct) < 1e-12);
	/* Cut to the share held: the handoffs are past it. */
	fit.held = 0.7;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &with);
	fit.handoff_cut = 0;
	whatifmodel__predict(&fit, 0.25, NULL, 0, NULL, &plain);
	assert_true(with.at_held && plain.at_held);
	assert_true(with.gain_pct > plain.gain_pct);
	assert_true(fabs(with.handoff_pct - (with.gain_pct - plain.gain_pct))
		    < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_crossed_by_shorter_holds),
		cmocka_unit_test(test_flat_curve_moves_nothing),
		cmocka_unit_test(test_straight_curve_is_the_slopes),
		cmocka_unit_test(test_busy_machine_has_no_curve),
		cmocka_unit_test(test_thin_bins_merge),
		cmocka_unit_test(test_dips_are_pooled),
		cmocka_unit_test(test_below_the_curve_is_flat),
		cmocka_unit_test(test_predict_adds_the_handoffs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
