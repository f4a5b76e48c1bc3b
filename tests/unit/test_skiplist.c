// SPDX-License-Identifier: GPL-2.0
/*
 * skiplist: globs over demangled names, whole or without parameters and
 * clone suffixes; the ranges of matching functions in real fixtures (a
 * C++ program, a C library); skiplist__base_len on its own; the built-in
 * runtimes' wrappers: their kinds by name, and GLib's slow path found
 * through the code of the installed libglib-2.0.
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
#include "cfitable.h"
#include "skiplist.h"
#include "syncprof.h"

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

/*
 * Globs that start with a wildcard: their longest literal run is looked
 * for before fnmatch; a name with it must still match the whole glob, a
 * name without it never does, and a glob with a bracket or an escape is
 * left to fnmatch alone.
 */
static void test_match_leading_wildcard(void **state UNUSED)
{
	const char *const globs[] = { "*std::barrier<*>::*", "?lock_*_slow",
				      "*[Gg]uard::drop", "*\\*x" };
	struct skiplist *list = list_of(globs, ARRAY_SIZE(globs));

	assert_true(skiplist__match(list, "std::barrier<void>::wait(long)"));
	assert_true(skiplist__match(list,
				    "void std::barrier<F>::arrive() const"));
	assert_false(skiplist__match(list, "std::barrier<void>"));
	assert_false(skiplist__match(list, "std::latch::wait()"));
	assert_true(skiplist__match(list, "_lock_mutex_slow"));
	assert_false(skiplist__match(list, "lock_mutex_slow"));
	assert_false(skiplist__match(list, "_lock_mutex_fast"));
	assert_true(skiplist__match(list, "MutexGuard::drop"));
	assert_true(skiplist__match(list, "app::guard::drop"));
	assert_false(skiplist__match(list, "app::Guard::take"));
	assert_true(skiplist__match(list, "a*x"));
	assert_false(skiplist__match(list, "ax"));
	skiplist__free(list);
}

static void test_empty_list_matches_nothing(void **state UNUSED)
{
	struct skiplist *list = list_of(NULL, 0);
	struct skiplist_range *ranges = (void *)1;
	size_t n = 7;

	assert_true(skiplist__empty(list));
	assert_true(skiplist__empty(NULL));
	assert_false(skiplist__match(list, "anything"));
	assert_int_equal(skiplist__ranges(list, NULL, NULL, &ranges, &n), 0);
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
	struct skiplist_range *ranges;
	struct elfimage *image;
	uint64_t start, end;
	size_t n;

	assert_int_equal(elfimage__open(fixture("cxxsites"), &image), 0);
	assert_int_equal(skiplist__ranges(list, image, NULL, &ranges, &n), 0);
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
	struct skiplist_range *ranges;
	struct elfimage *image;
	uint64_t a_start, a_end, b_start, b_end;
	size_t n;

	assert_int_equal(elfimage__open(fixture("libunwind-fixture.so"), &image), 0);
	symbol_extent(image, "uw_asm_leaf_a", &a_start, &a_end);
	symbol_extent(image, "uw_asm_leaf_b", &b_start, &b_end);
	assert_int_equal(skiplist__ranges(list, image, NULL, &ranges, &n), 0);
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
	struct skiplist_range *ranges;
	struct elfimage *image;
	size_t n;

	assert_int_equal(elfimage__open(fixture("libunwind-fixture.so"), &image), 0);
	assert_int_equal(skiplist__ranges(list, image, NULL, &ranges, &n), 0);
	assert_null(ranges);
	assert_int_equal(n, 0);
	elfimage__close(image);
	skiplist__free(list);
}

#define GLIB "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0"

static struct skiplist *builtin_list(const char *const *globs, size_t n)
{
	struct skiplist *list = list_of(globs, n);

	assert_int_equal(skiplist__add_wrappers(list), 0);
	return list;
}

/* The kind a name gets: type + 1 (0: untyped), -1: not a lock function. */
static int kind_of(const struct skiplist *list, const char *name, bool *whole)
{
	uint32_t attrs;
	bool user;

	if (!skiplist__lookup(list, name, &attrs, &user))
		return -1;
	assert_true(attrs & SP_UNWIND_A_SKIP);
	if (whole)
		*whole = attrs & SP_UNWIND_A_WHOLE;
	return (int)((attrs >> SP_UNWIND_A_TYPE_SHIFT) & SP_UNWIND_A_TYPE_MASK);
}

