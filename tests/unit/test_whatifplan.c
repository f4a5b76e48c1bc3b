// SPDX-License-Identifier: GPL-2.0
/*
 * whatifplan: the experiment's windows and delay budget from the hold
 * phase's rate, holds per second and mean hold.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "whatifplan.h"

#define UNUSED __attribute__((unused))
#define MAX_DELAY_S 0.010

static void make(double rate, double holds_per_s, double hold_s,
		 struct whatifplan *p, int want)
{
	struct whatifplan_input in = { rate, holds_per_s, hold_s,
				       MAX_DELAY_S, 0 };

	assert_int_equal(whatifplan__make(&in, p), want);
}

/* The delay the plan's windows inject at most, summed from its windows. */
static double windows_spend(const struct whatifplan *p, double holds_per_s)
{
	double sum = 0;

	for (unsigned int i = 0; i < whatifplan__windows(p); i++)
		sum += whatifplan__delay(p, i) * holds_per_s * p->window_s;
	return sum;
}

/* The test target: 200 us held 95% of the time, 4000 items/s: the
   former plan (65 windows of 0.08 s, the 3 s budget), unchanged. */
static void test_short_holds_keep_every_round(void **state UNUSED)
{
	struct whatifplan p;

	make(4000, 4750, 200e-6, &p, 0);
	assert_int_equal(p.rounds, WHATIFPLAN_ROUNDS_MAX);
	assert_int_equal(whatifplan__windows(&p), 65);
	assert_true(fabs(p.window_s - WHATIFPLAN_WINDOW_MIN_S) < 1e-12);
	assert_true(fabs(p.delay_s[0] - 50e-6) < 1e-12);
	assert_true(fabs(p.delay_s[1] - 100e-6) < 1e-12);
	/* 16 rounds x 0.08 s x 4750/s x 150 us = 0.912 s. */
	assert_true(fabs(p.spend_s - 16 * 0.08 * 4750 * 150e-6) < 1e-9);
	assert_true(fabs(p.spend_s - windows_spend(&p, 4750)) < 1e-9);
	assert_true(fabs(p.budget_s - WHATIFPLAN_BUDGET_MIN_S) < 1e-12);
}

/*
 * The former plan, for every lock released 40 times or more within the
 * units' window and held at most all the time: 16 rounds of windows of
 * 100 units, within [0.08, 0.5] s, and the 3 s budget as long as the
 * rounds are expected to inject at most 2 s.
 */
static void test_holds_per_unit_keep_the_former_windows(void **state UNUSED)
{
	static const double rates[] = { 20, 150, 200, 400, 1000, 1250,
					4000, 50000 };
	static const double per_unit[] = { 0.4, 1, 3 };
	static const double held[] = { 0.05, 0.5, 0.95, 1 };

	for (size_t r = 0; r < sizeof(rates) / sizeof(*rates); r++)
		for (size_t u = 0; u < sizeof(per_unit) / sizeof(*per_unit); u++)
			for (size_t h = 0; h < sizeof(held) / sizeof(*held); h++) {
				double holds = rates[r] * per_unit[u];
				double former = fmin(fmax(100 / rates[r], 0.08),
						     0.5);
				struct whatifplan p;

				if (holds * former < WHATIFPLAN_MIN_HOLDS)
					continue;	/* the holds' window */
				make(rates[r], holds, held[h] / holds, &p, 0);
				assert_int_equal(whatifplan__windows(&p), 65);
				assert_true(fabs(p.window_s - former) < 1e-12);
				if (p.spend_s <= 2.0)
					assert_true(p.budget_s ==
						    WHATIFPLAN_BUDGET_MIN_S);
				else
					assert_true(fabs(p.budget_s - 1.5 *
							 p.spend_s) < 1e-9);
			}
}

/* Few units a second: the window holds MIN_UNITS of them. */
static void test_slow_progress_lengthens_the_window(void **state UNUSED)
{
	struct whatifplan p;

	make(400, 4750, 200e-6, &p, 0);
	assert_true(fabs(p.window_s - WHATIFPLAN_MIN_UNITS / 400) < 1e-12);
	make(50, 4750, 200e-6, &p, 0);
	assert_true(fabs(p.window_s - WHATIFPLAN_UNITS_MAX_S) < 1e-12);
	/* A hold a unit, 3.8 ms each (preempted): still the units'
	   window, every round, the budget past 3 s (16 x 0.4 s x 250/s x
	   2.85 ms = 4.56 s expected). */
	make(250, 250, 3.8e-3, &p, 0);
	assert_true(fabs(p.window_s - WHATIFPLAN_MIN_UNITS / 250) < 1e-12);
	assert_int_equal(p.rounds, WHATIFPLAN_ROUNDS_MAX);
	assert_true(fabs(p.budget_s - 4.56 * WHATIFPLAN_MARGIN) < 1e-9);
	make(150, 150, 6.5e-3, &p, 0);
	assert_true(fabs(p.window_s - WHATIFPLAN_UNITS_MAX_S) < 1e-12);
}

