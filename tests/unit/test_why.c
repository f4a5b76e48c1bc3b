// SPDX-License-Identifier: GPL-2.0
/*
 * why: the charges of --why by report row (the grouping report__build
 * used), roots summed by site and state, and windows as differences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "whyrows.h"

#define UNUSED __attribute__((unused))

static struct sp_why_key key(uint64_t object, uint64_t callsite, uint32_t kind,
			     uint64_t site)
{
	return (struct sp_why_key){
		.row = { .object = object, .callsite = callsite, .tid = 7,
			 .type = SP_TYPE_MUTEX, .pid = 100 },
		.site = site, .pid = site ? 100 : 0, .kind = kind,
	};
}

static void add(struct why *w, struct sp_why_key k, uint32_t state,
		uint64_t ns)
{
	struct sp_why_value v = { 0 };

	v.ns[state] = ns;
	v.waits[state] = 1;
	assert_int_equal(why__add(w, &k, &v), 0);
}

static struct why *sample(void)
{
	struct why *w;

	assert_int_equal(why__new(&w), 0);
	/* Two objects at one call site; another call site. */
	add(w, key(0x10, 0x400, SP_WHY_HOLDER, 0), SP_WHY_LOCK, 900);
	add(w, key(0x20, 0x400, SP_WHY_HOLDER, 0), SP_WHY_SLEEP, 100);
	add(w, key(0x10, 0x400, SP_WHY_ROOT, 0x777), SP_WHY_SLEEP, 700);
	add(w, key(0x20, 0x400, SP_WHY_ROOT, 0x777), SP_WHY_SLEEP, 100);
	add(w, key(0x10, 0x400, SP_WHY_ROOT, 0x888), SP_WHY_RUNNING, 200);
	add(w, key(0x10, 0x500, SP_WHY_ROOT, 0x888), SP_WHY_RUNNING, 50);
	why__seal(w);
	return w;
}

static const struct report_row row400 = {
	.type = SP_TYPE_MUTEX, .object = 0x10, .n_objects = 2,
	.callsite = 0x400, .tid = REPORT_NO_TID, .pid = 100,
	.owner_tid = REPORT_NO_TID,
};

static void test_row_sums_its_objects_when_coalesced(void **state UNUSED)
{
	const struct report_settings s = { .coalesce = true,
					   .per_process = true };
	struct why *w = sample();
	struct why_row r;

	assert_int_equal(why__row(w, &row400, &s, &r), 0);
	assert_int_equal(r.holder[SP_WHY_LOCK], 900);
	assert_int_equal(r.holder[SP_WHY_SLEEP], 100);
	assert_int_equal(r.n_roots, 2);
	/* Largest first; the other call site's root is not this row's. */
	assert_int_equal(r.roots[0].site, 0x777);
	assert_int_equal(r.roots[0].state, SP_WHY_SLEEP);
	assert_int_equal(r.roots[0].ns, 800);
	assert_int_equal(r.roots[0].waits, 2);
	assert_int_equal(r.roots[1].site, 0x888);
	assert_int_equal(r.roots[1].ns, 200);
	why__row_free(&r);
	why__free(w);
}

static void test_row_keeps_its_object_apart(void **state UNUSED)
{
	const struct report_settings s = { .coalesce = false,
					   .per_process = true };
	struct report_row one = row400;
	struct why *w = sample();
	struct why_row r;

	one.object = 0x20;
	one.n_objects = 1;
	assert_int_equal(why__row(w, &one, &s, &r), 0);
	assert_int_equal(r.holder[SP_WHY_LOCK], 0);
	assert_int_equal(r.holder[SP_WHY_SLEEP], 100);
	assert_int_equal(r.n_roots, 1);
	assert_int_equal(r.roots[0].ns, 100);
	why__row_free(&r);
	why__free(w);
}

static void test_state_rows_sum_a_lock_across_its_rows(void **state UNUSED)
{
	const struct report_settings s = { .coalesce = false,
					   .per_process = true };
	struct report_row two[2] = { row400, row400 };
	const struct report_rows rows = { .rows = two, .count = 2 };
	struct report_rows out;
	struct why *w = sample();

	/* Object 0x10 waited on at 0x400 and at 0x500: one root, 0x888. */
	two[0].n_objects = two[1].n_objects = 1;
	two[1].callsite = 0x500;
	assert_int_equal(why__state_rows(w, &rows, &s, SP_WHY_RUNNING, &out),
			 0);
	assert_int_equal(out.count, 1);
	assert_int_equal(out.rows[0].object, 0x10);
	assert_int_equal(out.rows[0].callsite, 0x888);
	assert_int_equal(out.rows[0].wait_ns, 250);
	assert_int_equal(out.rows[0].count, 2);
	free(out.rows);
	/* Another state: its own roots, largest first. */
	assert_int_equal(why__state_rows(w, &rows, &s, SP_WHY_SLEEP, &out), 0);
	assert_int_equal(out.count, 1);
	assert_int_equal(out.rows[0].callsite, 0x777);
	assert_int_equal(out.rows[0].wait_ns, 700);
	free(out.rows);
	why__free(w);
}

