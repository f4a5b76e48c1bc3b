// SPDX-License-Identifier: GPL-2.0
/*
 * recnames: labels ("type object @ site", the sites' common source root
 * left out, function+0xoff or module+0xoff without a line), lookups by
 * key, call site and object, a save/load round trip, and refusal of
 * files it cannot read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recfixture.h"
#include "recnames.h"

#define UNUSED __attribute__((unused))

static struct recnames *load_fixture(const char *dir)
{
	struct recnames *n;
	char path[512];

	recfixture_write(dir, RECNAMES_NAME, recfixture_names);
	snprintf(path, sizeof(path), "%s/%s", dir, RECNAMES_NAME);
	assert_int_equal(recnames__load(path, &n), 0);
	return n;
}

static void check_fixture(struct recnames *n)
{
	struct symbol_info info;
	struct sp_key k;

	assert_int_equal(recnames__count(n), 3);
	assert_string_equal(recnames__label(n, 0), "mutex queue_lock @ server.c:118");
	assert_string_equal(recnames__label(n, 1), "futex 0xbbbb @ libc.so.6+0x2000");
	assert_string_equal(recnames__label(n, 2), "condvar 0xbbbb @ lib/queue.c:42");
	for (int i = 0; i < 3; i++) {
		k = recfixture_key(i, 77);
		k.owner_tid = 5;	/* neither tid nor owner names a span */
		assert_int_equal(recnames__find(n, &k), i);
	}
	k = recfixture_key(0, 1);
	k.stack_id = 9;
	assert_int_equal(recnames__find(n, &k), -1);
	assert_int_equal(recnames__callsite(n, 0x3000, &info), 0);
	assert_string_equal(info.function, "worker");
	assert_string_equal(info.file, "/src/app/lib/queue.c");
	assert_int_equal(info.line, 42);
	assert_int_equal(info.module_offset, 0x3000);
	assert_int_equal(info.function_offset, 0x10);
	assert_int_equal(recnames__callsite(n, 0x2000, &info), 0);
	assert_null(info.function);
	assert_null(info.file);
	assert_int_equal(recnames__callsite(n, 0x4000, &info), -ENOENT);
	assert_null(info.module);
	assert_string_equal(recnames__object(n, 0xaaaa), "queue_lock");
	assert_null(recnames__object(n, 0xbbbb));
	assert_null(recnames__object(n, 0xcccc));
	assert_string_equal(recnames__callsite_text(n, 0x1000), "server.c:118");
}

static void test_labels_and_lookups(void **state UNUSED)
{
	char *dir = recfixture_dir();
	struct recnames *n = load_fixture(dir);

	check_fixture(n);
	recnames__free(n);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_save_load_roundtrip(void **state UNUSED)
{
	char *dir = recfixture_dir();
	struct recnames *n = load_fixture(dir), *again;
	char path[512];

	snprintf(path, sizeof(path), "%s/copy", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	recnames__write(n, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(recnames__load(path, &again), 0);
	check_fixture(again);
	recnames__free(again);
	recnames__free(n);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_add_merges_duplicates(void **state UNUSED)
{
	struct recnames *n;

	assert_int_equal(recnames__new(&n), 0);
	for (int round = 0; round < 3000; round++) {
		for (int i = 2; i >= 0; i--) {
			struct sp_key k = recfixture_key(i, (uint32_t)round);

			assert_int_equal(recnames__add(n, &k), 0);
		}
	}
	assert_int_equal(recnames__count(n), 3);
	assert_int_equal(recnames__span(n, 0)->object, 0xaaaa);
	assert_int_equal(recnames__span(n, 2)->callsite, 0x3000);
	assert_null(recnames__span(n, 3));
	recnames__free(n);
}

static void test_bad_files_are_refused(void **state UNUSED)
{
	static const char *const bad[] = {
		"syncprof-names\t2\n",			/* another version */
		"syncprof-meta\t1\n",			/* another file */
		"syncprof-names\t1\nsite\t2000\tm\t0\t-\t0\t-\t0\n"
			"site\t1000\tm\t0\t-\t0\t-\t0\n",	/* unsorted */
		"syncprof-names\t1\nspan\t99\t1\t2\t0\n",	/* no such type */
		"syncprof-names\t1\nobject\tzz\tx\n",	/* not hex */
		"syncprof-names\t1\nsite\t1\tm\n",	/* too few fields */
	};
	char *dir = recfixture_dir();
	struct recnames *n;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, RECNAMES_NAME);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		recfixture_write(dir, RECNAMES_NAME, bad[i]);
		assert_int_equal(recnames__load(path, &n), -EINVAL);
	}
	recfixture_write(dir, RECNAMES_NAME, "syncprof-names\t1\nnewkind\tx\n");
	assert_int_equal(recnames__load(path, &n), 0);	/* newer lines skipped */
	assert_int_equal(recnames__count(n), 0);
	recnames__free(n);
	assert_int_equal(recnames__load("/nonexistent/names", &n), -ENOENT);
	recfixture_rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_and_lookups),
		cmocka_unit_test(test_save_load_roundtrip),
		cmocka_unit_test(test_add_merges_duplicates),
		cmocka_unit_test(test_bad_files_are_refused),
	};

	return cmocka_run_group_tests_name("recnames", tests, NULL, NULL);
}
