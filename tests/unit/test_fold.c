// SPDX-License-Identifier: GPL-2.0
/*
 * fold: the rows of exited threads, kept out of the kernel's map, and the
 * deltas across a fold (each row counted once, maxima kept).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fold.h"
#include "snapshot.h"

#define UNUSED __attribute__((unused))

static struct sp_key key(uint64_t object, uint32_t tid, uint32_t owner)
{
	return (struct sp_key){
		.object = object,
		.callsite = 0x1000,
		.tid = tid,
		.owner_tid = owner,
	};
}

static struct sp_value val(uint64_t count, uint64_t wait_ns, uint64_t max_ns,
			   uint64_t window, uint64_t window_max_ns)
{
	return (struct sp_value){
		.count = count,
		.wait_ns = wait_ns,
		.max_ns = max_ns,
		.window = window,
		.window_max_ns = window_max_ns,
	};
}

static struct snapshot *snap_new(void)
{
	struct snapshot *s = NULL;

	assert_int_equal(snapshot__new(&s), 0);
	return s;
}

static void add(struct snapshot *s, struct sp_key k, struct sp_value v,
		uint64_t closing)
{
	assert_int_equal(snapshot__add(s, &k, &v, 1, closing), 0);
}

static const struct snapshot_entry *find(const struct snapshot *s,
					 uint32_t tid, uint64_t object)
{
	for (size_t i = 0; i < snapshot__count(s); i++) {
		const struct snapshot_entry *e = &snapshot__entries(s)[i];

		if (e->key.tid == tid && e->key.object == object)
			return e;
	}
	return NULL;
}

static void test_key_drops_thread_and_holder_unless_kept(void **state UNUSED)
{
	struct fold *merged, *kept;
	struct sp_key k = key(0x10, 42, 43);
	struct sp_key m, t;

	assert_int_equal(fold__new(false, &merged), 0);
	assert_int_equal(fold__new(true, &kept), 0);
	m = fold__key(merged, &k);
	t = fold__key(kept, &k);
	assert_int_equal(m.tid, 0);
	assert_int_equal(m.owner_tid, 0);
	assert_int_equal(m.object, 0x10);
	assert_memory_equal(&t, &k, sizeof(k));
	fold__free(merged);
	fold__free(kept);
}

static void test_rows_of_exited_threads_merge(void **state UNUSED)
{
	struct snapshot *s = snap_new();
	struct fold *f;
	struct sp_key a = key(0x10, 1, 7), b = key(0x10, 2, 0);
	struct sp_value va = val(3, 300, 200, 5, 200);
	struct sp_value vb = val(4, 400, 150, 5, 150);

	assert_int_equal(fold__new(false, &f), 0);
	assert_int_equal(fold__add(f, &a, &va, 6, s), 0);
	assert_int_equal(fold__add(f, &b, &vb, 6, s), 0);
	fold__thread_exited(f);
	fold__thread_exited(f);
	assert_int_equal(fold__rows(f), 1);
	assert_int_equal(fold__threads(f), 2);
	assert_int_equal(fold__into(f, s, 5), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 1);
	const struct snapshot_entry *e = find(s, 0, 0x10);
	assert_non_null(e);
	assert_int_equal(e->count, 7);
	assert_int_equal(e->wait_ns, 700);
	assert_int_equal(e->max_ns, 200);
	assert_int_equal(e->window_max_ns, 200);	/* both were in window 5 */
	snapshot__free(s);
	fold__free(f);
}

static void test_holds_and_histograms_fold_with_their_rows(void **state UNUSED)
{
	struct snapshot *s = snap_new();
	struct fold *f;
	struct sp_key a = key(0x10, 1, 0), b = key(0x10, 2, 0);
	struct sp_value va = val(3, 300, 200, 5, 200);
	struct sp_value ha = val(3, 9000, 4000, 5, 4000);
	struct sp_value hb = val(1, 1000, 1000, 5, 1000);
	struct sp_hist hista = { 0 }, histb = { 0 };

	va.failed = 1;
	va.failed_ns = 50;
	hista.slot[3] = 2;
	hista.slot[7] = 1;
	histb.slot[7] = 4;
	assert_int_equal(fold__new(false, &f), 0);
	assert_int_equal(fold__add(f, &a, &va, 6, s), 0);
	assert_int_equal(fold__add_hist(f, &a, &hista), 0);
	assert_int_equal(fold__add_hist(f, &b, &histb), 0);
	assert_int_equal(fold__add_hold(f, &a, &ha, 6), 0);
	assert_int_equal(fold__add_hold(f, &b, &hb, 6), 0);
	assert_int_equal(fold__rows(f), 1);
	assert_int_equal(fold__into(f, s, 5), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 1);
	const struct snapshot_entry *e = find(s, 0, 0x10);
	assert_non_null(e);
	assert_int_equal(e->count, 3);
	assert_int_equal(e->failed_ns, 50);
	assert_int_equal(e->hist[3], 2);
	assert_int_equal(e->hist[7], 5);
	assert_int_equal(e->hold_count, 4);
	assert_int_equal(e->hold_ns, 10000);
	assert_int_equal(e->hold_max_ns, 4000);
	snapshot__free(s);
	fold__free(f);
}

