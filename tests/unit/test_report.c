// SPDX-License-Identifier: GPL-2.0
/*
 * report__build: grouping (coalesce by call site, split by thread), sums
 * and maxima, the four sort keys with QSP's tie-breaks, and --top.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "locktype.h"
#include "report.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct snapshot_entry entry(uint32_t type, uint64_t object,
				   uint64_t callsite, uint32_t tid,
				   uint64_t count, uint64_t wait_ns,
				   uint64_t max_ns, uint64_t failed)
{
	return (struct snapshot_entry){
		.key = {
			.object = object,
			.callsite = callsite,
			.tid = tid,
			.type = type,
		},
		.count = count,
		.wait_ns = wait_ns,
		.max_ns = max_ns,
		.failed = failed,
	};
}

static const struct report_settings coalesced = {
	.coalesce = true, .sort = SORT_TOTAL,
};
static const struct report_settings per_object = {
	.coalesce = false, .sort = SORT_TOTAL,
};

static struct report_settings sorted_by(enum sort_key sort)
{
	return (struct report_settings){ .coalesce = false, .sort = sort };
}

static void build(const struct snapshot_entry *e, size_t n,
		  const struct report_settings *s, struct report_rows *out)
{
	memset(out, 0xa5, sizeof(*out));
	assert_int_equal(report__build(e, n, s, out), 0);
}

static void assert_row(const struct report_row *r, uint32_t type,
		       uint64_t object, uint32_t n_objects, uint64_t callsite,
		       int64_t tid, uint64_t count, uint64_t wait_ns,
		       uint64_t max_ns, uint64_t failed)
{
	assert_int_equal(r->type, type);
	assert_int_equal(r->object, object);
	assert_int_equal(r->n_objects, n_objects);
	assert_int_equal(r->callsite, callsite);
	assert_int_equal(r->tid, tid);
	assert_int_equal(r->count, count);
	assert_int_equal(r->wait_ns, wait_ns);
	assert_int_equal(r->max_ns, max_ns);
	assert_int_equal(r->failed, failed);
}

static void test_empty_input(void **state UNUSED)
{
	struct report_rows rows;

	build(NULL, 0, &coalesced, &rows);
	assert_null(rows.rows);
	assert_int_equal(rows.count, 0);
	assert_int_equal(rows.total, 0);
	report__free(&rows);
}

static void test_single_entry(void **state UNUSED)
{
	struct snapshot_entry e = entry(SP_TYPE_MUTEX, 0x1000, 0x400, 7, 3, 300, 200, 1);
	struct report_rows rows;

	build(&e, 1, &coalesced, &rows);
	assert_int_equal(rows.count, 1);
	assert_int_equal(rows.total, 1);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID,
		   3, 300, 200, 1);
	report__free(&rows);
	assert_null(rows.rows);
	assert_int_equal(rows.count, 0);
}

static struct snapshot_entry stacked(uint64_t object, uint32_t tid,
				     uint64_t stack_id, uint64_t count,
				     uint64_t wait_ns, uint64_t max_ns)
{
	struct snapshot_entry e = entry(SP_TYPE_MUTEX, object, 0x400, tid,
					count, wait_ns, max_ns, 0);

	e.key.stack_id = stack_id;
	return e;
}

static void test_rows_gather_their_stacks_largest_wait_first(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		stacked(0x1000, 1, 0xaa, 2, 100, 60),
		stacked(0x2000, 2, 0xbb, 1, 500, 500),
		stacked(0x1000, 3, 0xbb, 1, 50, 50),
		stacked(0x2000, 1, 0xaa, 3, 30, 20),
		stacked(0x3000, 1, 0, 4, 40, 10),
		entry(SP_TYPE_CONDVAR, 0x1000, 0x400, 1, 1, 7, 7, 0),
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &coalesced, &rows);
	assert_int_equal(rows.total, 2);
	assert_int_equal(rows.rows[0].type, SP_TYPE_MUTEX);
	assert_int_equal(rows.rows[0].wait_ns, 720);
	assert_int_equal(rows.rows[0].n_stacks, 2);
	assert_int_equal(rows.rows[0].stacks[0].stack_id, 0xbb);
	assert_int_equal(rows.rows[0].stacks[0].count, 2);
	assert_int_equal(rows.rows[0].stacks[0].wait_ns, 550);
	assert_int_equal(rows.rows[0].stacks[0].max_ns, 500);
	assert_int_equal(rows.rows[0].stacks[1].stack_id, 0xaa);
	assert_int_equal(rows.rows[0].stacks[1].count, 5);
	assert_int_equal(rows.rows[0].stacks[1].wait_ns, 130);
	assert_int_equal(rows.rows[0].stacks[1].max_ns, 60);
	assert_int_equal(rows.rows[1].n_stacks, 0);
	assert_null(rows.rows[1].stacks);
	report__free(&rows);

	build(e, ARRAY_SIZE(e), &per_object, &rows);
	assert_int_equal(rows.total, 4);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[0].n_stacks, 2);
	assert_int_equal(rows.rows[0].stacks[0].wait_ns, 500);
	assert_int_equal(rows.rows[0].stacks[1].wait_ns, 30);
	report__free(&rows);
}

static void test_coalesce_merges_objects_of_one_callsite(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 1, 5, 500, 150, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 1, 2, 100, 90, 1),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 2, 1, 700, 700, 2),
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &coalesced, &rows);
	assert_int_equal(rows.count, 1);
	assert_int_equal(rows.total, 1);
	/* Lowest object address, three objects, sums and the largest max. */
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 3, 0x400, REPORT_NO_TID,
		   8, 1300, 700, 3);
	report__free(&rows);
}

