// SPDX-License-Identifier: GPL-2.0
/*
 * rootsplit: a row's stacks get the roots of their own waits (the rest
 * stack what the named ones leave), and a stack's parts add up to it
 * exactly: counts by largest remainders, roots scaled down when a read
 * between the maps left them above the stack's wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rootsplit.h"

#define UNUSED __attribute__((unused))

static struct why_row roots_of(struct why_root *r, size_t n)
{
	return (struct why_row){ .roots = r, .n_roots = n };
}

static void check_sums(const struct rootsplit_part *parts, size_t n,
		       uint64_t count, uint64_t ns)
{
	uint64_t c = 0, w = 0;

	for (size_t i = 0; i < n; i++) {
		c += parts[i].count;
		w += parts[i].ns;
	}
	assert_int_equal(c, count);
	assert_int_equal(w, ns);
}

static void test_parts_are_the_roots_then_the_rest(void **state UNUSED)
{
	struct why_root r[2] = {
		{ .site = 0x700, .state = SP_WHY_SLEEP, .ns = 600 },
		{ .site = 0x800, .state = SP_WHY_RUNNING, .ns = 300 },
	};
	struct why_row roots = roots_of(r, 2);
	struct rootsplit_part *parts = NULL;
	size_t n, cap = 0;

	/* 1000 ns over 3 waits: 600, 300 and the rest, 100. */
	assert_int_equal(rootsplit__parts(&roots, 3, 1000, &parts, &n, &cap), 0);
	assert_int_equal(n, 3);
	assert_ptr_equal(parts[0].root, &r[0]);
	assert_int_equal(parts[0].ns, 600);
	assert_ptr_equal(parts[1].root, &r[1]);
	assert_int_equal(parts[1].ns, 300);
	assert_null(parts[2].root);
	assert_int_equal(parts[2].ns, 100);
	/* 3 * 0.6 = 1.8, 0.9, 0.3: 1 + 0 + 0, then the largest remainders
	   (0.9, 0.8) get one more each. */
	assert_int_equal(parts[0].count, 2);
	assert_int_equal(parts[1].count, 1);
	assert_int_equal(parts[2].count, 0);
	check_sums(parts, n, 3, 1000);
	free(parts);
}

static void test_roots_above_the_wait_are_scaled_down(void **state UNUSED)
{
	struct why_root r[3] = {
		{ .site = 0x700, .ns = 500 },
		{ .site = 0x800, .ns = 500 },
		{ .site = 0x900, .ns = 200 },
	};
	struct why_row roots = roots_of(r, 3);
	struct rootsplit_part *parts = NULL;
	size_t n, cap = 0;

	assert_int_equal(rootsplit__parts(&roots, 7, 1000, &parts, &n, &cap), 0);
	/* No remainder: 1000 * 5/12 = 416.67 twice, 166.67; the first
	   of equal remainders gets one more first. */
	assert_int_equal(n, 3);
	assert_int_equal(parts[0].ns + parts[1].ns, 834);
	assert_int_equal(parts[2].ns, 166);
	check_sums(parts, n, 7, 1000);
	free(parts);
}

static void test_no_roots_and_no_wait(void **state UNUSED)
{
	struct why_row none = { 0 };
	struct why_root r = { .site = 0x700, .ns = 50 };
	struct why_row one = roots_of(&r, 1);
	struct rootsplit_part *parts = NULL;
	size_t n, cap = 0;

	/* No roots: all of it is the rest. */
	assert_int_equal(rootsplit__parts(&none, 4, 80, &parts, &n, &cap), 0);
	assert_int_equal(n, 1);
	assert_null(parts[0].root);
	check_sums(parts, n, 4, 80);
	/* Failed trylocks: counts without a wait go to the rest. */
	assert_int_equal(rootsplit__parts(&none, 2, 0, &parts, &n, &cap), 0);
	assert_int_equal(n, 1);
	assert_null(parts[0].root);
	assert_int_equal(parts[0].count, 2);
	/* The whole wait charged: no empty rest. */
	assert_int_equal(rootsplit__parts(&one, 1, 50, &parts, &n, &cap), 0);
	assert_int_equal(n, 1);
	assert_ptr_equal(parts[0].root, &r);
	assert_int_equal(parts[0].count, 1);
	free(parts);
}

static void add(struct why *w, uint64_t stack_id, uint64_t site,
		uint32_t state, uint64_t ns)
{
	struct sp_why_key k = {
		.row = { .object = 0x10, .callsite = 0x400,
			 .stack_id = stack_id, .tid = 7,
			 .type = SP_TYPE_MUTEX, .pid = 100 },
		.site = site, .pid = 100, .kind = SP_WHY_ROOT,
	};
	struct sp_why_value v = { 0 };

	v.ns[state] = ns;
	v.waits[state] = 1;
	assert_int_equal(why__add(w, &k, &v), 0);
}

static void test_stacks_get_their_own_roots(void **state UNUSED)
{
	const struct report_settings s = { .coalesce = true };
	const struct report_row row = {
		.type = SP_TYPE_MUTEX, .object = 0x10, .n_objects = 1,
		.callsite = 0x400, .tid = REPORT_NO_TID, .pid = REPORT_NO_TID,
		.owner_tid = REPORT_NO_TID,
	};
	/* Stack 5 named; stack 6 lost from the table and no stack (0):
	   the rest. */
	struct rowstacks_stack stacks[2] = {
		{ .stack_id = 5 }, { .stack_id = 0 },
	};
	const struct rowstacks rs = { .stacks = stacks, .n_stacks = 2 };
	struct why_row *roots;
	struct why *w;

	assert_int_equal(why__new(&w), 0);
	add(w, 5, 0x700, SP_WHY_SLEEP, 400);
	add(w, 5, 0x800, SP_WHY_RUNNING, 100);
	add(w, 6, 0x700, SP_WHY_SLEEP, 30);
	add(w, 0, 0x900, SP_WHY_RUNNABLE, 20);
	why__seal(w);
	assert_int_equal(rootsplit__stacks(w, &row, &s, &rs, &roots), 0);
	assert_int_equal(roots[0].n_roots, 2);
	assert_int_equal(roots[0].roots[0].site, 0x700);
	assert_int_equal(roots[0].roots[0].ns, 400);
	assert_int_equal(roots[0].roots[1].site, 0x800);
	/* The rest: the row's 430 at 0x700 less stack 5's 400, and 0x900;
	   0x800 was all stack 5's. */
	assert_int_equal(roots[1].n_roots, 2);
	for (size_t i = 0; i < roots[1].n_roots; i++) {
		const struct why_root *r = &roots[1].roots[i];

		assert_true(r->site == 0x700 || r->site == 0x900);
		assert_int_equal(r->ns, r->site == 0x700 ? 30 : 20);
	}
	rootsplit__stacks_free(roots, rs.n_stacks);
	why__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts_are_the_roots_then_the_rest),
		cmocka_unit_test(test_roots_above_the_wait_are_scaled_down),
		cmocka_unit_test(test_no_roots_and_no_wait),
		cmocka_unit_test(test_stacks_get_their_own_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
