// SPDX-License-Identifier: GPL-2.0
/*
 * skiplist: globs over demangled names, whole or without parameters and
 * clone suffixes; the ranges of matching functions in real fixtures (a
 * C++ program, a C library); skiplist__base_len on its own.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "demangle.h"
#include "elfimage.h"
#include "skiplist.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *dir = getenv("SYNCPROF_FIXTURES");

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "build/tests/fixtures",
		 name);
	return path;
}

static int group_setup(void **state UNUSED)
{
	if (access(fixture("cxxsites"), R_OK) ||
	    access(fixture("libunwind-fixture.so"), R_OK)) {
		fprintf(stderr, "no fixtures in build/tests/fixtures: build them with "
			"'make test' from the repository root, or set SYNCPROF_FIXTURES\n");
		return -1;
	}
	return 0;
}

static struct skiplist *list_of(const char *const *globs, size_t n)
{
	struct skiplist *list;

	assert_int_equal(skiplist__new(globs, n, &list), 0);
	return list;
}

static void test_base_len(void **state UNUSED)
{
	static const struct {
		const char *name;
		const char *base;
	} cases[] = {
		{ "g_mutex_lock", "g_mutex_lock" },
		{ "ns::f(int)", "ns::f" },
		{ "ns::f(int) const", "ns::f" },
		{ "ns::C::operator()() const &", "ns::C::operator()" },
		{ "f(void (*)(int))", "f" },
		{ "(anonymous namespace)::site(void*, int)",
		  "(anonymous namespace)::site" },
		{ "app::Counter::add() [clone .cold]", "app::Counter::add" },
		{ "timed_lock.isra.0", "timed_lock" },
		{ "f.cold", "f" },
		{ ".hidden", ".hidden" },
		{ "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = skiplist__base_len(cases[i].name);

		assert_int_equal(len, strlen(cases[i].base));
		assert_memory_equal(cases[i].name, cases[i].base, len);
	}
}

static void test_demangle_name(void **state UNUSED)
{
	char *s = demangle__name("_ZN3app7Counter3addEv");

	assert_string_equal(s, "app::Counter::add()");
	free(s);
	s = demangle__name("_Znot_a_name");
	assert_string_equal(s, "_Znot_a_name");
	free(s);
	s = demangle__name("plain_c");
	assert_string_equal(s, "plain_c");
	free(s);
}

static void test_match_whole_or_base(void **state UNUSED)
{
	const char *const globs[] = { "qemu_mutex_*", "std::sys::*::futex_wait",
				      "app::Counter::add" };
	struct skiplist *list = list_of(globs, ARRAY_SIZE(globs));

	assert_false(skiplist__empty(list));
	assert_true(skiplist__match(list, "qemu_mutex_lock_impl"));
	assert_true(skiplist__match(list, "qemu_mutex_lock_impl.cold"));
	assert_false(skiplist__match(list, "qemu_cond_wait_impl"));
	assert_true(skiplist__match(list, "std::sys::pal::unix::futex::futex_wait"));
	assert_true(skiplist__match(list, "app::Counter::add()"));
	assert_true(skiplist__match(list, "app::Counter::add() [clone .cold]"));
	assert_false(skiplist__match(list, "app::Counter::add_more()"));
	assert_false(skiplist__match(list, ""));
	skiplist__free(list);
}

static void test_empty_list_matches_nothing(void **state UNUSED)
{
	struct skiplist *list = list_of(NULL, 0);
	struct cfitable_range *ranges = (void *)1;
	size_t n = 7;

	assert_true(skiplist__empty(list));
	assert_true(skiplist__empty(NULL));
	assert_false(skiplist__match(list, "anything"));
	assert_int_equal(skiplist__ranges(list, NULL, &ranges, &n), 0);
	assert_null(ranges);
	assert_int_equal(n, 0);
	skiplist__free(list);
	skiplist__free(NULL);
}

/* The symbol table's own extent of a function, for comparison. */
static void symbol_extent(struct elfimage *image, const char *name,
			  uint64_t *start, uint64_t *end)
{
	struct elfimage_func f;

	assert_int_equal(elfimage__find_func(image, name, &f), 0);
	*start = f.vaddr;
	*end = f.vaddr + f.size;
}

static void test_ranges_of_cxx_methods_and_their_clones(void **state UNUSED)
{
	const char *const globs[] = { "app::Counter::add" };
	struct skiplist *list = list_of(globs, 1);
	struct cfitable_range *ranges;
	struct elfimage *image;
	uint64_t start, end;
	size_t n;

	assert_int_equal(elfimage__open(fixture("cxxsites"), &image), 0);
	assert_int_equal(skiplist__ranges(list, image, &ranges, &n), 0);
	/* add() and its .cold part, sorted, disjoint. */
	assert_int_equal(n, 2);
	assert_true(ranges[0].end <= ranges[1].start);
	symbol_extent(image, "_ZN3app7Counter3addEv", &start, &end);
	assert_true((ranges[0].start == start && ranges[0].end == end) ||
		    (ranges[1].start == start && ranges[1].end == end));
	free(ranges);
	elfimage__close(image);
	skiplist__free(list);
}

static void test_ranges_merge_neighbours(void **state UNUSED)
{
	const char *const globs[] = { "uw_asm_leaf_?" };
	struct skiplist *list = list_of(globs, 1);
	struct cfitable_range *ranges;
	struct elfimage *image;
	uint64_t a_start, a_end, b_start, b_end;
	size_t n;

	assert_int_equal(elfimage__open(fixture("libunwind-fixture.so"), &image), 0);
	symbol_extent(image, "uw_asm_leaf_a", &a_start, &a_end);
	symbol_extent(image, "uw_asm_leaf_b", &b_start, &b_end);
	assert_int_equal(skiplist__ranges(list, image, &ranges, &n), 0);
	if (a_end == b_start) {
		/* Touching: one range. */
		assert_int_equal(n, 1);
		assert_int_equal(ranges[0].start, a_start);
		assert_int_equal(ranges[0].end, b_end);
	} else {
		assert_int_equal(n, 2);
		assert_int_equal(ranges[0].start, a_start);
		assert_int_equal(ranges[1].end, b_end);
	}
	free(ranges);
	elfimage__close(image);
	skiplist__free(list);
}

static void test_ranges_none_match(void **state UNUSED)
{
	const char *const globs[] = { "no_such_function*" };
	struct skiplist *list = list_of(globs, 1);
	struct cfitable_range *ranges;
	struct elfimage *image;
	size_t n;

	assert_int_equal(elfimage__open(fixture("libunwind-fixture.so"), &image), 0);
	assert_int_equal(skiplist__ranges(list, image, &ranges, &n), 0);
	assert_null(ranges);
	assert_int_equal(n, 0);
	elfimage__close(image);
	skiplist__free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_len),
		cmocka_unit_test(test_demangle_name),
		cmocka_unit_test(test_match_whole_or_base),
		cmocka_unit_test(test_empty_list_matches_nothing),
		cmocka_unit_test(test_ranges_of_cxx_methods_and_their_clones),
		cmocka_unit_test(test_ranges_merge_neighbours),
		cmocka_unit_test(test_ranges_none_match),
	};

	return cmocka_run_group_tests_name("skiplist", tests, group_setup, NULL);
}
