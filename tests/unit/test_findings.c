// SPDX-License-Identifier: GPL-2.0
/* findings.c: the ranking by busy threads, long-hold's site, hot-stripe's
 * object, and the thresholds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "findings.h"
#include "syncprof.h"

#define S 1000000000ull

static void run(const struct findings_input *in, struct finding **f, size_t *n)
{
	assert_int_equal(findings__build(in, f, n), 0);
}

/* The busy share findings__weigh_threads gives in's thread i (sorted). */
static double share(const struct findings_input *in, size_t i)
{
	struct findings_thread *t;
	double busy;

	assert_int_equal(findings__weigh_threads(in, &t), 0);
	busy = t[i].busy;
	free(t);
	return busy;
}

/* The input of waits w and releases r (arrays) over a window of secs. */
#define INPUT(w, r, secs) {						\
		.waits = (w), .n_waits = sizeof(w) / sizeof((w)[0]),	\
		.releases = (r), .n_releases = sizeof(r) / sizeof((r)[0]), \
		.elapsed_ns = (secs) * S,				\
	}

/* One lock, one site's releases most of its charges: long-hold there. */
static void test_long_hold_names_the_release(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 2, .count = 10, .wait_ns = 2 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 3, .count = 10, .wait_ns = 2 * S },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x200, .pid = 1,
		  .count = 4, .wait_ns = 3 * S, .max_ns = S / 10 },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x300, .pid = 1,
		  .count = 16, .wait_ns = 1 * S, .max_ns = S / 1000 },
	};
	struct findings_input in = INPUT(w, r, 4);
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_LONG_HOLD);
	assert_int_equal(f[0].site, 0x200);
	assert_true(f[0].site_release);
	assert_int_equal(f[0].wait_ns, 3 * S);
	assert_int_equal(f[0].lock_wait_ns, 4 * S);
	/* 2 threads x 4 s; 4 s waited, 3/4 of it charged here: 37.5%. */
	assert_true(f[0].impact_pct > 37.4 && f[0].impact_pct < 37.6);
	free(f);
}

/* Half the charges is not most: no long-hold below the share. */
static void test_long_hold_needs_most_of_the_charges(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 2, .count = 10, .wait_ns = 2 * S },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x200, .pid = 1,
		  .count = 4, .wait_ns = S * 4 / 10 },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x300, .pid = 1,
		  .count = 4, .wait_ns = S * 4 / 10 },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x400, .pid = 1,
		  .count = 4, .wait_ns = S * 12 / 10 },
	};
	struct findings_input in = INPUT(w, r, 4);
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].site, 0x400);	/* 60%: over the share */
	free(f);
	r[2].wait_ns = S * 3 / 10;		/* now 27%: none */
	run(&in, &f, &n);
	assert_int_equal(n, 0);
	assert_null(f);
}

/*
 * The decoy: the background lock 0xb0, whose thread 10 sleeps between
 * rounds (busy 0.2), and the workers' lock 0xa0 (thread 20, busy 1),
 * each lock's waits w charged to one release site of its own, over 4 s.
 * The workers' lock must rank first, the two impacts near pct_a and
 * pct_b.
 */
static void check_decoy(const struct findings_wait *w, size_t n_w,
			double pct_a, double pct_b)
{
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0xb0, .site = 0x3, .pid = 1 },
		{ .type = SP_TYPE_MUTEX, .object = 0xa0, .site = 0x4, .pid = 1 },
	};
	/* 10: ran 0.2 s of the 1 s it neither waited nor queued; 20: all. */
	struct findings_thread t[] = {
		{ .pid = 1, .tid = 10, .run_ns = S / 5, .span_ns = 4 * S },
		{ .pid = 1, .tid = 20, .run_ns = 3 * S, .span_ns = 4 * S },
	};
	struct findings_input in = {
		.waits = w, .n_waits = n_w, .releases = r, .n_releases = 2,
		.threads = t, .n_threads = 2, .elapsed_ns = 4 * S,
	};
	struct finding *f;
	size_t n;

	for (size_t i = 0; i < n_w; i++) {
		struct findings_release *to = &r[w[i].object == 0xa0];

		to->count += w[i].count;
		to->wait_ns += w[i].wait_ns;
	}
	run(&in, &f, &n);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].object, 0xa0);
	assert_int_equal(f[1].object, 0xb0);
	assert_true(f[0].impact_pct > pct_a - 0.1 && f[0].impact_pct < pct_a + 0.1);
	assert_true(f[1].impact_pct > pct_b - 0.1 && f[1].impact_pct < pct_b + 0.1);
	free(f);
}