static void test_coalesce_counts_distinct_objects(void **state UNUSED)
{
	/* Object 0x1000 seen from three threads is still one object. */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 1, 1, 10, 10, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 2, 1, 10, 10, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 1, 1, 10, 10, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 3, 1, 10, 10, 0),
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &coalesced, &rows);
	assert_int_equal(rows.count, 1);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 2, 0x400, REPORT_NO_TID,
		   4, 40, 10, 0);
	report__free(&rows);
}

static void test_coalesce_keeps_callsites_and_types_apart(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 1, 1, 400, 400, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x500, 1, 1, 300, 300, 0),
		entry(SP_TYPE_CONDVAR, 0x1000, 0x400, 1, 1, 200, 200, 0),
		entry(SP_TYPE_REC_MUTEX, 0x2000, 0x400, 1, 1, 100, 100, 0),
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &coalesced, &rows);
	assert_int_equal(rows.count, 4);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID,
		   1, 400, 400, 0);
	assert_row(&rows.rows[1], SP_TYPE_MUTEX, 0x1000, 1, 0x500, REPORT_NO_TID,
		   1, 300, 300, 0);
	/* The condvar's wait is an event: after every lock row. */
	assert_row(&rows.rows[2], SP_TYPE_REC_MUTEX, 0x2000, 1, 0x400,
		   REPORT_NO_TID, 1, 100, 100, 0);
	assert_row(&rows.rows[3], SP_TYPE_CONDVAR, 0x1000, 1, 0x400,
		   REPORT_NO_TID, 1, 200, 200, 0);
	assert_int_equal(report__first_event(&rows), 3);
	report__free(&rows);
}

static void test_no_coalesce_one_row_per_object(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 1, 5, 500, 150, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 1, 2, 100, 90, 1),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 2, 4, 200, 120, 0),
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &per_object, &rows);
	assert_int_equal(rows.count, 2);
	assert_int_equal(rows.total, 2);
	/* Threads of one object are summed. */
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x3000, 1, 0x400, REPORT_NO_TID,
		   5, 500, 150, 0);
	assert_row(&rows.rows[1], SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID,
		   6, 300, 120, 1);
	report__free(&rows);
}

static void test_per_thread_splits_by_tid(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 11, 1, 100, 100, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 12, 2, 600, 500, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 11, 3, 300, 150, 1),
	};
	const struct report_settings s = {
		.coalesce = true, .per_thread = true, .sort = SORT_TOTAL,
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 2);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 1, 0x400, 12,
		   2, 600, 500, 0);
	/* Thread 11: two objects coalesced. */
	assert_row(&rows.rows[1], SP_TYPE_MUTEX, 0x1000, 2, 0x400, 11,
		   4, 400, 150, 1);
	report__free(&rows);
}

