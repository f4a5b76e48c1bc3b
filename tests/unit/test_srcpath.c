// SPDX-License-Identifier: GPL-2.0
/*
 * srcpath: which source files are the system's (walked through when a
 * call site's line is in an inlined wrapper), the shared directory of a
 * report's files, and DWARF file names made absolute.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "srcpath.h"

#define UNUSED __attribute__((unused))
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void assert_system(const char *path, bool expected)
{
	bool got = srcpath__is_system(path);

	if (got != expected)
		print_error("srcpath__is_system(\"%s\") = %s, expected %s\n", path,
			    got ? "true" : "false", expected ? "true" : "false");
	assert_true(got == expected);
}

static void test_system_headers(void **state UNUSED)
{
	assert_system("/usr/include/stdio.h", true);
	assert_system("/usr/include/x86_64-linux-gnu/bits/pthreadtypes.h", true);
	assert_system("/usr/local/include/foo.h", true);
}

static void test_libstdcxx_headers(void **state UNUSED)
{
	assert_system("/usr/include/c++/12/bits/std_mutex.h", true);
	assert_system("/usr/include/c++/12/mutex", true);
	/* Where __gthread_mutex_lock is, on Debian. */
	assert_system("/usr/include/x86_64-linux-gnu/c++/12/bits/gthr-default.h", true);
	/* A toolchain somewhere else: its include/c++ tree still. */
	assert_system("/opt/gcc-13/include/c++/13/bits/std_mutex.h", true);
}

static void test_compiler_headers(void **state UNUSED)
{
	assert_system("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", true);
	assert_system("/usr/lib/llvm-14/lib/clang/14.0.6/include/stdatomic.h", true);
}

/*
 * glibc's own sources, as its DWARF names them: relative to its build
 * directory ("./nptl/...", "../sysdeps/...") or absolute in a build tree
 * (the doc comment: "glibc's sources" are the system's).
 */
static void test_glibc_sources(void **state UNUSED)
{
	assert_system("./nptl/pthread_mutex_lock.c", true);
	assert_system("../sysdeps/nptl/lowlevellock.h", true);
	assert_system("/build/glibc-x1/nptl/pthread_mutex_lock.c", true);
	assert_system("/build/glibc-x1/sysdeps/x86_64/nptl/tls.h", true);
}

/* Rust's standard library, inlined into the user's function. */
static void test_rust_std_sources(void **state UNUSED)
{
	assert_system("/usr/src/rustc-1.63.0/library/std/src/sync/mutex.rs", true);
	assert_system("/rustc/59807616e1/library/std/src/sys/sync/mutex/futex.rs", true);
	assert_system("/rustc/59807616e1/library/core/src/cell.rs", true);
	assert_system("/home/u/proj/src/library.rs", false);
	assert_system("/home/u/proj/library/src/lib.rs", false);
}

static void test_user_sources(void **state UNUSED)
{
	assert_system("/home/u/proj/src/a.c", false);
	assert_system("src/a.c", false);
	assert_system("./src/a.c", false);
	assert_system("a.c", false);
	assert_system("/home/u/proj/include/util.h", false);
	/* Prefixes end at a '/': not /usr/include/. */
	assert_system("/usr/includes/a.h", false);
	assert_system("/usr/include-private/a.h", false);
	/* The user's own file named like a glibc directory. */
	assert_system("/home/u/proj/src/sysdeps.c", false);
	assert_system("/home/u/proj/nptl.c", false);
	assert_system("", false);
}

static void assert_common_dir(const char *const *paths, size_t n, size_t expected)
{
	size_t got = srcpath__common_dir(paths, n);

	if (got != expected) {
		print_error("srcpath__common_dir(");
		for (size_t i = 0; i < n; i++)
			print_error("%s\"%s\"", i ? ", " : "", paths[i]);
		print_error(") = %zu, expected %zu\n", got, expected);
	}
	assert_int_equal(got, expected);
}

static void test_common_dir_shared_prefix(void **state UNUSED)
{
	static const char *const two[] = { "/a/b/c.c", "/a/b/d/e.c" };
	static const char *const three[] = {
		"/home/u/proj/src/a.c", "/home/u/proj/src/net/b.c",
		"/home/u/proj/include/c.h",
	};
	static const char *const same[] = { "/a/b/c.c", "/a/b/c.c" };
	static const char *const deeper_first[] = { "/a/b/d/e.c", "/a/b/c.c" };

	assert_common_dir(two, N_OF(two), strlen("/a/b/"));
	assert_common_dir(three, N_OF(three), strlen("/home/u/proj/"));
	assert_common_dir(same, N_OF(same), strlen("/a/b/"));
	assert_common_dir(deeper_first, N_OF(deeper_first), strlen("/a/b/"));
	/* Shortened names: what follows the prefix. */
	assert_string_equal(two[1] + srcpath__common_dir(two, N_OF(two)), "d/e.c");
}

