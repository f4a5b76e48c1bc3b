// SPDX-License-Identifier: GPL-2.0
/*
 * memberpath: locks inside global structs, arrays and unions named by
 * their member path, through the symbolizer, in tests/fixtures/members.c
 * (built by `make test-bins` into $SYNCPROF_FIXTURES, else
 * build/tests/fixtures).  Each address is the variable's, found by its
 * symbol, plus the compiler's own offsetof (members.h): nothing is
 * hard-coded.  Without DWARF (members-nodebug) the names stay
 * symbol+0xoff.  And back: a path's address and size (--object).
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
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
#include <elfutils/libdw.h>

#include "memberpath.h"
#include "symbolizer.h"
#include "../fixtures/members.h"

#define UNUSED __attribute__((unused))
#define BASE 0x7f1200000000ull

static void fixture_path(const char *name, char *path, size_t len)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");
	int n = snprintf(path, len, "%s/%s",
			 dir && *dir ? dir : "build/tests/fixtures", name);

	assert_true(n > 0 && (size_t)n < len);
	if (access(path, R_OK)) {
		print_error("fixture %s missing: build it with 'make test-bins' "
			    "from the repository root, or set SYNCPROF_FIXTURES\n",
			    path);
		fail();
	}
}

static struct symbolizer *open_fixture(const char *name)
{
	char path[PATH_MAX], full[PATH_MAX];
	struct symbolizer *sym;

	fixture_path(name, path, sizeof(path));
	assert_non_null(realpath(path, full));
	assert_int_equal(symbolizer__new_file(full, BASE, NULL, &sym), 0);
	return sym;
}

/* The name of the byte at offset in variable var. */
static void expect(struct symbolizer *sym, const char *var, size_t offset,
		   const char *want)
{
	uint64_t start, size;
	const char *got;

	assert_int_equal(symbolizer__find_object(sym, var, &start, &size), 0);
	assert_true(offset < size);
	got = symbolizer__object(sym, start + offset);
	if (!got || strcmp(got, want))
		print_error("%s+%zu: expected %s, got %s\n", var, offset, want,
			    got ? got : "(null)");
	assert_non_null(got);
	assert_string_equal(got, want);
}

#define AT(type, member) offsetof(type, member)

static void test_struct_members(void **state UNUSED)
{
	struct symbolizer *sym = open_fixture("members");

	expect(sym, "stats", AT(struct members_stats, lock), "stats.lock");
	expect(sym, "stats", AT(struct members_stats, not_empty),
	       "stats.not_empty");
	/* The futex word, and every other byte of the condvar: the condvar. */
	for (size_t i = 1; i < sizeof(pthread_cond_t); i++)
		expect(sym, "stats", AT(struct members_stats, not_empty) + i,
		       "stats.not_empty");
	for (size_t i = 1; i < sizeof(pthread_mutex_t); i++)
		expect(sym, "stats", AT(struct members_stats, lock) + i,
		       "stats.lock");
	expect(sym, "stats", AT(struct members_stats, n), "stats.n");
	/* Inside a scalar: its offset in it. */
	expect(sym, "stats", AT(struct members_stats, n) + 2, "stats.n+0x2");
	/* A static variable. */
	expect(sym, "quiet", AT(struct members_stats, not_empty),
	       "quiet.not_empty");
	symbolizer__free(sym);
}

static void test_arrays(void **state UNUSED)
{
	struct symbolizer *sym = open_fixture("members");
	size_t slot = sizeof(struct members_slot);

	expect(sym, "table", 3 * slot + AT(struct members_slot, mu),
	       "table[3].mu");
	expect(sym, "table", 3 * slot + AT(struct members_slot, mu) + 16,
	       "table[3].mu");
	expect(sym, "table", 0, "table[0].x");
	expect(sym, "table", 2 * slot + AT(struct members_slot, mu),
	       "table[2].mu");
	expect(sym, "grid",
	       (1 * MEMBERS_COLS + 2) * sizeof(pthread_mutex_t) + 8,
	       "grid[1][2]");
	expect(sym, "grid", 0, "grid[0][0]");
	expect(sym, "misc", AT(struct members_misc, words) + 2 * sizeof(long),
	       "misc.words[2]");
	expect(sym, "misc", AT(struct members_misc, words) + 2 * sizeof(long) + 4,
	       "misc.words[2]+0x4");
	symbolizer__free(sym);
}

static void test_nested_unions_and_typedefs(void **state UNUSED)
{
	struct symbolizer *sym = open_fixture("members");

	expect(sym, "outer", AT(struct members_outer, in.mu), "outer.in.mu");
	expect(sym, "outer", AT(struct members_outer, pair[1].mu),
	       "outer.pair[1].mu");
	expect(sym, "outer", AT(struct members_outer, pair[1].id) + 3,
	       "outer.pair[1].id+0x3");
	/* A union: the lock among the members that hold the byte, else the first. */
	expect(sym, "u", 0, "u.m");
	expect(sym, "u", sizeof(pthread_mutex_t) + 2, "u.bytes[42]");
	/* An anonymous union adds no name. */
	expect(sym, "anon", AT(struct members_anon, sem) + 4, "anon.sem");
	expect(sym, "anon", AT(struct members_anon, kind), "anon.kind");
	/* A user's typedef of a lock: the walk stops at it. */
	expect(sym, "misc", AT(struct members_misc, own) + 4, "misc.own");
	/* Padding: the offset in the innermost thing that holds it. */
	expect(sym, "misc", 3, "misc+0x3");
	/* A lock variable of its own: its name, whatever the byte. */
	expect(sym, "cond", 0, "cond");
	expect(sym, "cond", 8, "cond");
	symbolizer__free(sym);
}

