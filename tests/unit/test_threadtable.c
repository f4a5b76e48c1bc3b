// SPDX-License-Identifier: GPL-2.0
/*
 * threadtable: the /proc/PID/task/TID/stat line it seeds threads from
 * (the map side needs BPF and is covered by the integration tests).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "threadtable.h"

#define UNUSED __attribute__((unused))

static void test_parse_stat(void **state UNUSED)
{
	char st, comm[16];

	assert_int_equal(threadtable__parse_stat("42 (worker) S 1 42 42 0 -1",
						 &st, comm, sizeof(comm)), 0);
	assert_int_equal(st, 'S');
	assert_string_equal(comm, "worker");
	/* A name with spaces and parentheses: the last ')' ends it. */
	assert_int_equal(threadtable__parse_stat("7 (a) (b) c) R 1 2",
						 &st, comm, sizeof(comm)), 0);
	assert_int_equal(st, 'R');
	assert_string_equal(comm, "a) (b) c");
	/* Cut to the buffer. */
	assert_int_equal(threadtable__parse_stat("7 (abcdefghij) D 1",
						 &st, comm, 5), 0);
	assert_string_equal(comm, "abcd");
	assert_int_equal(st, 'D');
}

static void test_parse_stat_bad(void **state UNUSED)
{
	char st, comm[16];

	assert_int_equal(threadtable__parse_stat("", &st, comm, sizeof(comm)),
			 -EINVAL);
	assert_int_equal(threadtable__parse_stat("7 (x", &st, comm, sizeof(comm)),
			 -EINVAL);
	assert_int_equal(threadtable__parse_stat("7 (x)", &st, comm, sizeof(comm)),
			 -EINVAL);
	assert_int_equal(threadtable__parse_stat("7 x) S", &st, comm, sizeof(comm)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_stat_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
