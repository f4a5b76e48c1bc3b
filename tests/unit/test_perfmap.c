// SPDX-License-Identifier: GPL-2.0
/*
 * perfmap: a JIT's /tmp/perf-PID.map (this process's own, written by the
 * test): lookups inside and outside entries, the last of two entries at
 * one address winning, malformed lines skipped, a rewrite re-read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmap.h"

#define UNUSED __attribute__((unused))

static char path[64];

static void write_map(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int teardown(void **state UNUSED)
{
	unlink(path);
	return 0;
}

static void test_lookup(void **state UNUSED)
{
	struct perfmap *m;
	uint64_t off = 0;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	assert_int_equal(perfmap__new(getpid(), &m), 0);
	assert_int_not_equal(perfmap__refresh(m, true), 0);	/* no file yet */
	assert_null(perfmap__lookup(m, 0x1000, &off));
	write_map("1000 40 LFoo;::bar (compiled)\n"
		  "garbage line\n"
		  "2000 0 empty\n"
		  "3000 100 Interpreter\n"
		  "3000 20 recompiled\n");
	assert_int_equal(perfmap__refresh(m, true), 0);
	assert_string_equal(perfmap__lookup(m, 0x1000, &off), "LFoo;::bar (compiled)");
	assert_int_equal(off, 0);
	assert_string_equal(perfmap__lookup(m, 0x103f, &off), "LFoo;::bar (compiled)");
	assert_int_equal(off, 0x3f);
	assert_null(perfmap__lookup(m, 0x1040, &off));
	assert_null(perfmap__lookup(m, 0x2000, &off));
	assert_string_equal(perfmap__lookup(m, 0x3010, &off), "recompiled");
	assert_string_equal(perfmap__lookup(m, 0x3050, &off), "Interpreter");
	assert_null(perfmap__lookup(m, 0xfff, &off));
	/* A JIT appends: the longer file is read again. */
	write_map("1000 40 LFoo;::bar (compiled)\n5000 10 later\n");
	assert_int_equal(perfmap__refresh(m, true), 0);
	assert_string_equal(perfmap__lookup(m, 0x5008, &off), "later");
	assert_int_equal(off, 8);
	perfmap__free(m);
	perfmap__free(NULL);
	assert_null(perfmap__lookup(NULL, 0x1000, &off));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lookup, teardown),
	};

	return cmocka_run_group_tests_name("perfmap", tests, NULL, NULL);
}
