// SPDX-License-Identifier: GPL-2.0
/*
 * wakereach: a lock's holders reach the progress when they make it, or
 * wake, through any chain of threads, one that does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "array.h"
#include "wakereach.h"

#define UNUSED __attribute__((unused))

static bool judge(const uint32_t *holders, size_t n_holders,
		  const uint32_t *progress, size_t n_progress,
		  const struct whatif_wake *wakes, size_t n_wakes)
{
	struct wakereach_graph g = {
		holders, n_holders, progress, n_progress, wakes, n_wakes,
	};
	bool reached = true;

	assert_int_equal(wakereach__judge(&g, &reached), 0);
	return reached;
}

/* Workers that hold the lock and make the items. */
static void test_holders_that_make_progress(void **state UNUSED)
{
	static const uint32_t workers[] = { 11, 12, 13 };

	assert_true(judge(workers, 3, workers + 1, 1, NULL, 0));
}

/* Threads that only wake each other: a decoy, however busy. */
static void test_decoy_that_wakes_only_its_own(void **state UNUSED)
{
	static const uint32_t decoys[] = { 21, 22, 23, 24 };
	static const uint32_t workers[] = { 11, 12, 13 };
	static const struct whatif_wake wakes[] = {
		{ 21, 22 }, { 22, 23 }, { 23, 24 }, { 24, 21 },
		{ 11, 12 }, { 12, 13 }, { 13, 11 },
		/* A worker's interrupt woke a decoy: the other way. */
		{ 12, 21 },
	};

	assert_false(judge(decoys, 4, workers, 3, wakes, ARRAY_SIZE(wakes)));
}

/* A feeder that holds the lock and posts to the workers. */
static void test_feeder_reaches_through_a_wakeup(void **state UNUSED)
{
	static const uint32_t feeder[] = { 30 };
	static const uint32_t workers[] = { 11, 12 };
	static const struct whatif_wake wakes[] = { { 11, 30 }, { 30, 12 } };

	assert_true(judge(feeder, 1, workers, 2, wakes, ARRAY_SIZE(wakes)));
}

/* A chain, listed against its order: every pass follows each edge. */
static void test_chain_in_any_order(void **state UNUSED)
{
	static const uint32_t holder[] = { 1 };
	static const uint32_t worker[] = { 5 };
	static const struct whatif_wake wakes[] = {
		{ 4, 5 }, { 3, 4 }, { 2, 3 }, { 1, 2 }, { 9, 1 },
	};

	assert_true(judge(holder, 1, worker, 1, wakes, ARRAY_SIZE(wakes)));
	/* The same chain, broken in the middle. */
	assert_false(judge(holder, 1, worker, 1, wakes + 1, 1));
	assert_false(judge(holder, 1, worker, 1, NULL, 0));
}

/* The progress wakes the holder, never the other way: apart. */
static void test_only_woken_by_the_progress(void **state UNUSED)
{
	static const uint32_t holder[] = { 40 };
	static const uint32_t workers[] = { 11 };
	static const struct whatif_wake wakes[] = { { 11, 40 }, { 40, 40 } };

	assert_false(judge(holder, 1, workers, 1, wakes, ARRAY_SIZE(wakes)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holders_that_make_progress),
		cmocka_unit_test(test_decoy_that_wakes_only_its_own),
		cmocka_unit_test(test_feeder_reaches_through_a_wakeup),
		cmocka_unit_test(test_chain_in_any_order),
		cmocka_unit_test(test_only_woken_by_the_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
