// SPDX-License-Identifier: GPL-2.0
/*
 * waiting: which in-flight states are waits in progress, and how long
 * each has waited so far.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "waiting.h"

#define UNUSED __attribute__((unused))

static struct sp_contended contended(uint64_t uaddr, uint64_t t0,
				     uint64_t episode_ns, uint32_t counted)
{
	return (struct sp_contended){
		.key = { .object = uaddr, .callsite = 0x401000, .tid = 7,
			 .type = SP_TYPE_MUTEX },
		.uaddr = uaddr, .t0 = t0, .episode_ns = episode_ns,
		.counted = counted,
	};
}

static void test_contended_blocked_now(void **state UNUSED)
{
	struct sp_contended st = contended(0x1000, 5000, 300, 0);
	struct sp_key key;
	uint64_t ns = 0;

	assert_true(waiting__contended(&st, 9000, &key, &ns));
	assert_int_equal(ns, 300 + 4000);	/* earlier waits, and this one */
	assert_int_equal(key.object, 0x1000);
	assert_int_equal(key.tid, 7);
}

/* Between two waits of one acquisition (a signal handler runs). */
static void test_contended_interrupted(void **state UNUSED)
{
	struct sp_contended st = contended(0x1000, 0, 2500, 0);
	struct sp_key key;
	uint64_t ns = 0;

	assert_true(waiting__contended(&st, 9000, &key, &ns));
	assert_int_equal(ns, 2500);
}

static void test_contended_not_waiting(void **state UNUSED)
{
	struct sp_contended ended = contended(0, 0, 2500, 1);
	/* A mutex counted at its wakeup, held until its unlock: not a wait. */
	struct sp_contended holding = contended(0x1000, 0, 2500, 1);
	struct sp_contended never = contended(0, 0, 0, 0);
	struct sp_key key;
	uint64_t ns;

	assert_false(waiting__contended(&ended, 9000, &key, &ns));
	assert_false(waiting__contended(&holding, 9000, &key, &ns));
	assert_false(waiting__contended(&never, 9000, &key, &ns));
}

static void test_full_call_in_flight(void **state UNUSED)
{
	/* An outer call, and the innermost one: the thread waits in it. */
	struct sp_inflight call = {
		.calls = {
			{ .t0 = 500, .object = 0x1000, .callsite = 0x401000,
			  .sp = 0x7ffd0000, .type = SP_TYPE_MUTEX },
			{ .t0 = 1000, .object = 0x2000, .callsite = 0x402000,
			  .sp = 0x7ffc0000, .type = SP_TYPE_CONDVAR },
		},
		.depth = 2,
	};
	struct sp_key key;
	uint64_t ns;

	assert_true(waiting__full(&call, 42, 6000, &key, &ns));
	assert_int_equal(ns, 5000);
	assert_int_equal(key.object, 0x2000);
	assert_int_equal(key.callsite, 0x402000);
	assert_int_equal(key.type, SP_TYPE_CONDVAR);
	assert_int_equal(key.tid, 42);
	call.depth = 0;
	assert_false(waiting__full(&call, 42, 6000, &key, &ns));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended_blocked_now),
		cmocka_unit_test(test_contended_interrupted),
		cmocka_unit_test(test_contended_not_waiting),
		cmocka_unit_test(test_full_call_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