static void test_without_dwarf_offsets_stay(void **state UNUSED)
{
	struct symbolizer *sym = open_fixture("members-nodebug");
	size_t slot = sizeof(struct members_slot);
	char want[64];

	expect(sym, "stats", 0, "stats");
	snprintf(want, sizeof(want), "stats+0x%zx",
		 AT(struct members_stats, not_empty));
	expect(sym, "stats", AT(struct members_stats, not_empty), want);
	snprintf(want, sizeof(want), "table+0x%zx",
		 3 * slot + AT(struct members_slot, mu));
	expect(sym, "table", 3 * slot + AT(struct members_slot, mu), want);
	expect(sym, "cond", 8, "cond+0x8");
	symbolizer__free(sym);
}

/* Where path lies: the variable's address plus offset, size bytes. */
static void expect_found(struct symbolizer *sym, const char *path,
			 const char *var, size_t offset, size_t size)
{
	uint64_t var_start, var_size, start = 0, bytes = 0;

	assert_int_equal(symbolizer__find_object(sym, var, &var_start, &var_size), 0);
	if (symbolizer__find_object(sym, path, &start, &bytes))
		print_error("%s: not found\n", path);
	assert_int_equal(symbolizer__find_object(sym, path, &start, &bytes), 0);
	assert_int_equal(start, var_start + offset);
	assert_int_equal(bytes, size);
}

/* A member path as --object takes it: the way back from a name. */
static void test_find_by_path(void **state UNUSED)
{
	struct symbolizer *sym = open_fixture("members");
	size_t slot = sizeof(struct members_slot), mutex = sizeof(pthread_mutex_t);
	const char *paths[] = { "stats.not_empty", "table[3].mu", "outer.pair[1].mu",
				"grid[1][2]", "anon.sem", "u.m", "misc.own" };
	const char *bad[] = { "stats.nope", "table[4].mu", "table[3]x", "table[-1].mu",
			      "stats.lock.", "stats..lock", "grid[1][2][0]",
			      "nosuch.x", "stats[0]", "table.mu", "cond.x" };
	uint64_t start, size;

	expect_found(sym, "stats.not_empty", "stats",
		     AT(struct members_stats, not_empty), sizeof(pthread_cond_t));
	expect_found(sym, "table[3].mu", "table",
		     3 * slot + AT(struct members_slot, mu), mutex);
	expect_found(sym, "table[2]", "table", 2 * slot, slot);
	expect_found(sym, "outer.pair[1].mu", "outer",
		     AT(struct members_outer, pair[1].mu), mutex);
	expect_found(sym, "outer.in", "outer", AT(struct members_outer, in),
		     sizeof(struct members_inner));
	expect_found(sym, "grid[1][2]", "grid", (MEMBERS_COLS + 2) * mutex, mutex);
	expect_found(sym, "grid[1]", "grid", MEMBERS_COLS * mutex,
		     MEMBERS_COLS * mutex);
	/* Through an anonymous union. */
	expect_found(sym, "anon.sem", "anon", AT(struct members_anon, sem),
		     sizeof(sem_t));
	expect_found(sym, "misc.words[3]", "misc",
		     AT(struct members_misc, words) + 3 * sizeof(long), sizeof(long));
	/* Each found path names itself. */
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		assert_int_equal(symbolizer__find_object(sym, paths[i], &start, &size), 0);
		assert_string_equal(symbolizer__object(sym, start), paths[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (symbolizer__find_object(sym, bad[i], &start, &size) != -ENOENT)
			print_error("%s: found\n", bad[i]);
		assert_int_equal(symbolizer__find_object(sym, bad[i], &start, &size),
				 -ENOENT);
	}
	symbolizer__free(sym);

	/* Without DWARF, only whole variables. */
	sym = open_fixture("members-nodebug");
	assert_int_equal(symbolizer__find_object(sym, "stats.lock", &start, &size),
			 -ENOENT);
	symbolizer__free(sym);
}

/* The DIE of the type of the fixture's variable `name`. */
static bool variable_type(Dwarf *dw, const char *name, Dwarf_Die *type)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, child;

	while (!dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL)) {
		if (dwarf_child(&cudie, &child))
			continue;
		do {
			Dwarf_Attribute attr;
			const char *n = dwarf_diename(&child);

			if (dwarf_tag(&child) == DW_TAG_variable && n &&
			    !strcmp(n, name) &&
			    dwarf_attr_integrate(&child, DW_AT_type, &attr) &&
			    dwarf_formref_die(&attr, type))
				return true;
		} while (!dwarf_siblingof(&child, &child));
	}
	return false;
}

static void test_outside_the_type(void **state UNUSED)
{
	char path[PATH_MAX], *out = (char *)"unchanged";
	Dwarf_Die type;
	Dwarf *dw;
	int fd;

	fixture_path("members", path, sizeof(path));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	assert_true(variable_type(dw, "stats", &type));
	assert_int_equal(memberpath__name(&type, sizeof(struct members_stats),
					  "stats", &out), -ENOENT);
	assert_null(out);
	assert_int_equal(memberpath__name(&type, AT(struct members_stats, n),
					  "x", &out), 0);
	assert_string_equal(out, "x.n");
	free(out);
	dwarf_end(dw);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct_members),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_nested_unions_and_typedefs),
		cmocka_unit_test(test_without_dwarf_offsets_stay),
		cmocka_unit_test(test_outside_the_type),
		cmocka_unit_test(test_find_by_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