static void test_per_thread_without_coalesce(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 11, 1, 100, 100, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 12, 2, 600, 500, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 11, 3, 300, 150, 1),
	};
	const struct report_settings s = {
		.coalesce = false, .per_thread = true, .sort = SORT_TOTAL,
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 3);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 1, 0x400, 12,
		   2, 600, 500, 0);
	assert_row(&rows.rows[1], SP_TYPE_MUTEX, 0x1000, 1, 0x400, 11,
		   3, 300, 150, 1);
	assert_row(&rows.rows[2], SP_TYPE_MUTEX, 0x2000, 1, 0x400, 11,
		   1, 100, 100, 0);
	report__free(&rows);
}

static void test_per_thread_keeps_large_tid(void **state UNUSED)
{
	/* A tid above INT32_MAX must not turn negative (or into NO_TID). */
	struct snapshot_entry e = entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0xffffffffu,
					1, 1, 1, 0);
	const struct report_settings s = {
		.coalesce = true, .per_thread = true, .sort = SORT_TOTAL,
	};
	struct report_rows rows;

	build(&e, 1, &s, &rows);
	assert_int_equal(rows.rows[0].tid, 4294967295ll);
	report__free(&rows);
}

static void test_sort_total_descending(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 100, 200, 5, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 900, 900, 0),
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 10, 500, 60, 0),
	};
	struct report_settings s = sorted_by(SORT_TOTAL);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x3000);
	assert_int_equal(rows.rows[2].object, 0x1000);
	report__free(&rows);
}

static void test_sort_mean_descending(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 100, 200, 5, 0),	/* 2 */
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 900, 900, 0),	/* 900 */
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 10, 500, 60, 0),	/* 50 */
	};
	struct report_settings s = sorted_by(SORT_MEAN);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x3000);
	assert_int_equal(rows.rows[2].object, 0x1000);
	report__free(&rows);
}

static void test_sort_max_descending(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 100, 200, 5, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 900, 40, 0),
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 10, 500, 60, 0),
	};
	struct report_settings s = sorted_by(SORT_MAX);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x3000);
	assert_int_equal(rows.rows[1].object, 0x2000);
	assert_int_equal(rows.rows[2].object, 0x1000);
	report__free(&rows);
}

static void test_sort_count_descending(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 10, 200, 5, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 900, 40, 0),
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 100, 500, 60, 0),
	};
	struct report_settings s = sorted_by(SORT_COUNT);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x3000);
	assert_int_equal(rows.rows[1].object, 0x1000);
	assert_int_equal(rows.rows[2].object, 0x2000);
	report__free(&rows);
}

static void test_sort_ties_by_object_callsite_type_tid(void **state UNUSED)
{
	/* Equal totals everywhere; given in reverse of the expected order. */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x2000, 0x100, 1, 1, 50, 50, 0),
		entry(SP_TYPE_REC_MUTEX, 0x1000, 0x200, 2, 1, 50, 50, 0),
		entry(SP_TYPE_REC_MUTEX, 0x1000, 0x200, 1, 1, 50, 50, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x200, 1, 1, 50, 50, 0),
		entry(SP_TYPE_REC_MUTEX, 0x1000, 0x100, 1, 1, 50, 50, 0),
	};
	const struct report_settings s = {
		.coalesce = false, .per_thread = true, .sort = SORT_TOTAL,
	};
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 5);
	assert_row(&rows.rows[0], SP_TYPE_REC_MUTEX, 0x1000, 1, 0x100, 1, 1, 50, 50, 0);
	assert_row(&rows.rows[1], SP_TYPE_MUTEX, 0x1000, 1, 0x200, 1, 1, 50, 50, 0);
	assert_row(&rows.rows[2], SP_TYPE_REC_MUTEX, 0x1000, 1, 0x200, 1, 1, 50, 50, 0);
	assert_row(&rows.rows[3], SP_TYPE_REC_MUTEX, 0x1000, 1, 0x200, 2, 1, 50, 50, 0);
	assert_row(&rows.rows[4], SP_TYPE_MUTEX, 0x2000, 1, 0x100, 1, 1, 50, 50, 0);
	report__free(&rows);
}

/*
 * Lock rows first, each class sorted by the key: --top keeps the worst
 * lock ahead of a larger condvar wait; a class alone on request.
 */
