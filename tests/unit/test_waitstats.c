// SPDX-License-Identifier: GPL-2.0
/*
 * waitstats: the one stats merge.  Every field adds up (counts, times,
 * the histogram) or keeps the larger (maxima), and the snapshot's seal
 * and the report's rows give what it gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"
#include "snapshot.h"
#include "waitstats.h"

#define UNUSED __attribute__((unused))

/* Every field a different value, from base: a field left out shows. */
static struct wait_stats stats_from(uint64_t base)
{
	struct wait_stats s;
	uint64_t *f = (uint64_t *)&s;

	for (size_t i = 0; i < sizeof(s) / sizeof(*f); i++)
		f[i] = base + i;
	return s;
}

static void test_every_field_merges(void **state UNUSED)
{
	struct wait_stats a = stats_from(100), b = stats_from(1000);
	const struct wait_stats was = a;

	wait_stats__add(&a, &b);
	assert_int_equal(a.count, was.count + b.count);
	assert_int_equal(a.wait_ns, was.wait_ns + b.wait_ns);
	assert_int_equal(a.failed, was.failed + b.failed);
	assert_int_equal(a.failed_ns, was.failed_ns + b.failed_ns);
	assert_int_equal(a.futile, was.futile + b.futile);
	assert_int_equal(a.hold_count, was.hold_count + b.hold_count);
	assert_int_equal(a.hold_ns, was.hold_ns + b.hold_ns);
	for (size_t k = 0; k < SP_HIST_SLOTS; k++)
		assert_int_equal(a.hist[k], was.hist[k] + b.hist[k]);
	/* Maxima: b's are the larger here; the other way round below. */
	assert_int_equal(a.max_ns, b.max_ns);
	assert_int_equal(a.window_max_ns, b.window_max_ns);
	assert_int_equal(a.hold_max_ns, b.hold_max_ns);
	assert_int_equal(a.hold_window_max_ns, b.hold_window_max_ns);

	struct wait_stats big = stats_from(5000), small = stats_from(1);

	wait_stats__add(&big, &small);
	assert_int_equal(big.max_ns, stats_from(5000).max_ns);
	assert_int_equal(big.hold_max_ns, stats_from(5000).hold_max_ns);
	/* No field is left as it was: each one is summed or kept larger. */
	const uint64_t *f = (const uint64_t *)&a, *w = (const uint64_t *)&was;

	for (size_t i = 0; i < sizeof(a) / sizeof(*f); i++)
		assert_true(f[i] != w[i]);
}

/*
 * The snapshot (two adds of one key, sealed into one entry) and the
 * report (one row of two objects at one call site) merge alike.
 */
static void test_snapshot_and_report_merge_alike(void **state UNUSED)
{
	struct snapshot *snap;
	struct sp_key key = { .type = SP_TYPE_MUTEX, .object = 0x10,
			      .callsite = 0x400 };
	const struct sp_value one = { .count = 3, .wait_ns = 300,
				      .max_ns = 200, .failed = 1,
				      .failed_ns = 50, .futile = 2 };
	const struct sp_value two = { .count = 5, .wait_ns = 700,
				      .max_ns = 400, .futile = 1 };
	struct wait_stats want = { 0 };

	assert_int_equal(snapshot__new(&snap), 0);
	assert_int_equal(snapshot__add(snap, &key, &one, 1, 0), 0);
	assert_int_equal(snapshot__add(snap, &key, &two, 1, 0), 0);
	key.object = 0x20;
	assert_int_equal(snapshot__add(snap, &key, &two, 1, 0), 0);
	snapshot__seal(snap);
	assert_int_equal(snapshot__count(snap), 2);

	const struct snapshot_entry *e = snapshot__entries(snap);

	assert_int_equal(e[0].count, 8);
	assert_int_equal(e[0].wait_ns, 1000);
	assert_int_equal(e[0].max_ns, 400);
	assert_int_equal(e[0].futile, 3);
	wait_stats__add(&want, &e[0].stats);
	wait_stats__add(&want, &e[1].stats);

	struct report_rows rows = { 0 };
	const struct report_settings settings = { .coalesce = true };

	assert_int_equal(report__build(snapshot__entries(snap), snapshot__count(snap), &settings,
				       &rows), 0);
	assert_int_equal(rows.count, 1);
	assert_int_equal(rows.rows[0].n_objects, 2);
	assert_memory_equal(&rows.rows[0].stats, &want, sizeof(want));
	report__free(&rows);
	snapshot__free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field_merges),
		cmocka_unit_test(test_snapshot_and_report_merge_alike),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
