// SPDX-License-Identifier: GPL-2.0
/*
 * snapshot: merging per-CPU values, sealing (sort + merge duplicates) and
 * the delta between two snapshots.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "snapshot.h"

#define UNUSED __attribute__((unused))

static struct sp_key key(uint64_t object, uint64_t callsite, uint32_t type,
			 uint32_t tid)
{
	return (struct sp_key){
		.object = object,
		.callsite = callsite,
		.tid = tid,
		.type = type,
	};
}

/* One CPU's value, all in window `window`. */
static struct sp_value val(uint64_t count, uint64_t wait_ns, uint64_t max_ns,
			   uint64_t failed, uint64_t window_max_ns,
			   uint64_t window)
{
	return (struct sp_value){
		.count = count,
		.wait_ns = wait_ns,
		.max_ns = max_ns,
		.failed = failed,
		.window_max_ns = window_max_ns,
		.window = window,
	};
}

/* Adds a key with a single CPU's value. */
static void add1(struct snapshot *s, struct sp_key k, struct sp_value v,
		 uint64_t window)
{
	assert_int_equal(snapshot__add(s, &k, &v, 1, window), 0);
}

static struct snapshot *new_snapshot(void)
{
	struct snapshot *s = NULL;

	assert_int_equal(snapshot__new(&s), 0);
	assert_non_null(s);
	return s;
}

static void assert_key(const struct sp_key *k, uint64_t object,
		       uint64_t callsite, uint32_t type, uint32_t tid)
{
	assert_int_equal(k->object, object);
	assert_int_equal(k->callsite, callsite);
	assert_int_equal(k->type, type);
	assert_int_equal(k->tid, tid);
}

/*
 * Sealing an empty snapshot must not hand qsort a NULL base (undefined
 * behaviour; -fsanitize=undefined reports it).
 */
static void test_new_is_empty(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();

	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 0);
	snapshot__free(s);
	snapshot__free(NULL);
}

static void test_add_sums_cpus(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	struct sp_value cpus[3] = {
		val(2, 300, 200, 1, 200, 5),
		val(0, 0, 0, 0, 0, 0),
		val(5, 1000, 600, 4, 600, 5),
	};
	const struct snapshot_entry *e;

	assert_int_equal(snapshot__add(s, &k, cpus, 3, 5), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 1);
	e = snapshot__entries(s);
	assert_key(&e->key, 0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	assert_int_equal(e->count, 7);
	assert_int_equal(e->wait_ns, 1300);
	assert_int_equal(e->failed, 5);
	assert_int_equal(e->max_ns, 600);
	assert_int_equal(e->window_max_ns, 600);
	snapshot__free(s);
}

static void test_add_max_is_max_not_sum_or_last(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	struct sp_value cpus[4] = {
		val(1, 10, 10, 0, 10, 1),
		val(1, 900, 900, 0, 900, 1),
		val(1, 40, 40, 0, 40, 1),
		val(1, 5, 5, 0, 5, 1),
	};

	assert_int_equal(snapshot__add(s, &k, cpus, 4, 1), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__entries(s)->max_ns, 900);
	assert_int_equal(snapshot__entries(s)->window_max_ns, 900);
	snapshot__free(s);
}

static void test_add_window_max_only_from_current_window(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_CONDVAR, 0);
	/* CPU 0 last saw window 3 (stale), CPU 1 window 4, CPU 2 window 5. */
	struct sp_value cpus[3] = {
		val(1, 5000, 5000, 0, 5000, 3),
		val(1, 700, 700, 0, 700, 4),
		val(1, 300, 300, 0, 300, 5),
	};
	const struct snapshot_entry *e;

	assert_int_equal(snapshot__add(s, &k, cpus, 3, 4), 0);
	snapshot__seal(s);
	e = snapshot__entries(s);
	assert_int_equal(e->max_ns, 5000);	/* all-time: every CPU */
	assert_int_equal(e->window_max_ns, 700);	/* window 4 only */
	assert_int_equal(e->count, 3);
	assert_int_equal(e->wait_ns, 6000);
	snapshot__free(s);
}

static void test_add_window_max_zero_when_no_cpu_in_window(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 0);
	struct sp_value cpus[2] = {
		val(1, 100, 100, 0, 100, 1),
		val(1, 200, 200, 0, 200, 2),
	};

	assert_int_equal(snapshot__add(s, &k, cpus, 2, 9), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__entries(s)->window_max_ns, 0);
	assert_int_equal(snapshot__entries(s)->max_ns, 200);
	snapshot__free(s);
}

/*
 * A call that ended after the window switch but before the read started
 * the next window on its CPU: the closing window's max is in prev_*.
 */