static void test_lock_rows_first_then_events(void **state UNUSED)
{
	/* Each a row of its own: type and wait. */
	static const struct {
		uint32_t type;
		uint64_t wait_ns;
	} in[] = {
		{ SP_TYPE_CONDVAR, 9000 }, { SP_TYPE_MUTEX, 20 },
		{ SP_TYPE_JOIN, 500 }, { SP_TYPE_RWLOCK_W, 30 },
		{ SP_TYPE_POLL, 700 },
	};
	struct snapshot_entry e[ARRAY_SIZE(in)];
	struct report_settings s = { .coalesce = true, .sort = SORT_TOTAL };
	static const uint32_t order[] = {
		SP_TYPE_RWLOCK_W, SP_TYPE_MUTEX, SP_TYPE_CONDVAR, SP_TYPE_POLL,
		SP_TYPE_JOIN,
	};
	struct report_rows rows;

	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		e[i] = entry(in[i].type, 0x1000 * (i + 1), 0x100 * (i + 1), 1, 1,
			     in[i].wait_ns, in[i].wait_ns, 0);
	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, ARRAY_SIZE(order));
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		assert_int_equal(rows.rows[i].type, order[i]);
	assert_int_equal(report__first_event(&rows), 2);
	report__free(&rows);

	/* --top keeps the locks; a class alone. */
	static const struct {
		unsigned int top;
		enum report_classes classes;
		size_t count, total;
		uint32_t first;
		size_t first_event;
	} views[] = {
		{ 3, REPORT_CLASSES_ALL, 3, 5, SP_TYPE_RWLOCK_W, 2 },
		{ 0, REPORT_CLASSES_LOCKS, 2, 2, SP_TYPE_RWLOCK_W, 2 },
		{ 0, REPORT_CLASSES_EVENTS, 3, 3, SP_TYPE_CONDVAR, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(views); i++) {
		s.top = views[i].top;
		s.classes = views[i].classes;
		build(e, ARRAY_SIZE(e), &s, &rows);
		assert_int_equal(rows.count, views[i].count);
		assert_int_equal(rows.total, views[i].total);
		assert_int_equal(rows.rows[0].type, views[i].first);
		assert_int_equal(report__first_event(&rows), views[i].first_event);
		report__free(&rows);
	}

	/* No entry of the class: no rows. */
	build(e, 1, &(struct report_settings){ .classes = REPORT_CLASSES_LOCKS },
	      &rows);
	assert_int_equal(rows.count, 0);
	assert_int_equal(rows.total, 0);
	report__free(&rows);
	assert_string_equal(report__classes_name(REPORT_CLASSES_EVENTS), "events");
}

/* Rows out of class order have no line before their events. */
static void test_first_event_needs_class_order(void **state UNUSED)
{
	struct report_row r[3] = {
		{ .type = SP_TYPE_MUTEX }, { .type = SP_TYPE_CONDVAR },
		{ .type = SP_TYPE_REC_MUTEX },
	};
	struct report_rows rows = { .rows = r, .count = 3, .total = 3 };

	assert_int_equal(report__first_event(&rows), 3);
	rows.count = 2;
	assert_int_equal(report__first_event(&rows), 1);
	rows.count = 0;
	assert_int_equal(report__first_event(&rows), 0);
}

static void test_sort_ties_for_each_key(void **state UNUSED)
{
	static const enum sort_key keys[] = {
		SORT_TOTAL, SORT_MEAN, SORT_MAX, SORT_COUNT,
	};
	/* Same total, mean, max and count: only the object decides. */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 4, 80, 30, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x500, 0, 4, 80, 30, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x300, 0, 4, 80, 30, 0),
	};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		struct report_settings s = sorted_by(keys[i]);
		struct report_rows rows;

		build(e, ARRAY_SIZE(e), &s, &rows);
		assert_int_equal(rows.rows[0].object, 0x1000);
		assert_int_equal(rows.rows[1].object, 0x2000);
		assert_int_equal(rows.rows[2].object, 0x3000);
		report__free(&rows);
	}
}