static void test_kept_threads_count_no_thread_as_merged(void **state UNUSED)
{
	struct snapshot *s = snap_new();
	struct fold *f;
	struct sp_key a = key(0x10, 1, 7);
	struct sp_value va = val(3, 300, 200, 5, 200);
	struct snapshot *prev = snap_new(), *d;

	add(prev, a, va, 4);
	snapshot__seal(prev);
	assert_int_equal(fold__new(true, &f), 0);
	assert_int_equal(fold__add(f, &a, &va, 6, s), 0);
	fold__thread_exited(f);
	assert_int_equal(fold__threads(f), 0);
	assert_int_equal(fold__into(f, s, 5), 0);
	snapshot__seal(s);
	assert_non_null(find(s, 1, 0x10));
	/* Same key, same values: nothing new. */
	assert_int_equal(snapshot__delta(s, prev, &d), 0);
	assert_int_equal(snapshot__count(d), 0);
	snapshot__free(d);
	snapshot__free(prev);
	snapshot__free(s);
	fold__free(f);
}

/*
 * Read 1: threads 1 and 2 each have a row.  Thread 1 exits and locks
 * twice more before; read 2 folds it: the delta holds its 2 calls, not
 * its 5.  Read 3 folds thread 2 into the same row: again only the new.
 */
static void test_delta_counts_a_folded_row_once(void **state UNUSED)
{
	struct sp_key t1 = key(0x10, 1, 0), t2 = key(0x10, 2, 0);
	struct snapshot *r1 = snap_new(), *r2 = snap_new(), *r3 = snap_new();
	struct snapshot *d;
	struct fold *f;
	const struct snapshot_entry *e;
	struct sp_value v1 = val(7, 700, 90, 2, 90);

	assert_int_equal(fold__new(false, &f), 0);
	add(r1, t1, val(5, 500, 50, 1, 50), 1);
	add(r1, t2, val(3, 300, 30, 1, 30), 1);
	snapshot__seal(r1);

	/* Read 2 closes window 2, opens 3. */
	assert_int_equal(fold__add(f, &t1, &v1, 3, r2), 0);
	add(r2, t2, val(4, 400, 30, 2, 10), 2);
	assert_int_equal(fold__into(f, r2, 2), 0);
	snapshot__seal(r2);
	assert_int_equal(snapshot__delta(r2, r1, &d), 0);
	e = find(d, 0, 0x10);
	assert_non_null(e);
	assert_int_equal(e->count, 2);
	assert_int_equal(e->wait_ns, 200);
	assert_int_equal(e->max_ns, 90);	/* thread 1's call in window 2 */
	e = find(d, 2, 0x10);
	assert_non_null(e);
	assert_int_equal(e->count, 1);
	assert_int_equal(snapshot__count(d), 2);
	snapshot__free(d);

	/* Read 3: thread 2 exits with one more call; the fold had 7. */
	struct sp_value v2 = val(5, 500, 30, 3, 20);

	assert_int_equal(fold__add(f, &t2, &v2, 4, r3), 0);
	assert_int_equal(fold__into(f, r3, 3), 0);
	snapshot__seal(r3);
	assert_int_equal(snapshot__count(r3), 1);
	assert_int_equal(snapshot__delta(r3, r2, &d), 0);
	assert_int_equal(snapshot__count(d), 1);
	e = find(d, 0, 0x10);
	assert_non_null(e);
	assert_int_equal(e->count, 1);
	assert_int_equal(e->wait_ns, 100);
	assert_int_equal(e->max_ns, 20);
	snapshot__free(d);
	snapshot__free(r1);
	snapshot__free(r2);
	snapshot__free(r3);
	fold__free(f);
}

static const struct snapshot_entry *find_pid(const struct snapshot *s,
					     uint32_t pid)
{
	for (size_t i = 0; i < snapshot__count(s); i++)
		if (snapshot__entries(s)[i].key.pid == pid)
			return &snapshot__entries(s)[i];
	return NULL;
}