static void test_add_window_max_from_previous_slot(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 0);
	struct sp_value cpus[2] = {
		val(50, 9000, 20000000, 0, 300, 5),
		val(10, 800, 700, 0, 700, 4),
	};

	cpus[0].prev_window = 4;
	cpus[0].prev_window_max_ns = 20000000;
	assert_int_equal(snapshot__add(s, &k, cpus, 2, 4), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__entries(s)->window_max_ns, 20000000);
	snapshot__free(s);
}

static void test_seal_sorts_by_object_callsite_type_tid(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	const struct snapshot_entry *e;

	/* Added in reverse of the expected order. */
	add1(s, key(0x2000, 0x10, 0, 0), val(1, 1, 1, 0, 0, 0), 0);
	add1(s, key(0x1000, 0x20, 0, 0), val(2, 1, 1, 0, 0, 0), 0);
	add1(s, key(0x1000, 0x10, 2, 0), val(3, 1, 1, 0, 0, 0), 0);
	add1(s, key(0x1000, 0x10, 1, 9), val(4, 1, 1, 0, 0, 0), 0);
	add1(s, key(0x1000, 0x10, 1, 3), val(5, 1, 1, 0, 0, 0), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 5);
	e = snapshot__entries(s);
	assert_key(&e[0].key, 0x1000, 0x10, 1, 3);
	assert_int_equal(e[0].count, 5);
	assert_key(&e[1].key, 0x1000, 0x10, 1, 9);
	assert_key(&e[2].key, 0x1000, 0x10, 2, 0);
	assert_key(&e[3].key, 0x1000, 0x20, 0, 0);
	assert_key(&e[4].key, 0x2000, 0x10, 0, 0);
	assert_int_equal(e[4].count, 1);
	snapshot__free(s);
}

static void test_seal_merges_duplicate_keys(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	const struct snapshot_entry *e;

	add1(s, key(0x1000, 0x10, 0, 1), val(1, 100, 100, 1, 100, 2), 2);
	add1(s, key(0x3000, 0x10, 0, 1), val(9, 9, 9, 0, 9, 2), 2);
	add1(s, key(0x1000, 0x10, 0, 1), val(2, 500, 400, 0, 400, 2), 2);
	add1(s, key(0x1000, 0x10, 0, 1), val(3, 60, 60, 2, 60, 2), 2);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 2);
	e = snapshot__entries(s);
	assert_key(&e[0].key, 0x1000, 0x10, 0, 1);
	assert_int_equal(e[0].count, 6);
	assert_int_equal(e[0].wait_ns, 660);
	assert_int_equal(e[0].failed, 3);
	assert_int_equal(e[0].max_ns, 400);
	assert_int_equal(e[0].window_max_ns, 400);
	assert_key(&e[1].key, 0x3000, 0x10, 0, 1);
	assert_int_equal(e[1].count, 9);
	snapshot__free(s);
}

static void test_key_cmp_order(void **state UNUSED)
{
	struct sp_key a = key(1, 9, 9, 9), b = key(2, 0, 0, 0);

	assert_true(snapshot__key_cmp(&a, &b) < 0);
	assert_true(snapshot__key_cmp(&b, &a) > 0);
	assert_int_equal(snapshot__key_cmp(&a, &a), 0);
	a = key(1, 1, 9, 9);
	b = key(1, 2, 0, 0);
	assert_true(snapshot__key_cmp(&a, &b) < 0);
	a = key(1, 1, 1, 9);
	b = key(1, 1, 2, 0);
	assert_true(snapshot__key_cmp(&a, &b) < 0);
	a = key(1, 1, 1, 1);
	b = key(1, 1, 1, 2);
	assert_true(snapshot__key_cmp(&a, &b) < 0);
	/* Full 64-bit range, no truncation or signed overflow. */
	a = key(0, 0, 0, 0);
	b = key(UINT64_MAX, 0, 0, 0);
	assert_true(snapshot__key_cmp(&a, &b) < 0);
	a = key(0x100000000ull, 0, 0, 0);
	b = key(0x1, 0, 0, 0);
	assert_true(snapshot__key_cmp(&a, &b) > 0);
}

static void test_delta_without_prev_is_everything(void **state UNUSED)
{
	struct snapshot *cur = new_snapshot(), *d = NULL;
	const struct snapshot_entry *e;

	add1(cur, key(0x1000, 0x10, 0, 0), val(4, 4000, 2500, 1, 900, 3), 3);
	add1(cur, key(0x2000, 0x10, 0, 0), val(1, 50, 50, 0, 50, 3), 3);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, NULL, &d), 0);
	assert_int_equal(snapshot__count(d), 2);
	e = snapshot__entries(d);
	assert_key(&e[0].key, 0x1000, 0x10, 0, 0);
	assert_int_equal(e[0].count, 4);
	assert_int_equal(e[0].wait_ns, 4000);
	assert_int_equal(e[0].failed, 1);
	/* Nothing before: the all-time maximum happened in this window. */
	assert_int_equal(e[0].max_ns, 2500);
	assert_int_equal(e[1].count, 1);
	assert_int_equal(e[1].max_ns, 50);
	snapshot__free(d);
	snapshot__free(cur);
}

