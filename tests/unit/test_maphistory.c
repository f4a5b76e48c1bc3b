// SPDX-License-Identifier: GPL-2.0
/*
 * maphistory: code mappings now and before, bounded under dlopen/dlclose
 * churn, newest first, with paths that stay valid.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "maphistory.h"
#include "procmaps.h"

#define UNUSED __attribute__((unused))

#define EXE  "555555554000-555555556000 r-xp 00001000 08:01 11 /usr/bin/target\n"
#define HEAP "555555560000-555555581000 rw-p 00000000 00:00 0 [heap]\n"
#define LIBC "7ffff7c28000-7ffff7dbd000 r-xp 00028000 08:01 22 /usr/lib/libc.so.6\n"
#define LIBA "7ffff7fb0000-7ffff7fb1000 r-xp 00001000 08:01 33 /tmp/liba.so\n"
#define LIBB "7ffff7fb0000-7ffff7fb2000 r-xp 00001000 08:01 44 /tmp/libb.so\n"
#define DATA "7ffff7fb3000-7ffff7fb4000 rw-p 00003000 08:01 33 /tmp/liba.so\n"

static struct procmaps *maps_of(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct procmaps *maps;

	assert_non_null(f);
	assert_int_equal(procmaps__parse(f, &maps), 0);
	fclose(f);
	return maps;
}

static int update(struct maphistory *h, const char *text)
{
	struct procmaps *maps = maps_of(text);
	int ret = maphistory__update(h, maps);

	procmaps__free(maps);
	return ret;
}

static void test_only_code_and_no_change_is_no_change(void **state UNUSED)
{
	struct maphistory *h;

	assert_int_equal(maphistory__new(16, &h), 0);
	assert_int_equal(update(h, EXE HEAP LIBC LIBA DATA), 1);
	assert_int_equal(maphistory__current(h), 3);
	/* The heap and a library's data are no code: no change. */
	assert_int_equal(update(h, EXE LIBC LIBA), 0);
	assert_null(maphistory__find(h, 0x555555560000ull));
	assert_string_equal(maphistory__find(h, 0x7ffff7c30000ull)->path,
			    "/usr/lib/libc.so.6");
	maphistory__free(h);
}

static void test_churn_keeps_one_unmapped_entry(void **state UNUSED)
{
	const struct procmaps_entry *e;
	const char *path;
	struct maphistory *h;

	assert_int_equal(maphistory__new(16, &h), 0);
	assert_int_equal(update(h, EXE LIBC LIBA), 1);
	path = maphistory__find(h, 0x7ffff7fb0010ull)->path;
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(update(h, EXE LIBC), 1);
		assert_int_equal(update(h, EXE LIBC LIBA), 1);
	}
	assert_int_equal(update(h, EXE LIBC), 1);
	assert_int_equal(maphistory__current(h), 2);
	assert_int_equal(maphistory__gone(h), 1);
	/* Unloaded: still named, by the very string handed out before. */
	e = maphistory__find(h, 0x7ffff7fb0010ull);
	assert_non_null(e);
	assert_ptr_equal(e->path, path);
	assert_int_equal(e->inode, 33);
	maphistory__free(h);
}

static void test_what_is_mapped_now_wins(void **state UNUSED)
{
	struct maphistory *h;

	assert_int_equal(maphistory__new(16, &h), 0);
	assert_int_equal(update(h, EXE LIBA), 1);
	assert_int_equal(update(h, EXE LIBB), 1);
	assert_string_equal(maphistory__find(h, 0x7ffff7fb0010ull)->path,
			    "/tmp/libb.so");
	/* Past liba's end: only libb ever held it. */
	assert_string_equal(maphistory__find(h, 0x7ffff7fb1010ull)->path,
			    "/tmp/libb.so");
	/* Both gone: the newest unmapped first. */
	assert_int_equal(update(h, EXE), 1);
	assert_string_equal(maphistory__find(h, 0x7ffff7fb0010ull)->path,
			    "/tmp/libb.so");
	/* liba again, then gone: it is the newest now. */
	assert_int_equal(update(h, EXE LIBA), 1);
	assert_int_equal(update(h, EXE), 1);
	assert_int_equal(maphistory__gone(h), 2);
	assert_string_equal(maphistory__find(h, 0x7ffff7fb0010ull)->path,
			    "/tmp/liba.so");
	maphistory__free(h);
}

static void test_unmapped_entries_are_bounded(void **state UNUSED)
{
	struct maphistory *h;
	char text[256];

	assert_int_equal(maphistory__new(4, &h), 0);
	/* Ten libraries, each loaded at its own address and unloaded. */
	for (int i = 0; i < 10; i++) {
		snprintf(text, sizeof(text), EXE
			 "7ffff0%02x0000-7ffff0%02x1000 r-xp 00001000 08:01 %d /tmp/l%d.so\n",
			 i, i, 100 + i, i);
		assert_int_equal(update(h, text), 1);
		assert_int_equal(update(h, EXE), 1);
	}
	assert_int_equal(maphistory__gone(h), 4);
	/* The oldest went first. */
	assert_null(maphistory__find(h, 0x7ffff0000010ull));
	assert_null(maphistory__find(h, 0x7ffff0050010ull));
	assert_string_equal(maphistory__find(h, 0x7ffff0060010ull)->path,
			    "/tmp/l6.so");
	assert_string_equal(maphistory__find(h, 0x7ffff0090010ull)->path,
			    "/tmp/l9.so");
	maphistory__free(h);
}

static void test_nothing_kept_when_asked_for_none(void **state UNUSED)
{
	struct maphistory *h;

	assert_int_equal(maphistory__new(0, &h), 0);
	assert_int_equal(update(h, EXE LIBA), 1);
	assert_int_equal(update(h, EXE), 1);
	assert_int_equal(maphistory__gone(h), 0);
	assert_null(maphistory__find(h, 0x7ffff7fb0010ull));
	maphistory__free(h);
	maphistory__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_code_and_no_change_is_no_change),
		cmocka_unit_test(test_churn_keeps_one_unmapped_entry),
		cmocka_unit_test(test_what_is_mapped_now_wins),
		cmocka_unit_test(test_unmapped_entries_are_bounded),
		cmocka_unit_test(test_nothing_kept_when_asked_for_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