/*
 * Processes let go: their rows become one row of process 0, counted
 * once across the read that moves them; another process's row stays.
 */
static void test_forgotten_processes_fold_into_process_0(void **state UNUSED)
{
	struct sp_key a = key(0x10, 11, 0), b = key(0x10, 22, 0);
	struct sp_key c = key(0x10, 33, 0);
	struct sp_value va = val(5, 500, 50, 1, 50), vb = val(3, 300, 70, 1, 70);
	struct sp_value vc = val(2, 200, 20, 1, 20);
	struct snapshot *r1 = snap_new(), *r2 = snap_new();
	const struct snapshot_entry *e;
	pid_t pids[] = { 200, 100 };
	struct snapshot *d;
	struct fold *f;

	a.pid = 100;
	b.pid = 200;
	c.pid = 300;
	assert_int_equal(fold__new(false, &f), 0);
	assert_int_equal(fold__add(f, &a, &va, 2, r1), 0);
	assert_int_equal(fold__add(f, &b, &vb, 2, r1), 0);
	assert_int_equal(fold__add(f, &c, &vc, 2, r1), 0);
	assert_int_equal(fold__into(f, r1, 1), 0);
	snapshot__seal(r1);
	assert_int_equal(snapshot__count(r1), 3);

	assert_int_equal(fold__forget_pids(f, pids, 2, 3, r2), 0);
	assert_int_equal(fold__rows(f), 2);
	assert_int_equal(fold__into(f, r2, 2), 0);
	snapshot__seal(r2);
	assert_int_equal(snapshot__count(r2), 2);
	e = find_pid(r2, 0);
	assert_non_null(e);
	assert_int_equal(e->count, 8);
	assert_int_equal(e->wait_ns, 800);
	assert_int_equal(e->max_ns, 70);
	e = find_pid(r2, 300);
	assert_non_null(e);
	assert_int_equal(e->count, 2);
	/* Nothing new happened: the delta counts nothing twice. */
	assert_int_equal(snapshot__delta(r2, r1, &d), 0);
	for (size_t i = 0; i < snapshot__count(d); i++)
		assert_int_equal(snapshot__entries(d)[i].count, 0);
	snapshot__free(d);
	snapshot__free(r1);
	snapshot__free(r2);
	fold__free(f);
}

/* A call that ended after the window switch counts in the next window. */
static void test_fold_keeps_the_open_windows_maximum(void **state UNUSED)
{
	struct sp_key t1 = key(0x10, 1, 0);
	/* window 3 (open at the read) max 80; window 2 (closing) max 40. */
	struct sp_value v = {
		.count = 2, .wait_ns = 120, .max_ns = 80,
		.window = 3, .window_max_ns = 80,
		.prev_window = 2, .prev_window_max_ns = 40,
	};
	struct snapshot *r2 = snap_new(), *r3 = snap_new();
	struct fold *f;
	const struct snapshot_entry *e;

	assert_int_equal(fold__new(false, &f), 0);
	assert_int_equal(fold__add(f, &t1, &v, 3, r2), 0);
	assert_int_equal(fold__into(f, r2, 2), 0);
	snapshot__seal(r2);
	e = find(r2, 0, 0x10);
	assert_int_equal(e->window_max_ns, 40);
	assert_int_equal(fold__into(f, r3, 3), 0);
	snapshot__seal(r3);
	e = find(r3, 0, 0x10);
	assert_int_equal(e->window_max_ns, 80);
	snapshot__free(r2);
	snapshot__free(r3);
	fold__free(f);
}

static void test_many_rows_grow_the_table(void **state UNUSED)
{
	struct snapshot *s = snap_new();
	struct fold *f;

	assert_int_equal(fold__new(false, &f), 0);
	for (uint32_t i = 0; i < 5000; i++) {
		struct sp_key k = key(0x1000 + i % 1000, i + 1, 0);
		struct sp_value v = val(1, 10, 10, 1, 10);

		assert_int_equal(fold__add(f, &k, &v, 2, s), 0);
	}
	assert_int_equal(fold__rows(f), 1000);
	assert_int_equal(fold__into(f, s, 1), 0);
	snapshot__seal(s);
	assert_int_equal(snapshot__count(s), 1000);
	for (size_t i = 0; i < snapshot__count(s); i++)
		assert_int_equal(snapshot__entries(s)[i].count, 5);
	snapshot__free(s);
	fold__free(f);
}

