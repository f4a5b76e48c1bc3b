// SPDX-License-Identifier: GPL-2.0
/*
 * hist: bucket bounds as the BPF programs fill them, quantile estimates,
 * and bpftrace's hist() lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hist.h"

#define UNUSED __attribute__((unused))

static void test_slots_are_log2(void **state UNUSED)
{
	assert_int_equal(hist__slot(0), 0);
	assert_int_equal(hist__slot(1), 1);
	assert_int_equal(hist__slot(2), 2);
	assert_int_equal(hist__slot(3), 2);
	assert_int_equal(hist__slot(4), 3);
	assert_int_equal(hist__slot(1023), 10);
	assert_int_equal(hist__slot(1024), 11);
	assert_int_equal(hist__slot(3000000), 22);	/* [2M, 4M) */
	/* Everything from 2^46 ns on is in the last slot. */
	assert_int_equal(hist__slot(1ull << 46), SP_HIST_SLOTS - 1);
	assert_int_equal(hist__slot(UINT64_MAX), SP_HIST_SLOTS - 1);
}

static void test_bounds_hold_their_waits(void **state UNUSED)
{
	const uint64_t waits[] = { 0, 1, 2, 5, 999, 1000, 1024, 123456789,
				   (1ull << 45) + 3 };

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		size_t k = hist__slot(waits[i]);

		assert_true(hist__lower(k) <= waits[i]);
		assert_true(waits[i] < hist__upper(k));
	}
	assert_int_equal(hist__lower(0), 0);
	assert_int_equal(hist__upper(0), 1);
	assert_int_equal(hist__lower(11), 1024);
	assert_int_equal(hist__upper(11), 2048);
	assert_true(hist__upper(SP_HIST_SLOTS - 1) == UINT64_MAX);
}

static void test_total(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 };

	assert_int_equal(hist__total(h), 0);
	h[0] = 2;
	h[22] = 40;
	h[SP_HIST_SLOTS - 1] = 1;
	assert_int_equal(hist__total(h), 43);
}

static void test_quantile_of_nothing(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 }, v = 7;

	assert_false(hist__quantile(h, 0.5, 0, &v));
	assert_int_equal(v, 7);
}

/* 100 waits spread over [1M, 2M): interpolation is close to exact. */
static void test_quantile_inside_one_bucket(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 }, v;

	h[hist__slot(1 << 20)] = 100;
	assert_true(hist__quantile(h, 0.5, 0, &v));
	assert_int_equal(v, (1 << 20) + (1 << 19));
	assert_true(hist__quantile(h, 0.99, 0, &v));
	assert_true(v > (1 << 20) + (1 << 20) * 98 / 100);
	assert_true(v < (2 << 20));
}

/* The longest wait bounds the estimate inside its bucket. */
static void test_quantile_capped_by_max(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 }, v;

	h[hist__slot(3000000)] = 10;		/* [2M, 4M) */
	assert_true(hist__quantile(h, 1.0, 3000000, &v));
	assert_int_equal(v, 3000000);
	assert_true(hist__quantile(h, 0.5, 3000000, &v));
	assert_true(v >= (2 << 20) && v <= 3000000);
}

static void test_quantile_picks_the_bucket(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 }, v;

	h[hist__slot(1000)] = 98;		/* [512, 1K) */
	h[hist__slot(5000000)] = 2;		/* [4M, 8M) */
	assert_true(hist__quantile(h, 0.5, 0, &v));
	assert_true(v >= 512 && v < 1024);
	assert_true(hist__quantile(h, 0.99, 0, &v));
	assert_true(v >= (4 << 20) && v < (8 << 20));
	h[0] = 1000;
	assert_true(hist__quantile(h, 0.5, 0, &v));
	assert_int_equal(v, 0);
}

static void test_labels_as_bpftrace(void **state UNUSED)
{
	char buf[40];

	hist__label(0, buf, sizeof(buf));
	assert_string_equal(buf, "[0]");
	hist__label(1, buf, sizeof(buf));
	assert_string_equal(buf, "[1]");
	hist__label(2, buf, sizeof(buf));
	assert_string_equal(buf, "[2, 4)");
	hist__label(10, buf, sizeof(buf));
	assert_string_equal(buf, "[512, 1K)");
	hist__label(11, buf, sizeof(buf));
	assert_string_equal(buf, "[1K, 2K)");
	hist__label(22, buf, sizeof(buf));
	assert_string_equal(buf, "[2M, 4M)");
	hist__label(31, buf, sizeof(buf));
	assert_string_equal(buf, "[1G, 2G)");
	hist__label(SP_HIST_SLOTS - 1, buf, sizeof(buf));
	assert_string_equal(buf, "[64T, ...)");
}

struct collected {
	char text[4096];
	int lines;
};

static void collect(const char *line, void *arg)
{
	struct collected *c = arg;

	strcat(c->text, line);
	strcat(c->text, "\n");
	c->lines++;
}

static void test_lines_from_first_to_last_bucket(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 };
	struct collected c = { "", 0 };

	assert_int_equal(hist__lines(h, collect, &c), 0);
	assert_int_equal(c.lines, 0);
	h[hist__slot(1500)] = 4;	/* [1K, 2K) */
	h[hist__slot(5000)] = 2;	/* [4K, 8K) */
	assert_int_equal(hist__lines(h, collect, &c), 3);
	assert_string_equal(c.text,
		"[1K, 2K)               4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[2K, 4K)               0 |                                                    |\n"
		"[4K, 8K)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n");
}

/* A bucket with waits gets at least one '@', however full the others. */
static void test_lines_small_bucket_visible(void **state UNUSED)
{
	uint64_t h[SP_HIST_SLOTS] = { 0 };
	struct collected c = { "", 0 };

	h[3] = 1000000;
	h[4] = 1;
	assert_int_equal(hist__lines(h, collect, &c), 2);
	assert_non_null(strstr(c.text, "       1 |@ "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_are_log2),
		cmocka_unit_test(test_bounds_hold_their_waits),
		cmocka_unit_test(test_total),
		cmocka_unit_test(test_quantile_of_nothing),
		cmocka_unit_test(test_quantile_inside_one_bucket),
		cmocka_unit_test(test_quantile_capped_by_max),
		cmocka_unit_test(test_quantile_picks_the_bucket),
		cmocka_unit_test(test_labels_as_bpftrace),
		cmocka_unit_test(test_lines_from_first_to_last_bucket),
		cmocka_unit_test(test_lines_small_bucket_visible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
