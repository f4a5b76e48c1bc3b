// SPDX-License-Identifier: GPL-2.0
/*
 * libcmodel: which code implements which lock, tail calls followed, and
 * where a process maps it; condprobe: where this libc's condvars sleep.
 *
 * libfakelibc.so (tests/fixtures/fakelibc.c) names its functions as glibc
 * does and ends some of them in tail calls; it is looked up in
 * $SYNCPROF_FIXTURES, else build/tests/fixtures from the repository root.
 * The system libc is checked for the tail calls glibc 2.36 is known to
 * make, and placed in this very process against dladdr().
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "condprobe.h"
#include "elfimage.h"
#include "libcmodel.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char fixture[PATH_MAX];

static const char *fixture_path(void)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");

	snprintf(fixture, sizeof(fixture), "%s/libfakelibc.so",
		 dir ? dir : "build/tests/fixtures");
	return fixture;
}

static uint64_t func_vaddr(const char *path, const char *name)
{
	struct elfimage *image;
	struct elfimage_func f;

	assert_int_equal(elfimage__open(path, &image), 0);
	assert_int_equal(elfimage__find_func(image, name, &f), 0);
	elfimage__close(image);
	return f.vaddr;
}

/*
 * This process's libc.  Found through a function that no sanitizer
 * intercepts: under ASan, pthread_mutex_lock is the runtime's wrapper.
 */
static const char *own_libc(void)
{
	static Dl_info info;

	assert_true(dladdr((void *)gnu_get_libc_version, &info));
	return info.dli_fname;
}

/* NAME as libc itself defines it, not an interposed wrapper. */
static uintptr_t libc_runtime_addr(const char *name)
{
	void *libc = dlopen(own_libc(), RTLD_LAZY | RTLD_NOLOAD);
	void *addr;

	assert_non_null(libc);
	addr = dlsym(libc, name);
	dlclose(libc);
	assert_non_null(addr);
	return (uintptr_t)addr;
}

static void test_classify_names(void **state UNUSED)
{
	assert_int_equal(libcmodel__classify("pthread_mutex_lock"), SP_FUNC_MUTEX);
	assert_int_equal(libcmodel__classify("pthread_mutex_clocklock"), SP_FUNC_MUTEX);
	assert_int_equal(libcmodel__classify("pthread_cond_timedwait"), SP_FUNC_CONDVAR);
	assert_int_equal(libcmodel__classify("pthread_cond_broadcast"),
			 SP_FUNC_CONDVAR_OTHER);
	assert_int_equal(libcmodel__classify("pthread_rwlock_clockrdlock"),
			 SP_FUNC_RWLOCK_R);
	assert_int_equal(libcmodel__classify("pthread_rwlock_timedwrlock"),
			 SP_FUNC_RWLOCK_W);
	assert_int_equal(libcmodel__classify("sem_clockwait"), SP_FUNC_SEM);
	assert_int_equal(libcmodel__classify("pthread_mutex_unlock"), SP_FUNC_OTHER);
	assert_int_equal(libcmodel__classify("malloc"), SP_FUNC_OTHER);
	assert_int_equal(libcmodel__classify("pthread_mutex_lock_x"), SP_FUNC_OTHER);
	assert_int_equal(libcmodel__classify(""), SP_FUNC_OTHER);
}

static void test_normalize_sorts_and_drops_aliases(void **state UNUSED)
{
	struct sp_func_range r[] = {
		{ .start = 300, .end = 400, .class = SP_FUNC_SEM },
		{ .start = 100, .end = 200, .class = SP_FUNC_MUTEX },
		{ .start = 100, .end = 200, .class = SP_FUNC_MUTEX },	/* alias */
		{ .start = 150, .end = 180, .class = SP_FUNC_CONDVAR },	/* nested */
		{ .start = 350, .end = 450, .class = SP_FUNC_RWLOCK_R },	/* overlaps */
		{ .start = 500, .end = 500, .class = SP_FUNC_RWLOCK_W },	/* empty */
	};
	size_t n = libcmodel__normalize(r, ARRAY_SIZE(r));

	assert_int_equal(n, 3);
	assert_int_equal(r[0].start, 100);
	assert_int_equal(r[0].end, 200);
	assert_int_equal(r[0].class, SP_FUNC_MUTEX);
	assert_int_equal(r[1].start, 300);
	assert_int_equal(r[1].end, 400);
	assert_int_equal(r[2].start, 400);	/* the overlap is cut off */
	assert_int_equal(r[2].end, 450);
	assert_int_equal(r[2].class, SP_FUNC_RWLOCK_R);
}