/* A fake canonical stack: a run's stack id pid * 1000 + site is site. */
static void canon_site(void *ctx UNUSED, struct sp_key *k)
{
	k->stack_id %= 1000;
}

/*
 * N runs of one program (each its own PID and its own stack ids, as ASLR
 * makes them) leave one row a call site once their processes are
 * forgotten; the totals are what the runs added, summed by a scan.
 */
static void test_runs_of_one_program_fold_into_one_row(void **state UNUSED)
{
	struct snapshot *s = snap_new(), *r2 = snap_new();
	uint64_t want_count[2] = { 0 }, want_wait[2] = { 0 };
	pid_t pids[50];
	struct fold *f;
	size_t n;
	const struct snapshot_entry *rows;

	assert_int_equal(fold__new(false, &f), 0);
	fold__set_canon(f, canon_site, NULL);
	for (uint32_t run = 0; run < 50; run++) {
		pids[run] = (pid_t)(100 + run);
		for (uint32_t t = 0; t < 2; t++) {
			for (uint64_t site = 1; site <= 2; site++) {
				struct sp_key k = key(0x10, 1000 + run * 2 + t, 0);
				struct sp_value v = val(run + t + 1, 10 * (run + 1),
							10, 2, 10);

				k.pid = pids[run];
				k.stack_id = pids[run] * 1000 + site;
				assert_int_equal(fold__add(f, &k, &v, 2, s), 0);
				want_count[site - 1] += v.count;
				want_wait[site - 1] += v.wait_ns;
			}
		}
	}
	/* Named processes keep their rows apart (their PIDs). */
	assert_int_equal(fold__rows(f), 100);
	assert_int_equal(fold__rows_forgotten(f), 0);
	assert_int_equal(fold__forget_pids(f, pids, 50, 3, r2), 0);
	assert_int_equal(fold__rows(f), 2);
	assert_int_equal(fold__rows_forgotten(f), 2);
	rows = fold__entries(f, 2, &n);
	assert_non_null(rows);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		uint64_t site = rows[i].key.stack_id;

		assert_true(site == 1 || site == 2);
		assert_int_equal(rows[i].key.pid, 0);
		assert_int_equal(rows[i].key.tid, 0);
		assert_int_equal(rows[i].count, want_count[site - 1]);
		assert_int_equal(rows[i].wait_ns, want_wait[site - 1]);
	}
	snapshot__free(s);
	snapshot__free(r2);
	fold__free(f);
}

/* A scan's model of the fold: every row added, under its folded key. */
struct model_row {
	struct sp_key key;
	uint64_t count, wait_ns, hist1;
};

static struct model_row *model_find(struct model_row *m, size_t n,
				    const struct sp_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(&m[i].key, k, sizeof(*k)))
			return &m[i];
	return NULL;
}

static void model_add(struct model_row *m, size_t *n, const struct sp_key *k,
		      uint64_t count, uint64_t wait_ns, uint64_t hist1)
{
	struct model_row *r = model_find(m, *n, k);

	if (!r) {
		r = &m[(*n)++];
		*r = (struct model_row){ .key = *k };
	}
	r->count += count;
	r->wait_ns += wait_ns;
	r->hist1 += hist1;
}

/*
 * The sorted rows, made again only where they changed, against a scan
 * of every row added: rounds of random rows, histograms, and forgotten
 * processes (their rows deleted from the table and moved to process 0).
 */
