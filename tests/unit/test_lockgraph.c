// SPDX-License-Identifier: GPL-2.0
/*
 * lockgraph: cycles found as edges arrive, once each, shortest first;
 * consistent orders, self edges and read-after-read links make none.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lockgraph.h"

#define UNUSED __attribute__((unused))
#define EXCL (LOCKGRAPH_HELD_EXCLUSIVE | LOCKGRAPH_TAKEN_EXCLUSIVE)

/* Adds from -> to and looks for a cycle through it: what find_cycle says. */
static int add(struct lockgraph *g, uint64_t from, uint64_t to,
	       unsigned int flags)
{
	size_t index;
	bool changed;

	assert_int_equal(lockgraph__add(g, from, to, flags, &index, &changed), 0);
	return changed ? lockgraph__find_cycle(g, index) : 0;
}

static void test_abba_is_one_cycle(void **state UNUSED)
{
	const struct lockgraph_cycle *c;
	struct lockgraph *g;

	assert_int_equal(lockgraph__new(&g), 0);
	assert_int_equal(add(g, 20, 10, EXCL), 0);
	assert_int_equal(add(g, 10, 20, EXCL), 1);
	/* Seen again, in either order: nothing new. */
	assert_int_equal(add(g, 10, 20, EXCL), 0);
	assert_int_equal(add(g, 20, 10, EXCL), 0);
	assert_int_equal(lockgraph__cycles(g, &c), 1);
	assert_int_equal(c[0].n, 2);
	/* From the smallest class: 10 -> 20, then 20 -> 10. */
	assert_int_equal(lockgraph__edge(g, c[0].edges[0])->from, 10);
	assert_int_equal(lockgraph__edge(g, c[0].edges[0])->to, 20);
	assert_int_equal(lockgraph__edge(g, c[0].edges[1])->from, 20);
	assert_int_equal(lockgraph__edge(g, c[0].edges[1])->to, 10);
	lockgraph__free(g);
}

static void test_ladder_makes_none(void **state UNUSED)
{
	const struct lockgraph_cycle *c;
	struct lockgraph *g;

	assert_int_equal(lockgraph__new(&g), 0);
	/* Two threads take 8 locks in one order, each holding all before. */
	for (int t = 0; t < 2; t++)
		for (uint64_t b = 1; b < 8; b++)
			for (uint64_t a = 0; a < b; a++)
				assert_int_equal(add(g, a, b, EXCL), 0);
	assert_int_equal(lockgraph__cycles(g, &c), 0);
	lockgraph__free(g);
}

static void test_three_lock_cycle(void **state UNUSED)
{
	const struct lockgraph_cycle *c;
	struct lockgraph *g;

	assert_int_equal(lockgraph__new(&g), 0);
	assert_int_equal(add(g, 3, 1, EXCL), 0);	/* C -> A */
	assert_int_equal(add(g, 1, 2, EXCL), 0);	/* A -> B */
	assert_int_equal(add(g, 2, 3, EXCL), 1);	/* B -> C closes it */
	assert_int_equal(lockgraph__cycles(g, &c), 1);
	assert_int_equal(c[0].n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct lockgraph_edge *e = lockgraph__edge(g, c[0].edges[i]);
		const struct lockgraph_edge *next =
			lockgraph__edge(g, c[0].edges[(i + 1) % 3]);

		assert_int_equal(e->from, i + 1);
		assert_int_equal(e->to, next->from);
	}
	lockgraph__free(g);
}

static void test_shortest_cycle_through_the_new_edge(void **state UNUSED)
{
	const struct lockgraph_cycle *c;
	struct lockgraph *g;

	assert_int_equal(lockgraph__new(&g), 0);
	/* 2 reaches 1 directly and through 3 -> 4: the direct way is kept. */
	assert_int_equal(add(g, 2, 3, EXCL), 0);
	assert_int_equal(add(g, 3, 4, EXCL), 0);
	assert_int_equal(add(g, 4, 1, EXCL), 0);
	assert_int_equal(add(g, 2, 1, EXCL), 0);
	assert_int_equal(add(g, 1, 2, EXCL), 1);
	assert_int_equal(lockgraph__cycles(g, &c), 1);
	assert_int_equal(c[0].n, 2);
	lockgraph__free(g);
}

static void test_self_edge_refused(void **state UNUSED)
{
	struct lockgraph *g;
	size_t index;
	bool changed;

	assert_int_equal(lockgraph__new(&g), 0);
	assert_int_equal(lockgraph__add(g, 7, 7, EXCL, &index, &changed),
			 -EINVAL);
	lockgraph__free(g);
}

static void test_read_after_read_cannot_block(void **state UNUSED)
{
	const struct lockgraph_cycle *c;
	struct lockgraph *g;

	assert_int_equal(lockgraph__new(&g), 0);
	/* T1 reads R then takes M; T2 holds M then reads R. */
	assert_int_equal(add(g, 1, 2, LOCKGRAPH_TAKEN_EXCLUSIVE), 0);
	assert_int_equal(add(g, 2, 1, LOCKGRAPH_HELD_EXCLUSIVE), 0);
	assert_int_equal(lockgraph__cycles(g, &c), 0);
	/* A writer at R later: the same edge, now able to block. */
	assert_int_equal(add(g, 2, 1, EXCL), 1);
	assert_int_equal(lockgraph__cycles(g, &c), 1);
	lockgraph__free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abba_is_one_cycle),
		cmocka_unit_test(test_ladder_makes_none),
		cmocka_unit_test(test_three_lock_cycle),
		cmocka_unit_test(test_shortest_cycle_through_the_new_edge),
		cmocka_unit_test(test_self_edge_refused),
		cmocka_unit_test(test_read_after_read_cannot_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
