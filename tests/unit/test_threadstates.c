// SPDX-License-Identifier: GPL-2.0
/*
 * threadstates: reads of the kernel's thread table turned into report
 * windows: open intervals, marks and origins, threads born and dying in a
 * window, reads that miss a thread, reused TIDs, the settling of a read's
 * skew, grouping by name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "threadstates.h"

#define UNUSED __attribute__((unused))
#define MS 1000000ull

static struct thread_sample sample(uint32_t tid, const char *comm,
				   uint64_t born, uint32_t state,
				   uint64_t since)
{
	struct thread_sample s = { .tid = tid };

	s.t.born_ns = born;
	s.t.since_ns = since;
	s.t.state = state;
	strncpy(s.t.comm, comm, sizeof(s.t.comm) - 1);
	return s;
}

static struct threadstates *new_ts(void)
{
	struct threadstates *ts = NULL;

	assert_int_equal(threadstates__new(true, &ts), 0);
	return ts;
}

static void update(struct threadstates *ts, struct thread_sample *s, size_t n,
		   uint64_t now)
{
	assert_int_equal(threadstates__update(ts, s, n, now), 0);
}

static const struct states_row *row_of(const struct states_report *rep,
				       int64_t tid)
{
	for (size_t i = 0; i < rep->count; i++)
		if (rep->rows[i].tid == tid)
			return &rep->rows[i];
	return NULL;
}

static uint64_t row_sum(const struct states_row *r)
{
	uint64_t sum = 0;

	for (int k = 0; k < STATES__COUNT; k++)
		sum += r->ns[k];
	return sum;
}

/* A thread alive throughout: the open interval goes to its state. */
static void test_open_interval(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(10, "w", 100 * MS, SP_THREAD_RUNNING,
					100 * MS);
	struct states_report rep;
	const struct states_row *r;

	update(ts, &s, 1, 100 * MS);	/* the origin */
	/* Ran 30 ms, slept 50 ms so far, asleep since 180 ms. */
	s.t.running_ns = 30 * MS;
	s.t.sleep_ns = 50 * MS;
	s.t.state = SP_THREAD_SLEEP;
	s.t.since_ns = 180 * MS;
	update(ts, &s, 1, 200 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(rep.start_ns, 100 * MS);
	assert_int_equal(rep.end_ns, 200 * MS);
	assert_int_equal(rep.count, 1);
	r = &rep.rows[0];
	assert_int_equal(r->tid, 10);
	assert_string_equal(r->comm, "w");
	assert_int_equal(r->threads, 1);
	assert_int_equal(r->ns[STATES_RUNNING], 30 * MS);
	assert_int_equal(r->ns[STATES_SLEEP], 70 * MS);
	assert_int_equal(r->ns[STATES_RUNNABLE], 0);
	assert_int_equal(r->alive_ns, 100 * MS);
	assert_int_equal(r->born_ns, 0);
	assert_int_equal(r->exit_ns, 0);
	assert_int_equal(r->state, SP_THREAD_SLEEP);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Stolen time is a state of its own, in the window's sum; grouped too. */
static void test_stolen(void **state UNUSED)
{
	struct thread_sample s[2] = {
		sample(10, "w", 100 * MS, SP_THREAD_RUNNING, 100 * MS),
		sample(11, "w", 100 * MS, SP_THREAD_RUNNING, 100 * MS),
	};
	struct states_report rep;
	struct threadstates *ts = new_ts();

	update(ts, s, 2, 100 * MS);
	/* Each on a CPU 80 ms, of which the host ran another guest 20 ms
	   (10 ms for 11), then runnable since 180 ms. */
	for (int i = 0; i < 2; i++) {
		s[i].t.running_ns = (60 + 10 * (uint64_t)i) * MS;
		s[i].t.stolen_ns = (20 - 10 * (uint64_t)i) * MS;
		s[i].t.state = SP_THREAD_RUNNABLE;
		s[i].t.since_ns = 180 * MS;
	}
	update(ts, s, 2, 200 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(row_of(&rep, 10)->ns[STATES_RUNNING], 60 * MS);
	assert_int_equal(row_of(&rep, 10)->ns[STATES_STOLEN], 20 * MS);
	assert_int_equal(row_of(&rep, 10)->ns[STATES_RUNNABLE], 20 * MS);
	assert_int_equal(row_sum(row_of(&rep, 10)), row_of(&rep, 10)->alive_ns);
	threadstates__free_report(&rep);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, true, &rep), 0);
	assert_int_equal(rep.count, 1);
	assert_int_equal(rep.rows[0].ns[STATES_STOLEN], 30 * MS);
	assert_int_equal(row_sum(&rep.rows[0]), 200 * MS);
	threadstates__free_report(&rep);
	assert_string_equal(threadstates__kind_name(STATES_STOLEN), "stolen");
	threadstates__free(ts);
}

/* Seeded before the origin: only what happened after it counts. */
static void test_seeded_before_origin(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(7, "w", 50 * MS, SP_THREAD_SLEEP,
					50 * MS);
	struct states_report rep;

	update(ts, &s, 1, 80 * MS);	/* 30 ms asleep before the origin */
	s.t.sleep_ns = 60 * MS;		/* woke at 110 ms, runs since */
	s.t.state = SP_THREAD_RUNNING;
	s.t.since_ns = 110 * MS;
	update(ts, &s, 1, 130 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	assert_int_equal(rep.rows[0].ns[STATES_SLEEP], 30 * MS);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNING], 20 * MS);
	assert_int_equal(rep.rows[0].alive_ns, 50 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Marks start windows; the origin keeps the totals. */
static void test_mark_and_origin(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(1, "w", 0, SP_THREAD_RUNNING, 0);
	struct states_report rep;

	update(ts, &s, 1, 10 * MS);
	update(ts, &s, 1, 20 * MS);
	threadstates__mark(ts);
	/* Runnable from 20 ms on. */
	s.t.running_ns = 20 * MS;
	s.t.state = SP_THREAD_RUNNABLE;
	s.t.since_ns = 20 * MS;
	update(ts, &s, 1, 35 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(rep.start_ns, 20 * MS);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNING], 0);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNABLE], 15 * MS);
	threadstates__free_report(&rep);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	assert_int_equal(rep.start_ns, 10 * MS);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNING], 10 * MS);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNABLE], 15 * MS);
	threadstates__free_report(&rep);
	/* A reset: totals start at the latest read. */
	threadstates__reset(ts);
	update(ts, &s, 1, 40 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	assert_int_equal(rep.start_ns, 35 * MS);
	assert_int_equal(rep.rows[0].ns[STATES_RUNNABLE], 5 * MS);
	assert_int_equal(rep.rows[0].alive_ns, 5 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Born and dead inside windows: counted for the part they lived. */
static void test_born_and_dead(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s[2] = {
		sample(1, "main", 0, SP_THREAD_SLEEP, 0),
	};
	struct states_report rep;
	const struct states_row *r;

	update(ts, s, 1, 100 * MS);
	/* Thread 2 born at 130 ms: runnable 1 ms, running since. */
	s[1] = sample(2, "child", 130 * MS, SP_THREAD_RUNNING, 131 * MS);
	s[1].t.runnable_ns = 1 * MS;
	update(ts, s, 2, 200 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(rep.count, 2);
	r = row_of(&rep, 2);
	assert_non_null(r);
	assert_int_equal(r->born_ns, 130 * MS);
	assert_int_equal(r->alive_ns, 70 * MS);
	assert_int_equal(r->ns[STATES_RUNNABLE], 1 * MS);
	assert_int_equal(r->ns[STATES_RUNNING], 69 * MS);
	assert_int_equal(row_of(&rep, 1)->alive_ns, 100 * MS);
	threadstates__free_report(&rep);
	threadstates__mark(ts);

	/* It exits at 250 ms: the table says dead. */
	s[1].t.running_ns = 119 * MS;
	s[1].t.state = SP_THREAD_DEAD;
	s[1].t.since_ns = 250 * MS;
	s[1].t.exit_ns = 250 * MS;
	update(ts, s, 2, 300 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	r = row_of(&rep, 2);
	assert_non_null(r);
	assert_int_equal(r->born_ns, 0);
	assert_int_equal(r->exit_ns, 250 * MS);
	assert_int_equal(r->alive_ns, 50 * MS);
	assert_int_equal(r->ns[STATES_RUNNING], 50 * MS);
	assert_int_equal(r->state, SP_THREAD_DEAD);
	assert_string_equal(threadstates__state_name(r->state), "exited");
	threadstates__free_report(&rep);
	threadstates__mark(ts);

	/* Deleted from the table once read: gone from later windows. */
	update(ts, s, 1, 400 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(rep.count, 1);
	assert_null(row_of(&rep, 2));
	threadstates__free_report(&rep);
	/* The totals since the origin still hold its whole life. */
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	r = row_of(&rep, 2);
	assert_non_null(r);
	assert_int_equal(r->alive_ns, 120 * MS);
	assert_int_equal(r->born_ns, 130 * MS);
	assert_int_equal(r->exit_ns, 250 * MS);
	assert_int_equal(row_sum(r), 120 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Without totals, an exited thread is forgotten once behind the mark. */
static void test_forgets_without_totals(void **state UNUSED)
{
	struct threadstates *ts = NULL;
	struct thread_sample s = sample(9, "w", 0, SP_THREAD_RUNNING, 0);
	struct states_report rep;

	assert_int_equal(threadstates__new(false, &ts), 0);
	update(ts, &s, 1, 10 * MS);
	s.t.state = SP_THREAD_DEAD;
	s.t.running_ns = 15 * MS;
	s.t.since_ns = s.t.exit_ns = 15 * MS;
	update(ts, &s, 1, 20 * MS);
	threadstates__mark(ts);
	update(ts, NULL, 0, 30 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	assert_int_equal(rep.count, 0);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* A thread missing from a read stays in its state. */
static void test_missing_from_read(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s[2] = {
		sample(1, "a", 0, SP_THREAD_LOCK, 0),
		sample(2, "b", 0, SP_THREAD_RUNNING, 0),
	};
	struct states_report rep;

	s[0].t.lock_type = SP_TYPE_MUTEX;
	update(ts, s, 2, 10 * MS);
	update(ts, &s[1], 1, 30 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	assert_int_equal(rep.count, 2);
	assert_int_equal(row_of(&rep, 1)->ns[STATES_LOCK], 20 * MS);
	assert_int_equal(row_of(&rep, 1)->type_ns[SP_TYPE_MUTEX], 20 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* A TID reused before its first thread's end was read. */
static void test_reused_tid(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(5, "old", 0, SP_THREAD_SLEEP, 0);
	struct states_report rep;
	size_t olds = 0, news = 0;

	update(ts, &s, 1, 10 * MS);
	update(ts, &s, 1, 20 * MS);
	s = sample(5, "new", 25 * MS, SP_THREAD_RUNNING, 25 * MS);
	update(ts, &s, 1, 30 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	for (size_t i = 0; i < rep.count; i++) {
		const struct states_row *r = &rep.rows[i];

		assert_int_equal(r->tid, 5);
		if (!strcmp(r->comm, "old")) {
			olds++;
			/* Ends at the last read that saw it. */
			assert_int_equal(r->exit_ns, 20 * MS);
			assert_int_equal(r->ns[STATES_SLEEP], 10 * MS);
		} else {
			news++;
			assert_int_equal(r->ns[STATES_RUNNING], 5 * MS);
			assert_int_equal(r->born_ns, 25 * MS);
		}
	}
	assert_int_equal(olds, 1);
	assert_int_equal(news, 1);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/*
 * Copied running (read at 100 ms), but it slept from 99 ms, after its
 * copy: the next window's running goes 1 ms below zero, settled on its
 * current state; every window still adds up, and the totals are true.
 */
static void test_settles_read_skew(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(3, "w", 0, SP_THREAD_RUNNING, 50 * MS);
	struct states_report rep;
	const struct states_row *r;

	s.t.sleep_ns = 50 * MS;
	update(ts, &s, 1, 60 * MS);	/* the origin */
	update(ts, &s, 1, 100 * MS);	/* running to 100 ms, it believes */
	threadstates__mark(ts);
	s.t.running_ns = 49 * MS;	/* in fact it ran to 99 ms ... */
	s.t.state = SP_THREAD_SLEEP;	/* ... and sleeps since */
	s.t.since_ns = 99 * MS;
	update(ts, &s, 1, 150 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, false, &rep), 0);
	r = &rep.rows[0];
	assert_int_equal(r->ns[STATES_RUNNING], 0);
	assert_int_equal(r->ns[STATES_SLEEP], 50 * MS);
	assert_int_equal(r->alive_ns, 50 * MS);
	threadstates__free_report(&rep);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	r = &rep.rows[0];
	assert_int_equal(r->ns[STATES_RUNNING], 39 * MS);
	assert_int_equal(r->ns[STATES_SLEEP], 51 * MS);
	assert_int_equal(row_sum(r), 90 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Lock types go to lock wait; futex waits of no known lock to sleep. */
static void test_lock_types(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s = sample(1, "w", 0, SP_THREAD_RUNNING, 0);
	struct states_report rep;
	const struct states_row *r;

	update(ts, &s, 1, 0);
	update(ts, &s, 1, 1);	/* the origin: nothing counted before */
	threadstates__reset(ts);
	s.t.running_ns = 1;
	s.t.lock_ns[SP_TYPE_MUTEX] = 10 * MS;
	s.t.lock_ns[SP_TYPE_CONDVAR] = 20 * MS;
	s.t.lock_ns[SP_TYPE_FUTEX] = 30 * MS;
	s.t.sleep_ns = 5 * MS;
	s.t.state = SP_THREAD_LOCK;
	s.t.lock_type = SP_TYPE_RWLOCK_W;
	s.t.since_ns = 65 * MS + 1;
	update(ts, &s, 1, 70 * MS + 1);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_ORIGIN, false, &rep), 0);
	r = &rep.rows[0];
	assert_int_equal(r->ns[STATES_LOCK], 35 * MS);
	assert_int_equal(r->ns[STATES_SLEEP], 35 * MS);
	assert_int_equal(r->type_ns[SP_TYPE_MUTEX], 10 * MS);
	assert_int_equal(r->type_ns[SP_TYPE_CONDVAR], 20 * MS);
	assert_int_equal(r->type_ns[SP_TYPE_RWLOCK_W], 5 * MS);
	assert_int_equal(r->type_ns[SP_TYPE_FUTEX], 30 * MS);
	assert_int_equal(r->state, SP_THREAD_LOCK);
	threadstates__free_report(&rep);
	assert_int_equal(threadstates__kind(SP_THREAD_LOCK, SP_TYPE_FUTEX), STATES_SLEEP);
	assert_int_equal(threadstates__kind(SP_THREAD_LOCK, SP_TYPE_SEM), STATES_LOCK);
	assert_int_equal(threadstates__kind(SP_THREAD_RUNNABLE, 0), STATES_RUNNABLE);
	assert_int_equal(threadstates__kind(SP_THREAD_DEAD, 0), STATES__COUNT);
	threadstates__free(ts);
}

/* Threads of one name summed; the rows in name order. */
static void test_group(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct thread_sample s[4] = {
		sample(1, "main", 0, SP_THREAD_SLEEP, 0),
		sample(2, "worker", 0, SP_THREAD_RUNNING, 0),
		sample(3, "worker", 0, SP_THREAD_RUNNABLE, 0),
		sample(4, "worker", 0, SP_THREAD_NEW, 0),	/* not started */
	};
	struct states_report rep;

	update(ts, s, 4, 10 * MS);
	s[3] = sample(4, "worker", 15 * MS, SP_THREAD_LOCK, 15 * MS);
	s[3].t.lock_type = SP_TYPE_MUTEX;
	update(ts, s, 4, 20 * MS);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, true, &rep), 0);
	assert_true(rep.grouped);
	assert_int_equal(rep.count, 2);
	assert_string_equal(rep.rows[0].comm, "main");
	assert_int_equal(rep.rows[0].threads, 1);
	assert_string_equal(rep.rows[1].comm, "worker");
	assert_int_equal(rep.rows[1].tid, STATES_NO_TID);
	assert_int_equal(rep.rows[1].threads, 3);
	assert_int_equal(rep.rows[1].state, -1);
	assert_int_equal(rep.rows[1].ns[STATES_RUNNING], 10 * MS);
	assert_int_equal(rep.rows[1].ns[STATES_RUNNABLE], 10 * MS);
	assert_int_equal(rep.rows[1].ns[STATES_LOCK], 5 * MS);
	assert_int_equal(rep.rows[1].type_ns[SP_TYPE_MUTEX], 5 * MS);
	assert_int_equal(rep.rows[1].alive_ns, 25 * MS);
	assert_int_equal(rep.rows[1].born_ns, 0);
	assert_int_equal(row_sum(&rep.rows[1]), 25 * MS);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

/* Nothing read yet: an empty window. */
static void test_empty(void **state UNUSED)
{
	struct threadstates *ts = new_ts();
	struct states_report rep;

	assert_int_equal(threadstates__now(ts), 0);
	assert_int_equal(threadstates__report(ts, STATES_SINCE_MARK, true, &rep), 0);
	assert_int_equal(rep.count, 0);
	threadstates__free_report(&rep);
	threadstates__free(ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_interval),
		cmocka_unit_test(test_stolen),
		cmocka_unit_test(test_seeded_before_origin),
		cmocka_unit_test(test_mark_and_origin),
		cmocka_unit_test(test_born_and_dead),
		cmocka_unit_test(test_missing_from_read),
		cmocka_unit_test(test_forgets_without_totals),
		cmocka_unit_test(test_reused_tid),
		cmocka_unit_test(test_settles_read_skew),
		cmocka_unit_test(test_lock_types),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