static void test_sorted_rows_match_a_scan(void **state UNUSED)
{
	static struct model_row model[4096];
	unsigned int seed = 7;
	size_t n_model = 0;
	struct fold *f;

	assert_int_equal(fold__new(false, &f), 0);
	fold__set_canon(f, canon_site, NULL);
	for (uint64_t round = 2; round < 40; round++) {
		struct snapshot *s = snap_new();
		const struct snapshot_entry *rows;
		size_t n, adds = (size_t)rand_r(&seed) % 60;

		for (size_t a = 0; a < adds; a++) {
			struct sp_key k = key(0x10 + (uint64_t)rand_r(&seed) % 7,
					      (uint32_t)rand_r(&seed) % 500 + 1, 0);
			struct sp_value v = val((uint64_t)rand_r(&seed) % 9 + 1,
						(uint64_t)rand_r(&seed) % 999 + 1,
						5, round + 1, 5);
			struct sp_hist h = { 0 };
			struct sp_key folded;

			k.pid = (uint32_t)rand_r(&seed) % 12 + 1;
			k.stack_id = k.pid * 1000 + (uint64_t)rand_r(&seed) % 3;
			h.slot[1] = (uint64_t)rand_r(&seed) % 4;
			folded = fold__key(f, &k);
			assert_int_equal(fold__add(f, &k, &v, round + 1, s), 0);
			assert_int_equal(fold__add_hist(f, &k, &h), 0);
			model_add(model, &n_model, &folded, v.count, v.wait_ns,
				  h.slot[1]);
		}
		if (round % 5 == 0) {
			pid_t forget[3];

			for (int i = 0; i < 3; i++)
				forget[i] = rand_r(&seed) % 12 + 1;
			assert_int_equal(fold__forget_pids(f, forget, 3,
							   round + 1, s), 0);
			for (size_t i = 0; i < n_model; i++) {
				struct model_row *r = &model[i], *to;
				struct sp_key k = r->key;
				bool gone = false;

				for (int j = 0; j < 3; j++)
					gone |= k.pid && (pid_t)k.pid == forget[j];
				if (!gone)
					continue;
				k.pid = 0;
				to = model_find(model, n_model, &k);
				if (!to) {
					r->key = k;
					continue;
				}
				to->count += r->count;
				to->wait_ns += r->wait_ns;
				to->hist1 += r->hist1;
				*r = model[--n_model];
				i--;
			}
		}
		rows = fold__entries(f, round, &n);
		assert_true(rows || !n);
		assert_int_equal(n, n_model);
		assert_int_equal(fold__rows(f), n_model);
		{
			size_t pid0 = 0;

			for (size_t i = 0; i < n_model; i++)
				pid0 += !model[i].key.pid;
			assert_int_equal(fold__rows_forgotten(f), pid0);
		}
		for (size_t i = 0; i < n; i++) {
			struct model_row *r = model_find(model, n_model,
							 &rows[i].key);

			if (i)
				assert_true(snapshot__key_cmp(&rows[i - 1].key,
							      &rows[i].key) < 0);
			assert_non_null(r);
			assert_int_equal(rows[i].count, r->count);
			assert_int_equal(rows[i].wait_ns, r->wait_ns);
			assert_int_equal(rows[i].hist[1], r->hist1);
		}
		snapshot__free(s);
	}
	fold__free(f);
}

/*
 * Beyond the bound on rows of process 0, the rows of processes whose
 * addresses never merge (never seen mapped) join their type's "other"
 * row: the total is kept, and the merged rows are counted.
 */
static void test_forgotten_rows_beyond_the_bound_join_other(void **state UNUSED)
{
	struct snapshot *s = snap_new(), *r2 = snap_new();
	uint64_t want = 0, got = 0;
	pid_t pids[40];
	struct fold *f;
	const struct snapshot_entry *rows;
	size_t n;

	assert_int_equal(fold__new(false, &f), 0);
	fold__set_max_forgotten(f, 10);
	for (uint32_t run = 0; run < 40; run++) {
		struct sp_key k = key(0x1000 + run * 0x100, 7, 0);
		struct sp_value v = val(run + 1, 5, 5, 2, 5);

		k.type = run % 2;
		k.pid = pids[run] = (pid_t)(200 + run);
		assert_int_equal(fold__add(f, &k, &v, 2, s), 0);
		want += v.count;
	}
	assert_int_equal(fold__forget_pids(f, pids, 40, 3, r2), 0);
	/* 10 rows of their own, then one "other" row a type. */
	assert_int_equal(fold__rows_forgotten(f), 12);
	assert_int_equal(fold__merged(f), 30);
	rows = fold__entries(f, 2, &n);
	assert_int_equal(n, 12);
	for (size_t i = 0; i < n; i++)
		got += rows[i].count;
	assert_int_equal(got, want);
	snapshot__free(s);
	snapshot__free(r2);
	fold__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_drops_thread_and_holder_unless_kept),
		cmocka_unit_test(test_rows_of_exited_threads_merge),
		cmocka_unit_test(test_holds_and_histograms_fold_with_their_rows),
		cmocka_unit_test(test_kept_threads_count_no_thread_as_merged),
		cmocka_unit_test(test_delta_counts_a_folded_row_once),
		cmocka_unit_test(test_fold_keeps_the_open_windows_maximum),
		cmocka_unit_test(test_many_rows_grow_the_table),
		cmocka_unit_test(test_forgotten_processes_fold_into_process_0),
		cmocka_unit_test(test_runs_of_one_program_fold_into_one_row),
		cmocka_unit_test(test_sorted_rows_match_a_scan),
		cmocka_unit_test(test_forgotten_rows_beyond_the_bound_join_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