/*
 * More wait on the background lock than on the workers': the workers'
 * lock ranks first.
 */
static void test_busy_threads_rank_first(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0xb0, .callsite = 0x1,
		  .pid = 1, .tid = 10, .count = 5, .wait_ns = 3 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0xa0, .callsite = 0x2,
		  .pid = 1, .tid = 20, .count = 5, .wait_ns = 1 * S },
	};

	/*
	 * Of the work (3.2 s run, 0.2 x 3 s + 1 x 1 s lost to waits):
	 * 1 / 4.8 and 0.6 / 4.8.
	 */
	check_decoy(w, 2, 100.0 / 4.8, 60.0 / 4.8);
}

/*
 * The rows of threads that exited before the report was read come
 * without a thread (tid 0): they weigh as the lock's known waits, not
 * fully, so the background lock stays below the workers' one.
 */
static void test_exited_threads_weigh_as_their_lock(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0xb0, .callsite = 0x1,
		  .pid = 1, .tid = 10, .count = 5, .wait_ns = 3 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0xb0, .callsite = 0x1,
		  .pid = 1, .tid = 0, .count = 2, .wait_ns = 1 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0xa0, .callsite = 0x2,
		  .pid = 1, .tid = 20, .count = 5, .wait_ns = 1 * S },
	};

	/*
	 * 0xb0's 4 s weigh as thread 10's 0.2 (fully, the exited row's 1 s
	 * would have put it first): of 3.2 s run and 0.8 + 1 s lost, 1 / 5
	 * and 0.8 / 5.
	 */
	check_decoy(w, 3, 20.0, 16.0);
}

/*
 * Workers that exited before the report was read, their rows folded
 * (tid 0), and a main thread that sleeps in its joins with a few
 * microseconds of another lock's waits: the folded rows weigh as the
 * threads without rows of their own, taken as one, not as the main
 * thread (which weighed them 0 and lost the hot stripe).
 */
static void test_exited_workers_weigh_as_themselves(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x1,
		  .pid = 1, .count = 100, .wait_ns = 3 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0x20, .callsite = 0x1,
		  .pid = 1, .count = 10, .wait_ns = 3 * S / 10 },
		{ .type = SP_TYPE_MUTEX, .object = 0x30, .callsite = 0x1,
		  .pid = 1, .count = 10, .wait_ns = S / 5 },
		{ .type = SP_TYPE_MUTEX, .object = 0x40, .callsite = 0x2,
		  .pid = 1, .tid = 1, .count = 4, .wait_ns = 10000 },
	};
	/* Main sleeps; the workers ran 3 s, queued 1 s of their 8 s. */
	struct findings_thread t[] = {
		{ .pid = 1, .tid = 1, .span_ns = 4 * S },
		{ .pid = 1, .tid = 2, .run_ns = 3 * S / 2, .runq_ns = S / 2,
		  .slices = 100, .span_ns = 4 * S },
		{ .pid = 1, .tid = 3, .run_ns = 3 * S / 2, .runq_ns = S / 2,
		  .slices = 100, .span_ns = 4 * S },
	};
	struct findings_input in = {
		.waits = w, .n_waits = 4, .threads = t, .n_threads = 3,
		.every_call = true, .elapsed_ns = 4 * S,
	};
	struct finding *f;
	size_t n;

	/*
	 * The workers: 3 s run of the 8 - 3.5 - 1 s they neither waited
	 * nor queued, 6/7; of 3 s run and 3.5 x 6/7 s lost, the hot
	 * stripe's 3 x 6/7 s: 3/7.
	 */
	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_HOT_STRIPE);
	assert_int_equal(f[0].object, 0x10);
	assert_int_equal(f[0].n_objects, 3);
	assert_true(f[0].impact_pct > 300.0 / 7 - 0.1 &&
		    f[0].impact_pct < 300.0 / 7 + 0.1);
	free(f);
}

/*
 * A woken wait's CPU wait is in both its wait and the run queue: one
 * average CPU wait per lock wait goes back to the thread's sleep.
 */