static void test_sort_mean_is_exact(void **state UNUSED)
{
	/*
	 * 10/3 = 3.33 < 7/2 = 3.5.  Integer division gives 3 and 3, a tie
	 * the lower object would win; the exact comparison puts 0x2000 first.
	 */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 3, 10, 5, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 2, 7, 5, 0),
	};
	struct report_settings s = sorted_by(SORT_MEAN);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x1000);
	report__free(&rows);
}

static void test_sort_mean_without_overflow(void **state UNUSED)
{
	/*
	 * Means 3.69e18 (0x1000) < 4.61e18 (0x2000).  The cross products
	 * wait * count overflow 64 bits, and wrapped they compare the other
	 * way round.
	 */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 5, UINT64_MAX, 5, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 4, UINT64_MAX - 1, 5, 0),
	};
	struct report_settings s = sorted_by(SORT_MEAN);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x1000);
	report__free(&rows);
}

static void test_sort_mean_zero_count_is_zero(void **state UNUSED)
{
	/* Only failed trylocks: wait but no count, mean 0, goes last. */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 0, 1000000, 1000000, 9),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1000, 1000, 5, 0),
	};
	struct report_settings s = sorted_by(SORT_MEAN);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x1000);
	report__free(&rows);
}

/*
 * A zero-count row's mean is 0; a mean below 1 ns (here 1 ns / 1000) is
 * still larger, so the exact comparison puts 0x2000 first.
 */
static void test_sort_mean_zero_count_vs_fractional_mean(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 0, 5000, 5000, 3),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1000, 1, 1, 0),
	};
	struct report_settings s = sorted_by(SORT_MEAN);
	struct report_rows rows;

	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.rows[0].object, 0x2000);
	assert_int_equal(rows.rows[1].object, 0x1000);
	report__free(&rows);
}

static void test_row_cmp_directly(void **state UNUSED)
{
	struct report_row a = { .object = 1, .count = 3, .wait_ns = 10, .max_ns = 9 };
	struct report_row b = { .object = 2, .count = 2, .wait_ns = 7, .max_ns = 9 };

	assert_true(report__row_cmp(&a, &b, SORT_TOTAL) < 0);	/* 10 > 7 */
	assert_true(report__row_cmp(&a, &b, SORT_MEAN) > 0);	/* 3.33 < 3.5 */
	/* The mean leaves failed waits out: b's 7 ns hold 4 failed, 1.5 < 3.33. */
	b.failed_ns = 4;
	assert_true(report__row_cmp(&a, &b, SORT_MEAN) < 0);
	assert_int_equal(report__counted_ns(&b), 3);
	b.failed_ns = 0;
	assert_true(report__row_cmp(&a, &b, SORT_MAX) < 0);	/* tie: object */
	assert_true(report__row_cmp(&a, &b, SORT_COUNT) < 0);	/* 3 > 2 */
	assert_int_equal(report__row_cmp(&a, &a, SORT_TOTAL), 0);
	b = a;
	b.tid = 5;
	a.tid = REPORT_NO_TID;
	assert_true(report__row_cmp(&a, &b, SORT_TOTAL) < 0);
}

static void test_top_truncates_count_not_total(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 1, 100, 1, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 500, 1, 0),
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 1, 300, 1, 0),
		entry(SP_TYPE_MUTEX, 0x4000, 0x400, 0, 1, 400, 1, 0),
		entry(SP_TYPE_MUTEX, 0x5000, 0x400, 0, 1, 200, 1, 0),
	};
	struct report_settings s = sorted_by(SORT_TOTAL);
	struct report_rows rows;

	s.top = 2;
	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 2);
	assert_int_equal(rows.total, 5);
	assert_int_equal(rows.rows[0].wait_ns, 500);
	assert_int_equal(rows.rows[1].wait_ns, 400);
	report__free(&rows);
}

static void test_top_zero_keeps_all(void **state UNUSED)
{
	struct snapshot_entry e[30];
	struct report_settings s = sorted_by(SORT_TOTAL);
	struct report_rows rows;

	for (size_t i = 0; i < ARRAY_SIZE(e); i++)
		e[i] = entry(SP_TYPE_MUTEX, 0x1000 + i * 0x40, 0x400, 0, 1,
			     i + 1, 1, 0);
	s.top = 0;
	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 30);
	assert_int_equal(rows.total, 30);
	for (size_t i = 0; i < 30; i++)
		assert_int_equal(rows.rows[i].wait_ns, 30 - i);
	report__free(&rows);
}