static void test_builtin_kinds(void **state UNUSED)
{
	static const struct {
		const char *name;
		int kind;	/* type + 1, 0 untyped, -1 none */
		bool whole;
	} cases[] = {
		/* Rust 1.63 (Debian), 1.6x-1.7x, 1.79+. */
		{ "std::sys::unix::locks::futex::Mutex::lock_contended", SP_TYPE_MUTEX + 1, false },
		{ "std::sys::unix::locks::futex_mutex::Mutex::lock_contended", SP_TYPE_MUTEX + 1, false },
		{ "std::sys::sync::mutex::futex::Mutex::lock_contended", SP_TYPE_MUTEX + 1, false },
		{ "std::sys::unix::locks::futex::Condvar::wait", SP_TYPE_CONDVAR + 1, false },
		{ "std::sys::sync::condvar::futex::Condvar::wait_optional_timeout", SP_TYPE_CONDVAR + 1, false },
		{ "std::sys::unix::locks::futex_rwlock::RwLock::read_contended", SP_TYPE_RWLOCK_R + 1, false },
		{ "std::sys::unix::locks::futex_rwlock::RwLock::write_contended", SP_TYPE_RWLOCK_W + 1, false },
		{ "std::sys::unix::locks::futex_rwlock::RwLock::wake_writer_or_readers", 0, false },
		{ "std::sys::unix::futex::futex_wait", 0, false },
		{ "std::sys::pal::unix::futex::futex_wait", 0, false },
		{ "std::thread::park", SP_TYPE_PARK + 1, true },
		{ "std::sync::barrier::Barrier::wait", SP_TYPE_BARRIER + 1, true },
		{ "std::sys::unix::thread::Thread::join", SP_TYPE_JOIN + 1, true },
		/* QEMU, GLib, libstdc++. */
		{ "qemu_mutex_lock_iothread_impl", SP_TYPE_MUTEX + 1, false },
		{ "qemu_mutex_lock_impl", SP_TYPE_MUTEX + 1, false },
		{ "qemu_cond_timedwait_impl", SP_TYPE_CONDVAR + 1, false },
		{ "qemu_sem_wait", SP_TYPE_SEM + 1, true },
		{ "qemu_sem_post", 0, false },
		{ "qemu_event_wait", SP_TYPE_PARK + 1, true },
		{ "qemu_mutex_unlock_impl", 0, false },
		{ "qemu_cond_broadcast", 0, false },
		{ "g_mutex_lock", SP_TYPE_MUTEX + 1, false },
		{ "g_rw_lock_writer_lock", SP_TYPE_RWLOCK_W + 1, false },
		{ "g_rw_lock_reader_unlock", 0, false },
		{ "g_cond_wait_until", SP_TYPE_CONDVAR + 1, false },
		{ "g_mutex_unlock", 0, false },
		{ "g_mutex_unlocked_elsewhere", -1, false },
		{ "std::thread::join()", SP_TYPE_JOIN + 1, true },
		{ "std::condition_variable::wait(std::unique_lock<std::mutex>&)", SP_TYPE_CONDVAR + 1, false },
		{ "void std::__atomic_wait_address_bare<std::__atomic_semaphore::_M_acquire()::{lambda()#1}>(int const*, std::__atomic_semaphore::_M_acquire()::{lambda()#1})", SP_TYPE_SEM + 1, true },
		{ "std::__atomic_wait_address_bare<std::__atomic_semaphore::_M_acquire()::{lambda()#1}>(int const*, std::__atomic_semaphore::_M_acquire()::{lambda()#1})", SP_TYPE_SEM + 1, true },
		{ "std::__atomic_futex_unsigned_base::_M_futex_wait_until(unsigned int*, unsigned int, bool, std::chrono::duration<long, std::ratio<1l, 1l> >, std::chrono::duration<long, std::ratio<1l, 1000000000l> >)", 0, false },
		/* The rest. */
		{ "PGSemaphoreLock", SP_TYPE_SEM + 1, false },
		{ "LWLockAcquire", 0, false },
		{ "ssux_lock_impl<true>::rd_wait()", SP_TYPE_RWLOCK_R + 1, false },
		{ "srw_mutex_impl<false>::wait_and_lock()", SP_TYPE_MUTEX + 1, false },
		{ "absl::lts_20230125::Mutex::ReaderLock()", SP_TYPE_RWLOCK_R + 1, true },
		{ "parking_lot::raw_mutex::RawMutex::lock_slow", SP_TYPE_MUTEX + 1, false },
		{ "main", -1, false },
		{ "pthread_mutex_lock", -1, false },
	};
	struct skiplist *list = builtin_list(NULL, 0);

	assert_false(skiplist__empty(list));
	assert_false(skiplist__has_user_globs(list));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool whole = false;
		int kind = kind_of(list, cases[i].name, &whole);

		if (kind != cases[i].kind || whole != cases[i].whole)
			fail_msg("%s: kind %d whole %d, expected %d %d", cases[i].name,
				 kind, whole, cases[i].kind, cases[i].whole);
	}
	skiplist__free(list);
}