static void test_delta_without_prev_skips_all_zero_entries(void **state UNUSED)
{
	struct snapshot *cur = new_snapshot(), *d = NULL;

	add1(cur, key(0x1000, 0x10, 0, 0), val(0, 0, 0, 0, 0, 1), 1);
	add1(cur, key(0x2000, 0x10, 0, 0), val(1, 10, 10, 0, 10, 1), 1);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, NULL, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	assert_int_equal(snapshot__entries(d)[0].key.object, 0x2000);
	snapshot__free(d);
	snapshot__free(cur);
}

static void test_delta_changed_unchanged_new(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	const struct snapshot_entry *e;

	/* A: grows. B: unchanged. C: new in cur. D: only in prev. */
	add1(prev, key(0xa, 0x10, 0, 0), val(10, 1000, 300, 1, 300, 1), 1);
	add1(prev, key(0xb, 0x10, 0, 0), val(5, 500, 200, 0, 200, 1), 1);
	add1(prev, key(0xd, 0x10, 0, 0), val(1, 1, 1, 0, 1, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 0), val(13, 1600, 300, 3, 250, 2), 2);
	add1(cur, key(0xb, 0x10, 0, 0), val(5, 500, 200, 0, 0, 1), 2);
	add1(cur, key(0xc, 0x10, 0, 0), val(2, 80, 70, 0, 70, 2), 2);
	snapshot__seal(cur);

	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 2);
	e = snapshot__entries(d);
	assert_key(&e[0].key, 0xa, 0x10, 0, 0);
	assert_int_equal(e[0].count, 3);
	assert_int_equal(e[0].wait_ns, 600);
	assert_int_equal(e[0].failed, 2);
	assert_int_equal(e[0].max_ns, 250);
	assert_key(&e[1].key, 0xc, 0x10, 0, 0);
	assert_int_equal(e[1].count, 2);
	assert_int_equal(e[1].wait_ns, 80);
	assert_int_equal(e[1].failed, 0);
	assert_int_equal(e[1].max_ns, 70);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_only_failures_grew(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	const struct snapshot_entry *e;

	add1(prev, key(0xa, 0x10, 0, 0), val(10, 1000, 300, 1, 300, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 0), val(10, 1000, 300, 4, 0, 1), 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = snapshot__entries(d);
	assert_int_equal(e->count, 0);
	assert_int_equal(e->wait_ns, 0);
	assert_int_equal(e->failed, 3);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

/*
 * A condvar's futile wakeup is charged to its row when the thread waits
 * again, with no wait of its own: a window where only that grew has it.
 */
static void test_delta_only_futile_grew(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	struct sp_value v = val(10, 1000, 300, 0, 300, 1);
	const struct snapshot_entry *e;

	v.futile = 2;
	add1(prev, key(0xa, 0x10, 0, 0), v, 1);
	add1(prev, key(0xa, 0x10, 0, 0), v, 1);	/* merged by the seal */
	snapshot__seal(prev);
	assert_int_equal(snapshot__entries(prev)->futile, 4);
	v.futile = 9;
	v.count = 20;
	v.wait_ns = 2000;
	add1(cur, key(0xa, 0x10, 0, 0), v, 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = snapshot__entries(d);
	assert_int_equal(e->count, 0);
	assert_int_equal(e->futile, 5);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_max_is_window_max(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;

	/* All-time max 900 is old; this window's longest call took 120. */
	add1(prev, key(0xa, 0x10, 0, 0), val(10, 2000, 900, 0, 900, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 0), val(12, 2200, 900, 0, 120, 2), 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	assert_int_equal(snapshot__entries(d)->max_ns, 120);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_max_is_alltime_max_when_it_grew(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;

	/*
	 * The all-time max rose from 900 to 5000 since prev, but the window
	 * max read 0 (the call ended after the window switched): the 5000 ns
	 * call belongs to this report.
	 */
	add1(prev, key(0xa, 0x10, 0, 0), val(10, 2000, 900, 0, 900, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 0), val(11, 7000, 5000, 0, 0, 3), 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	assert_int_equal(snapshot__entries(d)->max_ns, 5000);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_counter_reset_uses_current_value(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	const struct snapshot_entry *e;

	/* Counters went down (map recreated): take cur as the growth. */
	add1(prev, key(0xa, 0x10, 0, 0), val(100, 10000, 500, 7, 500, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 0), val(3, 30, 20, 1, 20, 2), 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = snapshot__entries(d);
	assert_int_equal(e->count, 3);
	assert_int_equal(e->wait_ns, 30);
	assert_int_equal(e->failed, 1);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_matches_full_key(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	const struct snapshot_entry *e;

	/*
	 * Same object and call site, other type or thread: distinct keys,
	 * so each of cur's entries is new, not a difference.
	 */
	add1(prev, key(0xa, 0x10, 0, 1), val(10, 1000, 100, 0, 100, 1), 1);
	snapshot__seal(prev);
	add1(cur, key(0xa, 0x10, 0, 1), val(10, 1000, 100, 0, 0, 1), 2);
	add1(cur, key(0xa, 0x10, 0, 2), val(4, 40, 10, 0, 10, 2), 2);
	add1(cur, key(0xa, 0x10, 1, 1), val(6, 60, 10, 0, 10, 2), 2);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 2);
	e = snapshot__entries(d);
	assert_key(&e[0].key, 0xa, 0x10, 0, 2);
	assert_int_equal(e[0].count, 4);
	assert_key(&e[1].key, 0xa, 0x10, 1, 1);
	assert_int_equal(e[1].count, 6);
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_finds_keys_in_large_prev(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;

	/* 1000 keys, added in scrambled order; only every 100th grows. */
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t obj = (i * 389) % 1000;

		add1(prev, key(obj, 0x10, 0, 0), val(obj + 1, 10, 1, 0, 1, 1), 1);
		add1(cur, key(obj, 0x10, 0, 0),
		     val(obj + 1 + (obj % 100 == 0), 10, 1, 0, 1, 2), 2);
	}
	snapshot__seal(prev);
	snapshot__seal(cur);
	assert_int_equal(snapshot__count(prev), 1000);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 10);
	for (size_t i = 0; i < 10; i++) {
		assert_int_equal(snapshot__entries(d)[i].key.object, i * 100);
		assert_int_equal(snapshot__entries(d)[i].count, 1);
		assert_int_equal(snapshot__entries(d)[i].wait_ns, 0);
	}
	snapshot__free(d);
	snapshot__free(cur);
	snapshot__free(prev);
}

static void test_delta_of_identical_snapshots_is_empty(void **state UNUSED)
{
	struct snapshot *s = new_snapshot(), *d = NULL;

	add1(s, key(0xa, 0x10, 0, 0), val(10, 1000, 100, 2, 100, 1), 1);
	add1(s, key(0xb, 0x10, 0, 0), val(1, 1, 1, 0, 1, 1), 1);
	snapshot__seal(s);
	assert_int_equal(snapshot__delta(s, s, &d), 0);
	assert_int_equal(snapshot__count(d), 0);
	snapshot__free(d);
	snapshot__free(s);
}

/*
 * Merging sums what both hold and keeps the larger maxima: summed deltas
 * of consecutive windows are the totals over them.
 */
static void test_merge_sums_and_keeps_max(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *b = new_snapshot(), *m = NULL;
	const struct snapshot_entry *e;

	add1(a, key(0x10, 0x100, 0, 1), val(2, 200, 150, 1, 150, 1), 1);
	add1(a, key(0x30, 0x100, 0, 1), val(1, 10, 10, 0, 10, 1), 1);
	snapshot__seal(a);
	add1(b, key(0x10, 0x100, 0, 1), val(3, 300, 120, 2, 120, 1), 1);
	add1(b, key(0x20, 0x100, 0, 1), val(5, 50, 40, 0, 40, 1), 1);
	snapshot__seal(b);
	assert_int_equal(snapshot__merge(a, b, &m), 0);
	assert_int_equal(snapshot__count(m), 3);
	e = snapshot__entries(m);
	assert_key(&e[0].key, 0x10, 0x100, 0, 1);
	assert_int_equal(e[0].count, 5);
	assert_int_equal(e[0].wait_ns, 500);
	assert_int_equal(e[0].failed, 3);
	assert_int_equal(e[0].max_ns, 150);
	assert_key(&e[1].key, 0x20, 0x100, 0, 1);
	assert_int_equal(e[1].count, 5);
	assert_key(&e[2].key, 0x30, 0x100, 0, 1);
	assert_int_equal(e[2].wait_ns, 10);
	snapshot__free(m);
	snapshot__free(a);
	snapshot__free(b);
}

/* NULL is empty: merging with it copies; two NULLs give an empty snapshot. */
static void test_merge_with_null(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *m = NULL;

	add1(a, key(0x10, 0x100, 0, 1), val(2, 200, 150, 0, 150, 1), 1);
	snapshot__seal(a);
	assert_int_equal(snapshot__merge(NULL, a, &m), 0);
	assert_int_equal(snapshot__count(m), 1);
	assert_int_equal(snapshot__entries(m)[0].count, 2);
	snapshot__free(m);
	assert_int_equal(snapshot__merge(a, NULL, &m), 0);
	assert_int_equal(snapshot__count(m), 1);
	snapshot__free(m);
	assert_int_equal(snapshot__merge(NULL, NULL, &m), 0);
	assert_int_equal(snapshot__count(m), 0);
	snapshot__free(m);
	snapshot__free(a);
}

/* A pseudo-random key among few, so that keys repeat. */
static struct sp_key mixed_key(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return key(0x10 * (1 + (*seed >> 8) % 23), 0x100 * (1 + (*seed >> 16) % 5),
		   0, 1 + (*seed >> 24) % 3);
}

/* Each key's count in s, by a scan: the reference for the fast paths. */
static uint64_t count_of(const struct snapshot *s, const struct sp_key *k)
{
	const struct snapshot_entry *e = snapshot__entries(s);
	uint64_t n = 0;

	for (size_t i = 0; i < snapshot__count(s); i++)
		if (!snapshot__key_cmp(&e[i].key, k))
			n += e[i].count;
	return n;
}

static void assert_sorted_unique(const struct snapshot *s)
{
	const struct snapshot_entry *e = snapshot__entries(s);

	for (size_t i = 1; i < snapshot__count(s); i++)
		assert_true(snapshot__key_cmp(&e[i - 1].key, &e[i].key) < 0);
}

/*
 * Rows added to a sealed snapshot (a side map's rows with no row of
 * their own) are sorted alone and merged in: the result is what a sort
 * of the whole gives, each key once with the sum of its rows.
 */
static void test_seal_after_appends_is_a_whole_sort(void **state UNUSED)
{
	struct snapshot *s = new_snapshot(), *ref = new_snapshot();
	struct sp_hist h = { .slot = { 1 } };
	unsigned int seed = 7;

	for (int i = 0; i < 200; i++) {
		struct sp_key k = mixed_key(&seed);

		add1(s, k, val(1 + i % 4, 10, 10, 0, 10, 1), 1);
		add1(ref, k, val(1 + i % 4, 10, 10, 0, 10, 1), 1);
	}
	snapshot__seal(s);
	assert_sorted_unique(s);
	/* New keys and known ones, after the seal. */
	for (int i = 0; i < 40; i++) {
		struct sp_key k = key(0x7, 0x100 * (1 + i % 9), 0, 1 + i % 2);

		assert_int_equal(snapshot__add_hist(s, &k, &h), 0);
		add1(s, key(0x20, 0x100, 0, 1), val(1, 1, 1, 0, 1, 1), 1);
		add1(ref, key(0x20, 0x100, 0, 1), val(1, 1, 1, 0, 1, 1), 1);
	}
	snapshot__seal(s);
	snapshot__seal(ref);
	assert_sorted_unique(s);
	/* ref plus the 18 histogram-only rows. */
	assert_int_equal(snapshot__count(s), snapshot__count(ref) + 18);
	for (size_t i = 0; i < snapshot__count(ref); i++) {
		const struct sp_key *k = &snapshot__entries(ref)[i].key;

		assert_int_equal(count_of(s, k), snapshot__entries(ref)[i].count);
	}
	snapshot__free(s);
	snapshot__free(ref);
}

/*
 * Two sealed snapshots merge in one pass: every key once, in order,
 * each the sum of both; the same as sealing the two appended.
 */
static void test_merge_of_sealed_is_sorted_and_sums(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *b = new_snapshot(), *m = NULL;
	unsigned int seed = 3;
	uint64_t total = 0;

	for (int i = 0; i < 300; i++) {
		struct snapshot *to = i % 3 ? a : b;

		add1(to, mixed_key(&seed), val(1 + i % 5, 1, 1, 0, 1, 1), 1);
		total += 1 + i % 5;
	}
	snapshot__seal(a);
	snapshot__seal(b);
	assert_int_equal(snapshot__merge(a, b, &m), 0);
	assert_sorted_unique(m);
	for (size_t i = 0; i < snapshot__count(m); i++) {
		const struct sp_key *k = &snapshot__entries(m)[i].key;

		assert_int_equal(snapshot__entries(m)[i].count,
				 count_of(a, k) + count_of(b, k));
		total -= snapshot__entries(m)[i].count;
	}
	assert_int_equal(total, 0);
	snapshot__free(m);
	snapshot__free(a);
	snapshot__free(b);
}

/*
 * A read that moved rows (exited threads folded to tid 0, one of them
 * onto a key the previous read had too): the delta counts each row's
 * growth once, the moved ones under their new key.
 */
static void test_delta_with_moves_onto_known_keys(void **state UNUSED)
{
	struct snapshot *prev = new_snapshot(), *cur = new_snapshot(), *d = NULL;
	struct sp_key t1 = key(0x10, 0x100, 0, 5), t2 = key(0x10, 0x100, 0, 6);
	struct sp_key folded = key(0x10, 0x100, 0, 0);

	for (int i = 0; i < 50; i++)
		add1(prev, key(0x40 + i, 0x100, 0, 1), val(1, 1, 1, 0, 1, 1), 1);
	add1(prev, t1, val(3, 30, 10, 0, 10, 1), 1);
	add1(prev, t2, val(4, 40, 10, 0, 10, 1), 1);
	add1(prev, folded, val(2, 20, 10, 0, 10, 1), 1);
	snapshot__seal(prev);
	for (int i = 0; i < 50; i++)
		add1(cur, key(0x40 + i, 0x100, 0, 1),
		     val(1 + (i == 9), 1, 1, 0, 1, 2), 2);
	/* t1 and t2 exited: 3 + 4 + 2 before, 1 more by t1 at its end. */
	add1(cur, folded, val(10, 100, 10, 0, 10, 2), 2);
	assert_int_equal(snapshot__add_move(cur, &t1, &folded), 0);
	assert_int_equal(snapshot__add_move(cur, &t2, &folded), 0);
	snapshot__seal(cur);
	assert_int_equal(snapshot__delta(cur, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 2);
	assert_int_equal(count_of(d, &folded), 1);
	assert_int_equal(count_of(d, &(struct sp_key){ 0 }) , 0);
	{
		struct sp_key k9 = key(0x40 + 9, 0x100, 0, 1);

		assert_int_equal(count_of(d, &k9), 1);
	}
	snapshot__free(d);
	snapshot__free(prev);
	snapshot__free(cur);
}

/* A row's histogram joins its entry; deltas and merges carry it. */
static void test_hist_joins_entry_and_deltas(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *b = new_snapshot();
	struct snapshot *d = NULL, *m = NULL;
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	struct sp_hist h = { { 0 } };
	const struct snapshot_entry *e;

	h.slot[22] = 3;
	add1(a, k, val(3, 9000000, 3100000, 0, 3100000, 1), 1);
	assert_int_equal(snapshot__add_hist(a, &k, &h), 0);
	snapshot__seal(a);
	assert_int_equal(snapshot__count(a), 1);
	e = snapshot__entries(a);
	assert_int_equal(e->count, 3);
	assert_int_equal(e->hist[22], 3);

	h.slot[22] = 5;
	h.slot[30] = 1;
	add1(b, k, val(6, 19000000, 3100000, 0, 900000000, 2), 2);
	assert_int_equal(snapshot__add_hist(b, &k, &h), 0);
	snapshot__seal(b);
	assert_int_equal(snapshot__delta(b, a, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = snapshot__entries(d);
	assert_int_equal(e->count, 3);
	assert_int_equal(e->hist[22], 2);
	assert_int_equal(e->hist[30], 1);

	assert_int_equal(snapshot__merge(a, d, &m), 0);
	e = snapshot__entries(m);
	assert_int_equal(e->hist[22], 5);
	assert_int_equal(e->hist[30], 1);
	snapshot__free(a);
	snapshot__free(b);
	snapshot__free(d);
	snapshot__free(m);
}

/* --hold: a row's holds join its entry; deltas take the window's max. */
static void test_hold_joins_entry_and_deltas(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *b = new_snapshot(), *d = NULL;
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	struct sp_value hold;
	const struct snapshot_entry *e;

	add1(a, k, val(2, 100, 60, 0, 60, 1), 1);
	hold = val(2, 6000000, 3500000, 0, 3500000, 1);
	assert_int_equal(snapshot__add_hold(a, &k, &hold, 1, 1), 0);
	snapshot__seal(a);
	e = snapshot__entries(a);
	assert_int_equal(snapshot__count(a), 1);
	assert_int_equal(e->hold_count, 2);
	assert_int_equal(e->hold_ns, 6000000);
	assert_int_equal(e->hold_max_ns, 3500000);

	/* Window 2: no new wait, one more hold of 1 ms. */
	add1(b, k, val(2, 100, 60, 0, 60, 1), 2);
	hold = val(3, 7000000, 3500000, 0, 1000000, 2);
	hold.prev_window = 1;
	hold.prev_window_max_ns = 3500000;
	assert_int_equal(snapshot__add_hold(b, &k, &hold, 1, 2), 0);
	snapshot__seal(b);
	assert_int_equal(snapshot__delta(b, a, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = snapshot__entries(d);
	assert_int_equal(e->count, 0);
	assert_int_equal(e->hold_count, 1);
	assert_int_equal(e->hold_ns, 1000000);
	assert_int_equal(e->hold_max_ns, 1000000);
	snapshot__free(a);
	snapshot__free(b);
	snapshot__free(d);
}

/* --duty: the sums scale (rounded), the maxima stay. */
static void test_scale_sums_not_maxima(void **state UNUSED)
{
	struct snapshot *s = new_snapshot();
	struct sp_key k = key(0x1000, 0x400000, SP_TYPE_MUTEX, 7);
	struct sp_value hold = val(3, 9000, 5000, 0, 5000, 1);
	const struct snapshot_entry *e;

	add1(s, k, val(3, 1000, 700, 1, 700, 1), 1);
	assert_int_equal(snapshot__add_hold(s, &k, &hold, 1, 1), 0);
	snapshot__seal(s);
	/* Seen 0.4 of the time: times 5 / 2. */
	snapshot__scale(s, 5, 2);
	e = snapshot__entries(s);
	assert_int_equal(e->count, 8);		/* 7.5, rounded */
	assert_int_equal(e->wait_ns, 2500);
	assert_int_equal(e->failed, 3);		/* 2.5, rounded up */
	assert_int_equal(e->max_ns, 700);
	assert_int_equal(e->window_max_ns, 700);
	assert_int_equal(e->hold_count, 8);
	assert_int_equal(e->hold_ns, 22500);
	assert_int_equal(e->hold_max_ns, 5000);
	/* No time on (den 0) or a factor of one: unchanged. */
	snapshot__scale(s, 3, 0);
	snapshot__scale(s, 4, 4);
	assert_int_equal(e->count, 8);
	snapshot__free(s);
}

/*
 * The delta's one pass down cur and prev, moves included, against a
 * scan: each of prev's rows counted under the key cur moved it to (or
 * its own), summed, and subtracted from cur's row of that key.
 */
static void test_delta_walk_matches_a_scan(void **state UNUSED)
{
	unsigned int seed = 11;

	for (int round = 0; round < 30; round++) {
		struct snapshot *prev = new_snapshot(), *cur = new_snapshot();
		struct snapshot *d = NULL;
		struct sp_key from[8], to[8];
		int n_moves = round % 8;

		for (int i = 0; i < 150; i++)
			add1(prev, mixed_key(&seed), val(1 + i % 5, 10, 10, 0, 10, 1), 1);
		snapshot__seal(prev);
		/* cur: every row of prev grown by 0-2, and new ones. */
		for (size_t i = 0; i < snapshot__count(prev); i++) {
			const struct snapshot_entry *e = &snapshot__entries(prev)[i];

			add1(cur, e->key, val(e->count + i % 3, 10, 10, 0, 10, 2), 2);
		}
		for (int i = 0; i < 40; i++)
			add1(cur, mixed_key(&seed), val(7, 10, 10, 0, 10, 2), 2);
		/* Moves: rows of prev to tid 0 (folded), whose cur row is
		   then their sum and more. */
		for (int m = 0; m < n_moves; m++) {
			from[m] = snapshot__entries(prev)[(size_t)(m * 17 + round) %
						       snapshot__count(prev)].key;
			to[m] = from[m];
			to[m].tid = 0;
			assert_int_equal(snapshot__add_move(cur, &from[m], &to[m]), 0);
			add1(cur, to[m], val(100, 10, 10, 0, 10, 2), 2);
		}
		snapshot__seal(cur);
		assert_int_equal(snapshot__delta(cur, prev, &d), 0);
		assert_sorted_unique(d);
		for (size_t i = 0; i < snapshot__count(cur); i++) {
			const struct snapshot_entry *c = &snapshot__entries(cur)[i];
			uint64_t before = 0;

			/* prev's rows that end up under c's key. */
			for (size_t j = 0; j < snapshot__count(prev); j++) {
				const struct snapshot_entry *p = &snapshot__entries(prev)[j];
				const struct sp_key *at = &p->key;

				for (int m = 0; m < n_moves; m++)
					if (!snapshot__key_cmp(&from[m], at)) {
						at = &to[m];
						break;
					}
				if (!snapshot__key_cmp(at, &c->key))
					before += p->count;
			}
			assert_int_equal(count_of(d, &c->key),
					 c->count >= before ? c->count - before
							    : c->count);
		}
		snapshot__free(d);
		snapshot__free(prev);
		snapshot__free(cur);
	}
}

/* A join of sorted rows is the merge a seal of both gives. */
static void test_join_is_a_sorted_sum(void **state UNUSED)
{
	struct snapshot *a = new_snapshot(), *b = new_snapshot();
	struct snapshot *ref = new_snapshot();
	unsigned int seed = 3;

	for (int i = 0; i < 120; i++) {
		struct sp_key k = mixed_key(&seed);

		add1(i % 2 ? a : b, k, val(1 + i % 3, 10, 10, 0, 10, 1), 1);
		add1(ref, k, val(1 + i % 3, 10, 10, 0, 10, 1), 1);
	}
	snapshot__seal(b);
	snapshot__seal(ref);
	assert_int_equal(snapshot__join(a, snapshot__entries(b),
					snapshot__count(b)), 0);
	assert_sorted_unique(a);
	assert_int_equal(snapshot__count(a), snapshot__count(ref));
	for (size_t i = 0; i < snapshot__count(ref); i++) {
		const struct snapshot_entry *e = &snapshot__entries(ref)[i];

		assert_int_equal(count_of(a, &e->key), e->count);
	}
	snapshot__free(a);
	snapshot__free(b);
	snapshot__free(ref);
}

/* A report's pending rows follow the moves: each once, under its new key. */
static void test_follow_moves_pending_rows(void **state UNUSED)
{
	struct snapshot *pending = new_snapshot(), *cur = new_snapshot();
	struct sp_key t1 = key(0x10, 0x100, 0, 5), t2 = key(0x10, 0x100, 0, 6);
	struct sp_key folded = key(0x10, 0x100, 0, 0);

	add1(pending, t1, val(3, 30, 10, 0, 10, 1), 1);
	add1(pending, t2, val(4, 40, 10, 0, 10, 1), 1);
	add1(pending, folded, val(2, 20, 10, 0, 10, 1), 1);
	snapshot__seal(pending);
	assert_int_equal(snapshot__add_move(cur, &t1, &folded), 0);
	snapshot__seal(cur);
	assert_int_equal(snapshot__follow(&pending, cur), 0);
	assert_sorted_unique(pending);
	assert_int_equal(snapshot__count(pending), 2);
	assert_int_equal(count_of(pending, &folded), 5);
	assert_int_equal(count_of(pending, &t2), 4);
	assert_int_equal(count_of(pending, &t1), 0);
	snapshot__free(pending);
	snapshot__free(cur);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_is_empty),
		cmocka_unit_test(test_delta_walk_matches_a_scan),
		cmocka_unit_test(test_join_is_a_sorted_sum),
		cmocka_unit_test(test_follow_moves_pending_rows),
		cmocka_unit_test(test_add_sums_cpus),
		cmocka_unit_test(test_add_max_is_max_not_sum_or_last),
		cmocka_unit_test(test_add_window_max_only_from_current_window),
		cmocka_unit_test(test_add_window_max_zero_when_no_cpu_in_window),
		cmocka_unit_test(test_add_window_max_from_previous_slot),
		cmocka_unit_test(test_seal_sorts_by_object_callsite_type_tid),
		cmocka_unit_test(test_seal_merges_duplicate_keys),
		cmocka_unit_test(test_key_cmp_order),
		cmocka_unit_test(test_delta_without_prev_is_everything),
		cmocka_unit_test(test_delta_without_prev_skips_all_zero_entries),
		cmocka_unit_test(test_delta_changed_unchanged_new),
		cmocka_unit_test(test_delta_only_failures_grew),
		cmocka_unit_test(test_delta_only_futile_grew),
		cmocka_unit_test(test_delta_max_is_window_max),
		cmocka_unit_test(test_delta_max_is_alltime_max_when_it_grew),
		cmocka_unit_test(test_delta_counter_reset_uses_current_value),
		cmocka_unit_test(test_delta_matches_full_key),
		cmocka_unit_test(test_delta_finds_keys_in_large_prev),
		cmocka_unit_test(test_delta_of_identical_snapshots_is_empty),
		cmocka_unit_test(test_merge_sums_and_keeps_max),
		cmocka_unit_test(test_merge_with_null),
		cmocka_unit_test(test_seal_after_appends_is_a_whole_sort),
		cmocka_unit_test(test_merge_of_sealed_is_sorted_and_sums),
		cmocka_unit_test(test_delta_with_moves_onto_known_keys),
		cmocka_unit_test(test_hist_joins_entry_and_deltas),
		cmocka_unit_test(test_hold_joins_entry_and_deltas),
		cmocka_unit_test(test_scale_sums_not_maxima),
	};

	return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