static void test_delta_is_the_window(void **state UNUSED)
{
	struct why *before, *after, *d;
	const struct report_settings s = { .coalesce = true,
					   .per_process = true };
	struct why_row r;

	assert_int_equal(why__new(&before), 0);
	add(before, key(0x10, 0x400, SP_WHY_ROOT, 0x777), SP_WHY_SLEEP, 300);
	why__set_counts(before, 1, 0);
	why__seal(before);
	after = sample();
	why__set_counts(after, 3, 2);
	assert_int_equal(why__delta(after, before, &d), 0);
	assert_int_equal(why__row(d, &row400, &s, &r), 0);
	assert_int_equal(r.roots[0].site, 0x777);
	assert_int_equal(r.roots[0].ns, 500);
	why__row_free(&r);
	uint64_t cut, dropped;

	why__counts(d, &cut, &dropped);
	assert_int_equal(cut, 2);
	assert_int_equal(dropped, 2);
	why__free(d);
	why__free(before);
	why__free(after);
}

/* Process 200 maps the lock's page twice, 0x1000 apart: one lock. */
static void rekey_twice_mapped(void *ctx UNUSED, struct sp_key *k)
{
	if (k->pid == 200 && k->object >= 0x1000)
		k->object -= 0x1000;
	if (k->pid == 200 && k->callsite >= 0x1000)
		k->callsite -= 0x1000;
}

static struct why *twice_mapped(uint64_t a_ns, uint64_t b_ns)
{
	struct sp_why_key a = key(0x10, 0x400, SP_WHY_ROOT, 0x777);
	struct sp_why_key b = key(0x1010, 0x400, SP_WHY_ROOT, 0x1777);
	struct why *w;

	a.row.pid = b.row.pid = a.pid = b.pid = 200;
	assert_int_equal(why__new(&w), 0);
	add(w, a, SP_WHY_SLEEP, a_ns);
	add(w, b, SP_WHY_SLEEP, b_ns);
	why__seal(w);
	why__rekey(w, rekey_twice_mapped, NULL);
	return w;
}

static void test_rekey_merges_what_it_makes_equal(void **state UNUSED)
{
	const struct report_settings s = { .coalesce = false,
					   .per_process = true };
	struct why *prev = twice_mapped(100, 200), *cur = twice_mapped(300, 500);
	struct report_row one = row400;
	struct why *d;
	struct why_row r;

	/* A window between two reads: right only if each read is one entry. */
	assert_int_equal(why__delta(cur, prev, &d), 0);
	one.object = 0x10;
	one.n_objects = 1;
	one.pid = 200;
	assert_int_equal(why__row(d, &one, &s, &r), 0);
	assert_int_equal(r.n_roots, 1);
	assert_int_equal(r.roots[0].site, 0x777);
	assert_int_equal(r.roots[0].ns, 500);
	assert_int_equal(r.roots[0].waits, 0);
	why__row_free(&r);
	assert_int_equal(why__row(cur, &one, &s, &r), 0);
	assert_int_equal(r.roots[0].ns, 800);
	assert_int_equal(r.roots[0].waits, 2);
	why__row_free(&r);
	why__free(d);
	why__free(cur);
	why__free(prev);
}

static void test_state_names(void **state UNUSED)
{
	assert_string_equal(why__state_name(SP_WHY_RUNNABLE), "runnable");
	assert_string_equal(why__state_name(SP_WHY_WOKEN), "woken");
	assert_string_equal(why__state_name(99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_sums_its_objects_when_coalesced),
		cmocka_unit_test(test_row_keeps_its_object_apart),
		cmocka_unit_test(test_state_rows_sum_a_lock_across_its_rows),
		cmocka_unit_test(test_delta_is_the_window),
		cmocka_unit_test(test_rekey_merges_what_it_makes_equal),
		cmocka_unit_test(test_state_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