static void test_cpu_wait_after_a_wake_counted_once(void **state)
{
	(void)state;
	/* 4 s: 0.5 s run, 1 s runq over 10 slices, 2 s in 5 lock waits
	 * (0.5 s of it runq after the wakes), 1 s slept. */
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0xb0, .callsite = 0x1,
		  .pid = 1, .tid = 10, .count = 5, .wait_ns = 2 * S },
	};
	struct findings_thread t[] = {
		{ .pid = 1, .tid = 10, .run_ns = S / 2, .runq_ns = S,
		  .slices = 10, .span_ns = 4 * S },
	};
	struct findings_input in = {
		.waits = w, .n_waits = 1, .threads = t, .n_threads = 1,
		.elapsed_ns = 4 * S,
	};

	/* 0.5 s run of 1.5 s neither waited nor queued: a third. */
	assert_true(share(&in, 0) > 0.333 && share(&in, 0) < 0.334);
	/* Without the slices: 0.5 of 1 s left. */
	t[0].slices = 0;
	assert_true(share(&in, 0) > 0.499 && share(&in, 0) < 0.501);
	/* Full mode counts every call: no estimate. */
	t[0].slices = 10;
	in.every_call = true;
	assert_true(share(&in, 0) > 0.499 && share(&in, 0) < 0.501);
}

/*
 * Each thread's waits found in one walk: the same tid in two processes
 * kept apart, a thread of pid 0 taking its tid's waits in any process,
 * idle waits left out; the result sorted by tid, then pid.
 */
static void test_busy_shares_by_thread(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .object = 0x1, .pid = 2, .tid = 10, .count = 1, .wait_ns = 2 * S },
		{ .object = 0x1, .pid = 1, .tid = 10, .count = 1, .wait_ns = S },
		{ .object = 0x2, .pid = 3, .tid = 7, .count = 1, .wait_ns = 3 * S },
		{ .object = 0x3, .pid = 1, .tid = 10, .event = true, .count = 1,
		  .wait_ns = 3 * S },
	};
	/* 4 s lives: run 1 s of what the lock waits left. */
	struct findings_thread t[] = {
		{ .pid = 2, .tid = 10, .run_ns = S, .span_ns = 4 * S },
		{ .pid = 0, .tid = 7, .run_ns = S / 2, .span_ns = 4 * S },
		{ .pid = 1, .tid = 10, .run_ns = S, .span_ns = 4 * S },
	};
	struct findings_input in = {
		.waits = w, .n_waits = 4, .threads = t, .n_threads = 3,
		.elapsed_ns = 4 * S,
	};
	struct findings_thread *by_tid;

	assert_int_equal(findings__weigh_threads(&in, &by_tid), 0);
	assert_int_equal(by_tid[0].tid, 7);
	assert_true(by_tid[0].busy > 0.499 && by_tid[0].busy < 0.501);
	assert_int_equal(by_tid[1].pid, 1);
	assert_true(by_tid[1].busy > 0.333 && by_tid[1].busy < 0.334);
	assert_int_equal(by_tid[2].pid, 2);
	assert_true(by_tid[2].busy > 0.499 && by_tid[2].busy < 0.501);
	free(by_tid);
}

/* Idle waits (class event) are no lock finding. */
static void test_idle_waits_give_none(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_CONDVAR, .event = true, .object = 0x10,
		  .callsite = 0x1, .pid = 1, .tid = 2, .count = 5,
		  .wait_ns = 4 * S },
	};
	struct findings_input in = {
		.waits = w,
		.n_waits = 1,
		.elapsed_ns = 4 * S,
	};
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 0);
}

/* 8 objects at one site, one with 90% of the waits: hot-stripe. */
static void test_hot_stripe_names_the_object(void **state)
{
	(void)state;
	struct findings_wait w[8];

	for (int i = 0; i < 8; i++)
		w[i] = (struct findings_wait){
			.type = SP_TYPE_MUTEX, .object = 0x100 + 0x40 * i,
			.callsite = 0x7, .pid = 1, .tid = 2, .count = 10,
			.wait_ns = i == 3 ? 9 * S / 10 : S / 70 };
	struct findings_input in = {
		.waits = w,
		.n_waits = 8,
		.elapsed_ns = 1 * S,
	};
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_HOT_STRIPE);
	assert_int_equal(f[0].object, 0x100 + 0x40 * 3);
	assert_int_equal(f[0].n_objects, 8);
	assert_int_equal(f[0].site, 0x7);
	free(f);
	/* An even spread: none. */
	for (int i = 0; i < 8; i++)
		w[i].wait_ns = S / 8;
	run(&in, &f, &n);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(f[i].category, FINDING_HOT_STRIPE);
	free(f);
}