static void test_top_larger_than_rows(void **state UNUSED)
{
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 1, 100, 1, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 500, 1, 0),
	};
	struct report_settings s = sorted_by(SORT_TOTAL);
	struct report_rows rows;

	s.top = 10;
	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 2);
	assert_int_equal(rows.total, 2);
	report__free(&rows);
}

static void test_top_counts_coalesced_rows(void **state UNUSED)
{
	/* 4 entries, 2 rows after coalescing: total is 2, not 4. */
	const struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 1, 100, 1, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x400, 0, 1, 100, 1, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x500, 0, 1, 50, 1, 0),
		entry(SP_TYPE_MUTEX, 0x2000, 0x500, 0, 1, 50, 1, 0),
	};
	struct report_settings s = coalesced;
	struct report_rows rows;

	s.top = 1;
	build(e, ARRAY_SIZE(e), &s, &rows);
	assert_int_equal(rows.count, 1);
	assert_int_equal(rows.total, 2);
	assert_row(&rows.rows[0], SP_TYPE_MUTEX, 0x1000, 2, 0x400, REPORT_NO_TID,
		   2, 200, 1, 0);
	report__free(&rows);
}

static void test_input_left_unchanged(void **state UNUSED)
{
	struct snapshot_entry e[] = {
		entry(SP_TYPE_MUTEX, 0x3000, 0x400, 0, 1, 100, 1, 0),
		entry(SP_TYPE_MUTEX, 0x1000, 0x400, 0, 1, 500, 1, 0),
	};
	struct snapshot_entry copy[2];
	struct report_rows rows;

	memcpy(copy, e, sizeof(e));
	build(e, ARRAY_SIZE(e), &coalesced, &rows);
	assert_memory_equal(e, copy, sizeof(e));
	report__free(&rows);
}

static void test_type_names(void **state UNUSED)
{
	assert_string_equal(locktype__name(SP_TYPE_MUTEX), "mutex");
	assert_string_equal(locktype__name(SP_TYPE_REC_MUTEX), "rec_mutex");
	assert_string_equal(locktype__name(SP_TYPE_CONDVAR), "condvar");
	assert_string_equal(locktype__name(SP_TYPE__COUNT), "unknown");
	assert_string_equal(locktype__name(0xffffffffu), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_input),
		cmocka_unit_test(test_single_entry),
		cmocka_unit_test(test_rows_gather_their_stacks_largest_wait_first),
		cmocka_unit_test(test_coalesce_merges_objects_of_one_callsite),
		cmocka_unit_test(test_coalesce_counts_distinct_objects),
		cmocka_unit_test(test_coalesce_keeps_callsites_and_types_apart),
		cmocka_unit_test(test_no_coalesce_one_row_per_object),
		cmocka_unit_test(test_per_thread_splits_by_tid),
		cmocka_unit_test(test_per_thread_without_coalesce),
		cmocka_unit_test(test_per_thread_keeps_large_tid),
		cmocka_unit_test(test_sort_total_descending),
		cmocka_unit_test(test_sort_mean_descending),
		cmocka_unit_test(test_sort_max_descending),
		cmocka_unit_test(test_sort_count_descending),
		cmocka_unit_test(test_sort_ties_by_object_callsite_type_tid),
		cmocka_unit_test(test_lock_rows_first_then_events),
		cmocka_unit_test(test_first_event_needs_class_order),
		cmocka_unit_test(test_sort_ties_for_each_key),
		cmocka_unit_test(test_sort_mean_is_exact),
		cmocka_unit_test(test_sort_mean_without_overflow),
		cmocka_unit_test(test_sort_mean_zero_count_is_zero),
		cmocka_unit_test(test_sort_mean_zero_count_vs_fractional_mean),
		cmocka_unit_test(test_row_cmp_directly),
		cmocka_unit_test(test_top_truncates_count_not_total),
		cmocka_unit_test(test_top_zero_keeps_all),
		cmocka_unit_test(test_top_larger_than_rows),
		cmocka_unit_test(test_top_counts_coalesced_rows),
		cmocka_unit_test(test_input_left_unchanged),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
