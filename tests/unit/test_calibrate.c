// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate: from single-call intervals to the figure subtracted per kind
 * of probed site, on a quiet and on a busy machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibrate.h"

#define UNUSED __attribute__((unused))

/* n intervals of base ns (+/- a little), `slowed` of them preempted. */
static void intervals(uint64_t *v, unsigned int n, uint64_t base,
		      unsigned int slowed)
{
	for (unsigned int i = 0; i < n; i++)
		v[i] = base + (i * 37) % 50;
	for (unsigned int i = 0; i < slowed; i++)
		v[(i * 7) % n] = 1000000 + i;	/* a millisecond preempted */
}

static void test_quiet_sample_is_stable_at_its_quartile(void **state UNUSED)
{
	uint64_t v[101];
	struct calibrate_sample s;

	intervals(v, 101, 14000, 3);
	calibrate__summarize(v, 101, &s);
	assert_int_equal(s.calls, 101);
	assert_true(s.stable);
	assert_in_range(s.quartile_ns, 14000, 14050);
	assert_true(s.min_ns <= s.quartile_ns && s.quartile_ns <= s.median_ns);
	assert_true(s.max_ns >= 1000000);
}

/* Up to three in four calls preempted: the quartile is still clean. */
static void test_busy_sample_keeps_a_clean_quartile(void **state UNUSED)
{
	uint64_t v[101];
	struct calibrate_sample s;

	intervals(v, 101, 14000, 70);
	calibrate__summarize(v, 101, &s);
	assert_true(s.stable);
	assert_in_range(s.quartile_ns, 14000, 14050);
	assert_true(s.median_ns >= 1000000);
}

static void test_swamped_sample_is_unstable(void **state UNUSED)
{
	uint64_t v[101];
	struct calibrate_sample s;

	intervals(v, 101, 14000, 95);
	calibrate__summarize(v, 101, &s);
	assert_false(s.stable);
	assert_in_range(s.min_ns, 14000, 14050);
}

static struct calibration measured(uint64_t emulated, uint64_t stepped)
{
	struct calibration c;
	uint64_t v[101];

	memset(&c, 0, sizeof(c));
	if (emulated) {
		intervals(v, 101, emulated, 0);
		calibrate__summarize(v, 101, &c.sample[SP_SITE_EMULATED]);
		c.measured[SP_SITE_EMULATED] = true;
	}
	if (stepped) {
		intervals(v, 101, stepped, 0);
		calibrate__summarize(v, 101, &c.sample[SP_SITE_STEPPED]);
		c.measured[SP_SITE_STEPPED] = true;
	}
	return c;
}

static void test_both_kinds_keep_their_own_figures(void **state UNUSED)
{
	struct calibration c = measured(300, 14000);

	calibrate__settle(&c);
	assert_false(c.unstable);
	assert_in_range(c.by_site[SP_SITE_EMULATED], 300, 350);
	assert_in_range(c.by_site[SP_SITE_STEPPED], 14000, 14050);
}

static void test_a_kind_not_measured_gets_the_smaller(void **state UNUSED)
{
	struct calibration c = measured(0, 14000);

	calibrate__settle(&c);
	assert_false(c.unstable);
	assert_int_equal(c.by_site[SP_SITE_EMULATED],
			 c.by_site[SP_SITE_STEPPED]);
}

static void test_unstable_sample_takes_the_fastest_call(void **state UNUSED)
{
	struct calibration c = measured(300, 0);
	uint64_t v[101];

	intervals(v, 101, 14000, 95);
	calibrate__summarize(v, 101, &c.sample[SP_SITE_STEPPED]);
	c.measured[SP_SITE_STEPPED] = true;
	calibrate__settle(&c);
	assert_true(c.unstable);
	assert_int_equal(c.by_site[SP_SITE_STEPPED],
			 c.sample[SP_SITE_STEPPED].min_ns);
}

static void test_emulated_above_stepped_is_capped(void **state UNUSED)
{
	struct calibration c = measured(20000, 14000);

	calibrate__settle(&c);
	assert_true(c.unstable);
	assert_true(c.inverted);
	assert_int_equal(c.by_site[SP_SITE_EMULATED],
			 c.by_site[SP_SITE_STEPPED]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet_sample_is_stable_at_its_quartile),
		cmocka_unit_test(test_busy_sample_keeps_a_clean_quartile),
		cmocka_unit_test(test_swamped_sample_is_unstable),
		cmocka_unit_test(test_both_kinds_keep_their_own_figures),
		cmocka_unit_test(test_a_kind_not_measured_gets_the_smaller),
		cmocka_unit_test(test_unstable_sample_takes_the_fastest_call),
		cmocka_unit_test(test_emulated_above_stepped_is_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