/* Under 5% of the threads' time: nothing worth fixing. */
static void test_small_waits_give_none(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x1,
		  .pid = 1, .tid = 2, .count = 5, .wait_ns = S / 25 },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x3, .pid = 1,
		  .count = 5, .wait_ns = S / 25 },
	};
	struct findings_input in = INPUT(w, r, 1);
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 0);	/* 4% */
	w[0].wait_ns = r[0].wait_ns = S / 16;
	run(&in, &f, &n);
	assert_int_equal(n, 1);	/* 6.25% */
	free(f);
}

/*
 * --why: holders asleep for most of the waits: blocking-under-lock at
 * the site whose holds caused them, in place of long-hold.
 */
static void test_sleeping_holders_block_under_the_lock(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 2, .count = 10, .wait_ns = 2 * S },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x200, .pid = 1,
		  .count = 4, .wait_ns = 2 * S },
	};
	struct findings_holder h[] = {
		{ .pid = 1, .type = SP_TYPE_MUTEX, .object = 0x10,
		  .total_ns = 2 * S, .sleep_ns = S * 3 / 2, .runnable_ns = 0,
		  .sleep_site = 0x300, .sleep_site_ns = S },
	};
	struct findings_input in = INPUT(w, r, 4);
	struct finding *f;
	size_t n;

	in.holders = h;
	in.n_holders = 1;

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_BLOCKING_UNDER_LOCK);
	/* The holds' release, not the chains' root (a queue's last). */
	assert_int_equal(f[0].site, 0x200);
	free(f);
	/* Asleep a quarter of the time: not the holders' state; long-hold. */
	h[0].sleep_ns = S / 2;
	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_LONG_HOLD);
	free(f);
	/* Waiting for a CPU: holder-preempted. */
	h[0].runnable_ns = S;
	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_HOLDER_PREEMPTED);
	free(f);
}

/* Full mode: an rwlock only write-locked, a spinlock spun long. */
static void test_wrong_primitive(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_RWLOCK_W, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 2, .count = 500, .wait_ns = 2 * S },
		{ .type = SP_TYPE_SPINLOCK, .object = 0x20, .callsite = 0x200,
		  .pid = 1, .tid = 3, .count = 1000, .wait_ns = S / 10 },
	};
	struct findings_input in = {
		.waits = w,
		.n_waits = 2,
		.every_call = true,
		.elapsed_ns = 4 * S,
	};
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	/* The spinlock: 100 us a spin, but 1.25% of the time: none. */
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_WRONG_PRIMITIVE);
	assert_int_equal(f[0].object, 0x10);
	assert_int_equal(f[0].site, 0x100);
	free(f);
	/* A reader too: an rwlock that shares; spins of 1 ms: a finding. */
	w[1] = (struct findings_wait){ .type = SP_TYPE_RWLOCK_R, .object = 0x10,
				       .callsite = 0x300, .pid = 1, .tid = 3,
				       .count = 10, .wait_ns = S / 100 };
	run(&in, &f, &n);
	assert_int_equal(n, 0);
	w[1] = (struct findings_wait){ .type = SP_TYPE_SPINLOCK, .object = 0x20,
				       .callsite = 0x200, .pid = 1, .tid = 3,
				       .count = 2000, .wait_ns = 2 * S };
	w[0].count = 50;	/* too few write locks to judge */
	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].object, 0x20);
	free(f);
	/* Contended mode sees only the waits that blocked: no judgement. */
	in.every_call = false;
	run(&in, &f, &n);
	assert_int_equal(n, 0);
}

/*
 * A semaphore in shared memory that another process posts (PostgreSQL:
 * a backend wakes another's): the release, keyed by its process, is
 * the waiter's lock's; one lock across them.
 */