/*
 * PostgreSQL's WALWriteLock on a slow disk: 20 ms held, 48 holds/s,
 * 665 commits/s.  The window holds 40 holds (0.83 s), not 100 commits
 * (0.15 s: 7 holds); the rounds fit the windows' time limit (13 of
 * 0.83 s windows) and the largest budget (0.6 s a round x 1.5: 11); the
 * budget is the spend with its margin, past the former fixed 3 s.
 */
static void test_long_holds_get_holds_per_window_and_budget(void **state UNUSED)
{
	struct whatifplan p;
	double window = WHATIFPLAN_MIN_HOLDS / 48;
	unsigned int rounds = 11;

	make(665, 48, 20e-3, &p, 0);
	assert_true(fabs(p.window_s - window) < 1e-12);
	assert_true(fabs(p.holds_per_window - WHATIFPLAN_MIN_HOLDS) < 1e-9);
	assert_int_equal(p.rounds, rounds);
	assert_true((double)whatifplan__windows(&p) * p.window_s <=
		    WHATIFPLAN_TIME_MAX_S);
	assert_true(fabs(p.delay_s[0] - 5e-3) < 1e-12);
	assert_true(fabs(p.delay_s[1] - 10e-3) < 1e-12);
	/* Each round: 40 holds x 15 ms = 0.6 s. */
	assert_true(fabs(p.spend_s - rounds * 40 * 15e-3) < 1e-9);
	assert_true(fabs(p.spend_s - windows_spend(&p, 48)) < 1e-9);
	assert_true(p.spend_s > WHATIFPLAN_BUDGET_MIN_S);
	assert_true(fabs(p.budget_s - fmin(p.spend_s * WHATIFPLAN_MARGIN,
					   WHATIFPLAN_BUDGET_MAX_S)) < 1e-9);
	assert_true(p.budget_s <= WHATIFPLAN_BUDGET_MAX_S);
}

/*
 * A hold phase measured on PostgreSQL (commit_delay 20 ms, 4 clients,
 * one UPDATE a transaction): 190 commits/s, WALWriteLock held 16.3 ms,
 * 59.7 times a second.  The former windows of 0.5 s (the units') would
 * inject 16 x 0.5 s x 59.7/s x 12.2 ms = 5.8 s, past the fixed 3 s
 * (that run's budget was spent and it stopped early); the plan: 40
 * holds a window (0.67 s), 13 rounds within the largest budget, 6.4 s
 * expected, a budget of 9.6 s.
 */
static void test_measured_walwritelock(void **state UNUSED)
{
	struct whatifplan p;
	double former = 16 * 0.5 * 59.7 * 0.75 * 16.3e-3;

	assert_true(former > WHATIFPLAN_BUDGET_MIN_S);
	make(190, 59.7, 16.3e-3, &p, 0);
	assert_true(fabs(p.window_s - 40 / 59.7) < 1e-12);
	assert_int_equal(p.rounds, 13);
	assert_int_equal(whatifplan__windows(&p), 53);
	assert_true(fabs(p.spend_s - 13 * 40 * 0.75 * 16.3e-3) < 1e-9);
	assert_true(fabs(p.budget_s - 1.5 * p.spend_s) < 1e-9);
	assert_true(p.budget_s > 9.5 && p.budget_s <= WHATIFPLAN_BUDGET_MAX_S);
}

/* Holds past 20 ms: each delay at most 10 ms, so 25% and 50% merge. */
static void test_delay_per_hold_is_bounded(void **state UNUSED)
{
	struct whatifplan p;

	make(100, 10, 60e-3, &p, 0);
	assert_true(fabs(p.delay_s[0] - MAX_DELAY_S) < 1e-12);
	assert_true(fabs(p.delay_s[1] - MAX_DELAY_S) < 1e-12);
	for (unsigned int i = 0; i < whatifplan__windows(&p); i++)
		assert_true(whatifplan__delay(&p, i) <= MAX_DELAY_S);
}

/*
 * An exclusive lock held all the time, 1 s windows: the largest budget
 * cuts the rounds (0.75 s a round, x 1.5 margin, within 10 s: 8), never
 * below the least.
 */
