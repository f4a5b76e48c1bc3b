// SPDX-License-Identifier: GPL-2.0
/* findout.c: the threads' and folded locks' weights survive a recording,
 * exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "findout.h"

static void test_weights_round_trip(void **state)
{
	struct findings_thread t[] = {
		{ .tid = 300, .busy = 0.1 },
		{ .tid = 20, .busy = 1.0 / 3.0 },
		{ .tid = 4000000, .busy = 0 },
	};
	struct findings_lock_weight l[] = {
		{ .pid = 7, .object = 0x5637fea6b620, .busy = 0.045 },
		{ .pid = 9, .object = 0x10, .busy = 1.0 / 7.0 },
	};
	struct findout f = { .threads = t, .n_threads = 3,
			     .folded = l, .n_folded = 2 }, back;
	char *text = findout__weights_text(&f);

	(void)state;
	assert_non_null(text);
	assert_int_equal(findout__weights_parse(text, &back), 0);
	assert_int_equal(back.n_threads, 3);
	assert_true(findout__weigh(&back, 0, 20, 0x10) == 1.0 / 3.0);
	assert_true(findout__weigh(&back, 0, 300, 0) == 0.1);
	assert_true(findout__weigh(&back, 0, 4000000, 0) == 0);
	/* A thread not in the list weighs 1. */
	assert_true(findout__weigh(&back, 0, 21, 0) == 1.0);
	/* The rows of exited threads (tid 0) weigh as their lock's. */
	assert_int_equal(back.n_folded, 2);
	assert_true(findout__weigh(&back, 7, 0, 0x5637fea6b620) == 0.045);
	assert_true(findout__weigh(&back, 9, 0, 0x10) == 1.0 / 7.0);
	assert_true(findout__weigh(&back, 7, 0, 0x10) == 1.0);
	findout__free(&back);
	free(text);
	assert_int_equal(findout__weights_parse("20:x", &back), -EINVAL);
	assert_int_equal(findout__weights_parse("@7:0.5", &back), -EINVAL);
	assert_int_equal(findout__weights_parse("", &back), 0);
	assert_int_equal(back.n_threads, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