static void test_common_dir_single_path(void **state UNUSED)
{
	static const char *const one[] = { "/home/u/proj/src/a.c" };
	static const char *const at_root[] = { "/a.c" };

	assert_common_dir(one, 1, strlen("/home/u/proj/src/"));
	/* Its directory is "/" only. */
	assert_common_dir(at_root, 1, 0);
}

static void test_common_dir_only_root(void **state UNUSED)
{
	static const char *const apart[] = { "/x/a.c", "/y/b.c" };
	static const char *const one_at_root[] = { "/x/a.c", "/b.c" };

	assert_common_dir(apart, N_OF(apart), 0);
	assert_common_dir(one_at_root, N_OF(one_at_root), 0);
}

static void test_common_dir_relative(void **state UNUSED)
{
	static const char *const rel_second[] = { "/a/b/c.c", "b/c.c" };
	static const char *const rel_first[] = { "a/b/c.c", "/a/b/c.c" };
	static const char *const rel_all[] = { "a/b/c.c", "a/b/d.c" };
	static const char *const rel_one[] = { "a/b/c.c" };

	assert_common_dir(rel_second, N_OF(rel_second), 0);
	assert_common_dir(rel_first, N_OF(rel_first), 0);
	assert_common_dir(rel_all, N_OF(rel_all), 0);
	assert_common_dir(rel_one, N_OF(rel_one), 0);
}

static void test_common_dir_none(void **state UNUSED)
{
	static const char *const unused[] = { "/a/b/c.c" };

	assert_common_dir(unused, 0, 0);
	assert_int_equal(srcpath__common_dir(NULL, 0), 0);
}

/* The prefix is whole directories: never "/a/b" of "/a/bc" and "/a/bd". */
static void test_common_dir_segment_boundary(void **state UNUSED)
{
	static const char *const siblings[] = { "/a/bc/x.c", "/a/bd/y.c" };
	static const char *const prefix_name[] = { "/a/b/x.c", "/a/bb/y.c" };
	static const char *const file_vs_dir[] = { "/a/b/c.c", "/a/b" };
	static const char *const dir_vs_file[] = { "/a/bc.c", "/a/b/c.c" };

	assert_common_dir(siblings, N_OF(siblings), strlen("/a/"));
	assert_common_dir(prefix_name, N_OF(prefix_name), strlen("/a/"));
	assert_common_dir(file_vs_dir, N_OF(file_vs_dir), strlen("/a/"));
	assert_common_dir(dir_vs_file, N_OF(dir_vs_file), strlen("/a/"));
}

static void assert_join(const char *dir, const char *file, const char *expected)
{
	char *got = srcpath__join(dir, file);

	assert_non_null(got);
	if (strcmp(got, expected))
		print_error("srcpath__join(\"%s\", \"%s\") = \"%s\", expected \"%s\"\n",
			    dir, file, got, expected);
	assert_string_equal(got, expected);
	free(got);
}

static void test_join_relative(void **state UNUSED)
{
	assert_join("/work/proj", "src/a.c", "/work/proj/src/a.c");
	assert_join("/work/proj/", "src/a.c", "/work/proj/src/a.c");
	assert_join("/", "a.c", "/a.c");
}

static void test_join_folds_dots(void **state UNUSED)
{
	assert_join("/work/proj/build", "../src/a.c", "/work/proj/src/a.c");
	assert_join("/work/proj", "./src/./a.c", "/work/proj/src/a.c");
	assert_join("/work/./proj/build/..", "src//a.c", "/work/proj/src/a.c");
	assert_join("/build/glibc/nptl", "../sysdeps/x.h", "/build/glibc/sysdeps/x.h");
	/* Not above the root. */
	assert_join("/a", "../../../x.c", "/x.c");
}

static void test_join_absolute_file(void **state UNUSED)
{
	assert_join("/work/proj", "/usr/include/stdio.h", "/usr/include/stdio.h");
	assert_join(NULL, "/usr/include/stdio.h", "/usr/include/stdio.h");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_headers),
		cmocka_unit_test(test_libstdcxx_headers),
		cmocka_unit_test(test_compiler_headers),
		cmocka_unit_test(test_glibc_sources),
		cmocka_unit_test(test_rust_std_sources),
		cmocka_unit_test(test_user_sources),
		cmocka_unit_test(test_common_dir_shared_prefix),
		cmocka_unit_test(test_common_dir_single_path),
		cmocka_unit_test(test_common_dir_only_root),
		cmocka_unit_test(test_common_dir_relative),
		cmocka_unit_test(test_common_dir_none),
		cmocka_unit_test(test_common_dir_segment_boundary),
		cmocka_unit_test(test_join_relative),
		cmocka_unit_test(test_join_folds_dots),
		cmocka_unit_test(test_join_absolute_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