/* A user's glob comes first: its function is skipped, untyped. */
static void test_user_glob_before_builtin(void **state UNUSED)
{
	const char *const globs[] = { "std::sys::*" };
	struct skiplist *list = builtin_list(globs, 1);
	bool user = false;
	uint32_t attrs;

	assert_true(skiplist__has_user_globs(list));
	assert_true(skiplist__lookup(list, "std::sys::unix::locks::futex::Mutex::lock_contended",
				     &attrs, &user));
	assert_true(user);
	assert_int_equal(attrs, SP_UNWIND_A_SKIP);
	assert_true(skiplist__lookup(list, "g_mutex_lock", &attrs, &user));
	assert_false(user);
	skiplist__free(list);
}

struct named {
	uint64_t start, end;
	bool found;
};

static int find_range(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	struct named *n = ctx;

	(void)name;
	if (n->start >= vaddr && n->start < vaddr + size)
		n->found = true;
	return 0;
}

/*
 * GLib's g_mutex_lock jumps to a static slow path that no symbol of the
 * stripped library names: its FDE's range is skipped, as a mutex.
 */
static void test_glib_slow_path_found_by_its_code(void **state UNUSED)
{
	struct skiplist *list = builtin_list(NULL, 0);
	struct skiplist_range *ranges;
	struct elfimage_func lock;
	struct elfimage *image;
	struct cfitable *cfi;
	bool slow = false, own = false;
	char glib[PATH_MAX];
	size_t n;

	/* The file itself, as /proc/PID/maps names it, not the soname link. */
	if (!realpath(GLIB, glib))
		skip();
	assert_int_equal(cfitable__build(glib, NULL, 0, &cfi), 0);
	assert_int_equal(elfimage__open(glib, &image), 0);
	assert_int_equal(elfimage__find_func(image, "g_mutex_lock", &lock), 0);
	assert_int_equal(skiplist__ranges(list, image, cfi, &ranges, &n), 0);
	for (size_t i = 0; i < n; i++) {
		struct named named = { .start = ranges[i].start };

		if (((ranges[i].attrs >> SP_UNWIND_A_TYPE_SHIFT) &
		     SP_UNWIND_A_TYPE_MASK) != SP_TYPE_MUTEX + 1)
			continue;
		if (ranges[i].start <= lock.vaddr && lock.vaddr < ranges[i].end)
			own = true;
		assert_int_equal(elfimage__for_each_dynfunc(image, find_range, &named), 0);
		if (!named.found)
			slow = true;	/* typed, yet no symbol: the slow path */
	}
	assert_true(own);
	assert_true(slow);
	free(ranges);
	elfimage__close(image);
	cfitable__free(cfi);
	skiplist__free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_len),
		cmocka_unit_test(test_demangle_name),
		cmocka_unit_test(test_match_whole_or_base),
		cmocka_unit_test(test_match_leading_wildcard),
		cmocka_unit_test(test_empty_list_matches_nothing),
		cmocka_unit_test(test_ranges_of_cxx_methods_and_their_clones),
		cmocka_unit_test(test_ranges_merge_neighbours),
		cmocka_unit_test(test_ranges_none_match),
		cmocka_unit_test(test_builtin_kinds),
		cmocka_unit_test(test_user_glob_before_builtin),
		cmocka_unit_test(test_glib_slow_path_found_by_its_code),
	};

	return cmocka_run_group_tests_name("skiplist", tests, group_setup, NULL);
}