static void test_shared_lock_released_by_another_process(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_SEM, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 1, .count = 10, .wait_ns = 2 * S },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_SEM, .object = 0x10, .site = 0x200, .pid = 7,
		  .count = 10, .wait_ns = 2 * S, .max_ns = S / 10 },
	};
	struct findings_input in = INPUT(w, r, 4);
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_LONG_HOLD);
	assert_int_equal(f[0].site, 0x200);
	assert_int_equal(f[0].wait_ns, 2 * S);
	free(f);
}

/*
 * A fork's private copies of one lock, at one address in two processes,
 * each released by its own: two locks, each with its own release site.
 */
static void test_forked_private_locks_kept_apart(void **state)
{
	(void)state;
	struct findings_wait w[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 1, .tid = 1, .count = 10, .wait_ns = 2 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .callsite = 0x100,
		  .pid = 2, .tid = 2, .count = 10, .wait_ns = 2 * S },
	};
	struct findings_release r[] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x200, .pid = 1,
		  .count = 10, .wait_ns = 2 * S },
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .site = 0x300, .pid = 2,
		  .count = 10, .wait_ns = 2 * S },
	};
	struct findings_input in = INPUT(w, r, 4);
	struct finding *f;
	size_t n;

	run(&in, &f, &n);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].pid + f[1].pid, 3);
	assert_int_equal(f[0].site, f[0].pid == 1 ? 0x200 : 0x300);
	assert_int_equal(f[1].site, f[1].pid == 1 ? 0x200 : 0x300);
	assert_int_equal(f[0].n_objects, 1);
	free(f);
}

/*
 * A wait queue with a semaphore per waiter (PostgreSQL's LWLocks):
 * 16 locks to syncprof, each 0.625% of the threads' time, all released
 * at one site: one finding of 16 objects, 10%, that adds up; one of
 * them alone is below the threshold.
 */
static void test_semaphore_per_waiter_is_one_finding(void **state)
{
	(void)state;
	struct findings_wait w[16];
	struct findings_release r[16];
	struct finding *f;
	size_t n;

	for (uint32_t i = 0; i < 16; i++) {
		w[i] = (struct findings_wait){
			.type = SP_TYPE_SEM, .object = 0x1000 + 0x80 * i,
			.callsite = 0x100, .pid = 10 + i, .tid = 10 + i,
			.count = 10, .wait_ns = 4 * S / 10 };
		r[i] = (struct findings_release){
			.type = SP_TYPE_SEM, .object = 0x1000 + 0x80 * i,
			.site = 0x500, .pid = 99, .count = 10,
			.wait_ns = 4 * S / 10 };
	}
	struct findings_input in = INPUT(w, r, 4);

	run(&in, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].category, FINDING_LONG_HOLD);
	assert_int_equal(f[0].site, 0x500);
	assert_int_equal(f[0].n_objects, 16);
	assert_int_equal(f[0].wait_ns, 16 * 4 * S / 10);
	assert_int_equal(f[0].lock_wait_ns, 16 * 4 * S / 10);
	/* 6.4 s of 16 threads x 4 s. */
	assert_true(f[0].impact_pct > 9.9 && f[0].impact_pct < 10.1);
	free(f);
	in.n_waits = in.n_releases = 1;
	in.n_threads_alive = 16;
	run(&in, &f, &n);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_hold_names_the_release),
		cmocka_unit_test(test_long_hold_needs_most_of_the_charges),
		cmocka_unit_test(test_busy_threads_rank_first),
		cmocka_unit_test(test_exited_threads_weigh_as_their_lock),
		cmocka_unit_test(test_exited_workers_weigh_as_themselves),
		cmocka_unit_test(test_cpu_wait_after_a_wake_counted_once),
		cmocka_unit_test(test_busy_shares_by_thread),
		cmocka_unit_test(test_idle_waits_give_none),
		cmocka_unit_test(test_hot_stripe_names_the_object),
		cmocka_unit_test(test_small_waits_give_none),
		cmocka_unit_test(test_sleeping_holders_block_under_the_lock),
		cmocka_unit_test(test_wrong_primitive),
		cmocka_unit_test(test_shared_lock_released_by_another_process),
		cmocka_unit_test(test_forked_private_locks_kept_apart),
		cmocka_unit_test(test_semaphore_per_waiter_is_one_finding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