static void test_budget_cuts_rounds(void **state UNUSED)
{
	struct whatifplan p;

	make(10, 25, 40e-3, &p, 0);
	assert_true(fabs(p.window_s - WHATIFPLAN_WINDOW_MAX_S) < 1e-12);
	/* 25 holds x (10 + 10 ms) = 0.5 s a round: the time limit cuts
	   first (11 rounds), 5.5 s x 1.5 is within the budget. */
	assert_int_equal(p.rounds, 11);
	make(10, 40, 25e-3, &p, 0);
	/* 40 x (6.25 + 10 ms) = 0.65 s a round: 10 s / 1.5 / 0.65 -> 10. */
	assert_int_equal(p.rounds, 10);
	assert_true(p.spend_s * WHATIFPLAN_MARGIN <= WHATIFPLAN_BUDGET_MAX_S);
	assert_true(fabs(p.budget_s - p.spend_s * WHATIFPLAN_MARGIN) < 1e-9);
}

/* A time limit below the plan's own: the rounds cut to fit it, down
   to the fewest; past that, -ETIME with what they would take. */
static void test_time_limit_cuts_the_rounds(void **state UNUSED)
{
	struct whatifplan_input in = { 665, 48, 20e-3, MAX_DELAY_S, 30.0 };
	struct whatifplan p, whole;

	make(665, 48, 20e-3, &whole, 0);
	assert_int_equal(whatifplan__make(&in, &p), 0);
	assert_true(p.rounds < whole.rounds);
	assert_true(p.rounds >= WHATIFPLAN_ROUNDS_MIN);
	assert_true(whatifplan__time(&p) <= 30.0);
	assert_true(whatifplan__time(&p) + 4 * p.window_s > 30.0);
	assert_true(fabs(p.window_s - whole.window_s) < 1e-12);
	in.time_max_s = 5.0;
	assert_int_equal(whatifplan__make(&in, &p), -ETIME);
	assert_int_equal(p.rounds, WHATIFPLAN_ROUNDS_MIN);
	assert_true(whatifplan__time(&p) > 5.0);
	/* 0: the plan's own limit. */
	in.time_max_s = 0;
	assert_int_equal(whatifplan__make(&in, &p), 0);
	assert_int_equal(p.rounds, whole.rounds);
}

/* A read lock held by 8 threads at once: no plan fits; said, with what
   the least rounds would need. */
static void test_shared_lock_past_the_budget(void **state UNUSED)
{
	struct whatifplan p;

	make(10, 400, 20e-3, &p, -ENOSPC);
	assert_int_equal(p.rounds, WHATIFPLAN_ROUNDS_MIN);
	assert_true(p.spend_s * WHATIFPLAN_MARGIN > WHATIFPLAN_BUDGET_MAX_S);
	assert_true(fabs(p.spend_s - windows_spend(&p, 400)) < 1e-9);
}

static void test_windows_alternate(void **state UNUSED)
{
	struct whatifplan p;
	unsigned int small = 0, large = 0, refs = 0;

	make(4000, 4750, 200e-6, &p, 0);
	for (unsigned int i = 0; i < whatifplan__windows(&p); i++) {
		double d = whatifplan__delay(&p, i);

		if (i % 2 == 0) {
			assert_true(d == 0);	/* a reference each side */
			refs++;
		} else if (d == p.delay_s[0]) {
			small++;
		} else {
			assert_true(d == p.delay_s[1]);
			large++;
		}
	}
	assert_int_equal(small, p.rounds);
	assert_int_equal(large, p.rounds);
	assert_int_equal(refs, p.rounds * 2 + 1);
	/* Round 0 is +25% then +50%, round 1 the other way. */
	assert_true(whatifplan__delay(&p, 1) == p.delay_s[0]);
	assert_true(whatifplan__delay(&p, 3) == p.delay_s[1]);
	assert_true(whatifplan__delay(&p, 5) == p.delay_s[1]);
	assert_true(whatifplan__delay(&p, 7) == p.delay_s[0]);
}

static void test_nonsense_input(void **state UNUSED)
{
	struct whatifplan p;

	make(0, 10, 1e-3, &p, -EINVAL);
	make(10, 0, 1e-3, &p, -EINVAL);
	make(10, 10, 0, &p, -EINVAL);
	make(NAN, 10, 1e-3, &p, -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_holds_keep_every_round),
		cmocka_unit_test(test_holds_per_unit_keep_the_former_windows),
		cmocka_unit_test(test_slow_progress_lengthens_the_window),
		cmocka_unit_test(test_long_holds_get_holds_per_window_and_budget),
		cmocka_unit_test(test_measured_walwritelock),
		cmocka_unit_test(test_delay_per_hold_is_bounded),
		cmocka_unit_test(test_budget_cuts_rounds),
		cmocka_unit_test(test_time_limit_cuts_the_rounds),
		cmocka_unit_test(test_shared_lock_past_the_budget),
		cmocka_unit_test(test_windows_alternate),
		cmocka_unit_test(test_nonsense_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
