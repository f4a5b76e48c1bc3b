// SPDX-License-Identifier: GPL-2.0
/*
 * lockorder: classes by object for named locks and by site for the rest,
 * per process; an edge keeps its first pair and sums its counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lockorder.h"
#include "syncprof.h"

#define UNUSED __attribute__((unused))

/* Globals live below 0x10000 in these tests; the rest is heap. */
static bool below_64k(void *ctx UNUSED, uint32_t pid UNUSED, uint64_t addr)
{
	return addr < 0x10000;
}

static struct lockorder_edge pair(uint32_t pid, uint64_t held,
				  uint64_t held_site, uint64_t acquired,
				  uint64_t acquired_site)
{
	return (struct lockorder_edge){
		.held = { held, held_site, 0, SP_TYPE_MUTEX },
		.acquired = { acquired, acquired_site, 0, SP_TYPE_MUTEX },
		.count = 1,
		.pid = pid,
	};
}

static int add(struct lockorder *lo, struct lockorder_edge p)
{
	return lockorder__add(lo, &p);
}

static void test_abba_names_both_sites(void **state UNUSED)
{
	struct lockorder *lo;
	struct lockorder_edge p1 = pair(1, 0x100, 0xa1, 0x200, 0xb1);
	struct lockorder_edge p2 = pair(1, 0x200, 0xb2, 0x100, 0xa2);

	assert_int_equal(lockorder__new(-1, below_64k, NULL, &lo), 0);
	p1.count = 5;
	assert_int_equal(lockorder__add(lo, &p1), 0);
	assert_int_equal(lockorder__cycles(lo), 0);
	assert_int_equal(lockorder__add(lo, &p2), 0);
	assert_int_equal(lockorder__cycles(lo), 1);
	assert_int_equal(lockorder__cycle_len(lo, 0), 2);
	/* The first edge is the one first seen, from the smaller class. */
	assert_int_equal(lockorder__cycle_edge(lo, 0, 0)->held.site, 0xa1);
	assert_int_equal(lockorder__cycle_edge(lo, 0, 0)->acquired.site, 0xb1);
	assert_int_equal(lockorder__cycle_edge(lo, 0, 0)->count, 5);
	assert_int_equal(lockorder__cycle_edge(lo, 0, 1)->held.site, 0xb2);
	assert_int_equal(lockorder__cycle_edge(lo, 0, 1)->acquired.site, 0xa2);
	assert_null(lockorder__cycle_edge(lo, 0, 2));
	lockorder__free(lo);
}

static void test_heap_locks_are_classed_by_site(void **state UNUSED)
{
	struct lockorder *lo;

	assert_int_equal(lockorder__new(-1, below_64k, NULL, &lo), 0);
	/* list (a global) -> an item at site 0xc1; later another object at
	 * the same heap address, taken at site 0xc2 before the list. */
	assert_int_equal(add(lo, pair(1, 0x100, 0xa1, 0x500000, 0xc1)), 0);
	assert_int_equal(add(lo, pair(1, 0x500000, 0xc2, 0x100, 0xa2)), 0);
	assert_int_equal(lockorder__cycles(lo), 0);
	/* The same object at the same site both ways is one class: a cycle. */
	assert_int_equal(add(lo, pair(1, 0x500000, 0xc1, 0x100, 0xa2)), 0);
	assert_int_equal(lockorder__cycles(lo), 1);
	lockorder__free(lo);
}

static void test_processes_apart(void **state UNUSED)
{
	struct lockorder *lo;

	assert_int_equal(lockorder__new(-1, below_64k, NULL, &lo), 0);
	assert_int_equal(add(lo, pair(1, 0x100, 0xa1, 0x200, 0xb1)), 0);
	assert_int_equal(add(lo, pair(2, 0x200, 0xb2, 0x100, 0xa2)), 0);
	assert_int_equal(lockorder__cycles(lo), 0);
	lockorder__free(lo);
}

static void test_one_class_twice_orders_nothing(void **state UNUSED)
{
	struct lockorder *lo;

	assert_int_equal(lockorder__new(-1, below_64k, NULL, &lo), 0);
	/* Two heap objects of one site, hand over hand. */
	assert_int_equal(add(lo, pair(1, 0x500000, 0xc1, 0x600000, 0xc1)), 0);
	assert_int_equal(lockorder__cycles(lo), 0);
	lockorder__free(lo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abba_names_both_sites),
		cmocka_unit_test(test_heap_locks_are_classed_by_site),
		cmocka_unit_test(test_processes_apart),
		cmocka_unit_test(test_one_class_twice_orders_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
