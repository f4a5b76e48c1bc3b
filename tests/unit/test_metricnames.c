// SPDX-License-Identifier: GPL-2.0
/*
 * metricnames: the labels of /metrics carry no build machine's
 * directories, and with coalescing no instance's index, offset or
 * address: a program's objects of one kind share a series.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metricnames.h"

#define UNUSED __attribute__((unused))

static void test_callsite_has_no_directories(void **state UNUSED)
{
	const struct symbol_info full = {
		.module = "/usr/lib/postgresql/15/bin/postgres",
		.function = "LWLockAcquire",
		.file = "/build/postgresql-15/src/backend/storage/lmgr/lwlock.c",
		.line = 1301,
	};
	const struct symbol_info nofile = {
		.module = "/usr/lib/x86_64-linux-gnu/libc.so.6",
		.function = "sem_wait", .function_offset = 0x2a,
	};
	const struct symbol_info nothing = {
		.module = "/opt/app/bin/server", .module_offset = 0x1234,
	};
	const struct symbol_info none = { 0 };
	char buf[512];

	metricnames__callsite(&full, 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "LWLockAcquire lwlock.c:1301");
	metricnames__callsite(&nofile, 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "sem_wait+0x2a");
	metricnames__callsite(&nothing, 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "server+0x1234");
	metricnames__callsite(&none, 0x1000, buf, sizeof(buf));
	assert_string_equal(buf, "0x1000");
}

static void test_coalesced_objects_share_a_name(void **state UNUSED)
{
	char buf[512];

	metricnames__object("big_lock", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "big_lock");
	metricnames__object(NULL, 0x55d0c0de1040, true, buf, sizeof(buf));
	assert_string_equal(buf, "(unnamed)");
	metricnames__object("table[3].lock", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "table[].lock");
	metricnames__object("grid[12][7]", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "grid[][]");
	metricnames__object("shared memory+0x4c0", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "shared memory");
	metricnames__object("buf+0x10.lock", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "buf.lock");
	/* Not an index or an offset: kept. */
	metricnames__object("(struct q *)->lock", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "(struct q *)->lock");
	metricnames__object("a[i]+0xz", 0x10, true, buf, sizeof(buf));
	assert_string_equal(buf, "a[i]+0xz");
}

static void test_no_coalesce_names_each_object(void **state UNUSED)
{
	char buf[512];

	metricnames__object(NULL, 0x55d0c0de1040, false, buf, sizeof(buf));
	assert_string_equal(buf, "0x55d0c0de1040");
	metricnames__object("table[3].lock", 0x10, false, buf, sizeof(buf));
	assert_string_equal(buf, "table[3].lock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callsite_has_no_directories),
		cmocka_unit_test(test_coalesced_objects_share_a_name),
		cmocka_unit_test(test_no_coalesce_names_each_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