static void test_fixture_tail_calls_inherit_the_class(void **state UNUSED)
{
	const char *path = fixture_path();
	const struct sp_func_range *f;
	struct cfitable_range lll;
	struct libcmodel *m;
	size_t n;

	assert_int_equal(libcmodel__build(path, &m), 0);
	f = libcmodel__funcs(m, &n);
	/* timedlock, its slow path, sem_wait and two levels, cond_wait. */
	assert_int_equal(n, 6);
	for (size_t i = 1; i < n; i++)
		assert_true(f[i - 1].end <= f[i].start);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "timed_slow_path")),
			 SP_FUNC_MUTEX);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "sem_slow_path") + 1),
			 SP_FUNC_SEM);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "sem_deepest")),
			 SP_FUNC_SEM);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "pthread_cond_wait")),
			 SP_FUNC_CONDVAR);
	/* An unclassified function's tail call stays unclassified. */
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "other_function")),
			 SP_FUNC_OTHER);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(path, "other_slow_path")),
			 SP_FUNC_OTHER);
	assert_int_equal(libcmodel__lll_private(m, &lll), 0);
	assert_int_equal(lll.start, func_vaddr(path, "__lll_lock_wait_private"));
	assert_true(lll.end > lll.start);
	libcmodel__rows(m, &n);
	assert_true(n > 0);
	libcmodel__free(m);
}

/* glibc 2.36 jumps from these into code no exported symbol names. */
static void test_system_libc_follows_known_tail_calls(void **state UNUSED)
{
	static const struct {
		const char *name;
		enum sp_func_class class;
	} tails[] = {
		{ "pthread_mutex_timedlock", SP_FUNC_MUTEX },
		{ "sem_wait", SP_FUNC_SEM },
		{ "sem_timedwait", SP_FUNC_SEM },
	};
	const char *libc = own_libc();
	struct cfitable_range lll;
	struct libcmodel *m;
	size_t n_funcs;

	assert_int_equal(libcmodel__build(libc, &m), 0);
	libcmodel__funcs(m, &n_funcs);
	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		uint64_t at = func_vaddr(libc, tails[i].name);

		assert_int_equal(libcmodel__class_at(m, at), tails[i].class);
	}
	assert_int_equal(libcmodel__class_at(m, func_vaddr(libc, "pthread_cond_wait") + 8),
			 SP_FUNC_CONDVAR);
	assert_int_equal(libcmodel__class_at(m, func_vaddr(libc, "malloc")),
			 SP_FUNC_OTHER);
	assert_int_equal(libcmodel__lll_private(m, &lll), 0);
	/* More ranges than exported names: the tail-called ones. */
	assert_true(n_funcs > 25);
	libcmodel__free(m);
}

/* This process's own libc, placed from /proc/self/maps. */
static void test_place_matches_the_dynamic_linker(void **state UNUSED)
{
	const char *libc = own_libc();
	struct libcmodel_placement place;
	struct libcmodel *m;
	uintptr_t runtime = libc_runtime_addr("pthread_mutex_lock");

	assert_int_equal(libcmodel__build(libc, &m), 0);
	assert_int_equal(libcmodel__place(m, getpid(), libc, &place), 0);
	assert_int_equal(place.bias + func_vaddr(libc, "pthread_mutex_lock"), runtime);
	assert_true(runtime >= place.text_start && runtime < place.text_end);
	assert_int_equal(libcmodel__place(m, getpid(), fixture_path(), &place),
			 -ENOENT);
	libcmodel__free(m);
}

static void test_condvar_offset_is_the_headers_g_signals(void **state UNUSED)
{
	uint32_t offset = 0;

	assert_int_equal(condprobe__signal_offset(own_libc(), &offset), 0);
	assert_int_equal(offset, offsetof(pthread_cond_t, __data.__g_signals));
	/* Another build of libc: not measured on ours. */
	assert_int_equal(condprobe__signal_offset(fixture_path(), &offset),
			 -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_names),
		cmocka_unit_test(test_normalize_sorts_and_drops_aliases),
		cmocka_unit_test(test_fixture_tail_calls_inherit_the_class),
		cmocka_unit_test(test_system_libc_follows_known_tail_calls),
		cmocka_unit_test(test_place_matches_the_dynamic_linker),
		cmocka_unit_test(test_condvar_offset_is_the_headers_g_signals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
