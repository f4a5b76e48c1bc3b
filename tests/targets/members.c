// SPDX-License-Identifier: GPL-2.0
/*
 * Locks inside global structs and arrays, each made to block --iters
 * times, for the member paths syncprof names them by:
 *   jobs.lock, jobs.not_empty  a consumer waits on the condvar for each
 *                  job; the producer posts one only once it sleeps in
 *                  the futex
 *   table[3].lock  an array of structs: a holder keeps the element's
 *                  lock until the waiter sleeps on it
 *   outer.inner.mu a struct in a struct, the same way
 * and inside a malloc'ed struct heapq, named by their type where the
 * waiting call's DWARF says it (a pointer to struct heapq plus the
 * member's offset):
 *   (struct heapq *)->lock, ->inner.mu, ->slots[2].lock  taken by
 *                  heap_take through its typed parameter
 *   (struct heapq *)->not_empty  waited on as jobs.not_empty is
 *   heapq's slots[0].lock, also taken through an untyped pointer
 *                  (lock_waiter's c->lock): its type cannot be known
 *                  there, so that row keeps its address
 * Each waiter is let go only once /proc says it sleeps in the futex, so
 * each of its --iters calls blocks.  At the end the truth: {"pid",
 * "iters", "objects": {PATH: "0xADDR", ...}}, each lock's address under
 * the path it is expected to be named by, and "cond_waits", the
 * consumer's calls of pthread_cond_wait (--iters unless a producer,
 * starved of the CPU for a second, posted before it slept).
 *
 *   members [--iters N] [--truth FILE]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdatomic.h>

#include "lib/targetkit.h"

#define N_SLOTS 4

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	int n;
} jobs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
};

static struct slot {
	long hits;
	pthread_mutex_t lock;
} table[N_SLOTS] = {
	[0 ... N_SLOTS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static struct {
	int id;
	struct {
		long x;
		pthread_mutex_t mu;
	} inner;
} outer = { .inner.mu = PTHREAD_MUTEX_INITIALIZER };

/* The same locks again, in a malloc'ed struct. */
struct heapq {
	long id;
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	struct {
		int x;
		pthread_mutex_t mu;
	} inner;
	struct {
		long hits;
		pthread_mutex_t lock;
	} slots[4];
	int n;
};

enum heap_member { HEAP_LOCK = 1, HEAP_INNER, HEAP_SLOT };

static int iters = 5;
static atomic_int waiter_tid;
static atomic_int consumed, cond_waits;

/* One lock made to block: the holder lets go once the waiter sleeps. */
struct contention {
	pthread_mutex_t *lock;
	struct heapq *q;	/* non-NULL: taken by heap_take(q, member) */
	enum heap_member member;
	atomic_int round;	/* the holder holds the lock for this round */
	atomic_int done;	/* the waiter's last round */
};

/*
 * Takes and drops one of q's locks through q, as a user's code does:
 * the call's DWARF knows q's type.  One function a member, so the
 * compiler cannot merge the calls into one.
 */
static __attribute__((noinline)) void heap_take_lock(struct heapq *q)
{
	pthread_mutex_lock(&q->lock); /* CALLSITE:heap_lock */
	pthread_mutex_unlock(&q->lock);
}

static __attribute__((noinline)) void heap_take_inner(struct heapq *q)
{
	pthread_mutex_lock(&q->inner.mu); /* CALLSITE:heap_inner */
	pthread_mutex_unlock(&q->inner.mu);
}

static __attribute__((noinline)) void heap_take_slot(struct heapq *q)
{
	pthread_mutex_lock(&q->slots[2].lock); /* CALLSITE:heap_slot */
	pthread_mutex_unlock(&q->slots[2].lock);
}

static void heap_take(struct heapq *q, enum heap_member member)
{
	if (member == HEAP_LOCK)
		heap_take_lock(q);
	else if (member == HEAP_INNER)
		heap_take_inner(q);
	else
		heap_take_slot(q);
}

static void *lock_waiter(void *arg)
{
	struct contention *c = arg;

	atomic_store(&waiter_tid, (int)gettid());
	for (int i = 1; i <= iters; i++) {
		while (atomic_load(&c->round) < i)
			sleep_us(100);
		if (c->q) {
			heap_take(c->q, c->member);
		} else {
			pthread_mutex_lock(c->lock); /* CALLSITE:member_lock */
			pthread_mutex_unlock(c->lock);
		}
		atomic_store(&c->done, i);
	}
	return NULL;
}

/* lock made to block iters times, taken by heap_take(q, member) if q. */
static void contend(pthread_mutex_t *lock, struct heapq *q,
		    enum heap_member member)
{
	struct contention c = { .lock = lock, .q = q, .member = member };
	pthread_t t;

	atomic_store(&waiter_tid, 0);
	if (pthread_create(&t, NULL, lock_waiter, &c))
		exit(1);
	while (!atomic_load(&waiter_tid))
		sleep_us(100);
	for (int i = 1; i <= iters; i++) {
		pthread_mutex_lock(lock);
		atomic_store(&c.round, i);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		pthread_mutex_unlock(lock);
		while (atomic_load(&c.done) < i)
			sleep_us(100);
	}
	pthread_join(t, NULL);
}

/*
 * One wait for a job: on jobs' condvar, or through q on q's.  Counted
 * after, so the wait is a call of its own, not a tail call.
 */
static __attribute__((noinline)) void wait_job(struct heapq *q)
{
	if (q)
		pthread_cond_wait(&q->not_empty, &q->lock); /* CALLSITE:heap_wait */
	else
		pthread_cond_wait(&jobs.not_empty, &jobs.lock); /* CALLSITE:member_wait */
	atomic_fetch_add(&cond_waits, 1);
}

/* Consumes iters jobs of jobs, or of the heapq arg. */
static void *consumer(void *arg)
{
	struct heapq *q = arg;
	pthread_mutex_t *lock = q ? &q->lock : &jobs.lock;
	int *n = q ? &q->n : &jobs.n;

	atomic_store(&waiter_tid, (int)gettid());
	pthread_mutex_lock(lock);
	for (int i = 0; i < iters; i++) {
		while (!*n)
			wait_job(q);
		(*n)--;
		atomic_fetch_add(&consumed, 1);
	}
	pthread_mutex_unlock(lock);
	return NULL;
}

static void produce(struct heapq *q)
{
	pthread_mutex_t *lock = q ? &q->lock : &jobs.lock;
	pthread_cond_t *cond = q ? &q->not_empty : &jobs.not_empty;
	int *n = q ? &q->n : &jobs.n;
	pthread_t t;

	atomic_store(&waiter_tid, 0);
	atomic_store(&consumed, 0);
	if (pthread_create(&t, NULL, consumer, q))
		exit(1);
	while (!atomic_load(&waiter_tid))
		sleep_us(100);
	for (int i = 0; i < iters; i++) {
		/* Wait until it sleeps on the condvar (it holds no lock then). */
		while (atomic_load(&consumed) < i)
			sleep_us(100);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		pthread_mutex_lock(lock);
		(*n)++;
		pthread_cond_signal(cond);
		pthread_mutex_unlock(lock);
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "truth", required_argument, NULL, 't' },
		{ 0 }
	};
	const char *truth_path = NULL;
	struct heapq *q;
	int c, static_waits;
	FILE *f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'i')
			iters = atoi(optarg);
		else if (c == 't')
			truth_path = optarg;
		else
			return 2;
	}
	if (iters < 1)
		return 2;
	q = calloc(1, sizeof(*q));
	if (!q)
		return 1;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_mutex_init(&q->inner.mu, NULL);
	for (int i = 0; i < 4; i++)
		pthread_mutex_init(&q->slots[i].lock, NULL);
	contend(&table[3].lock, NULL, 0);
	contend(&outer.inner.mu, NULL, 0);
	produce(NULL);
	static_waits = atomic_exchange(&cond_waits, 0);
	contend(&q->lock, q, HEAP_LOCK);
	contend(&q->inner.mu, q, HEAP_INNER);
	contend(&q->slots[2].lock, q, HEAP_SLOT);
	contend(&q->slots[0].lock, NULL, 0);
	produce(q);
	f = truth_path ? fopen(truth_path, "w") : NULL;
	if (!f)
		return truth_path ? 1 : 0;
	fprintf(f, "{\"pid\": %d, \"iters\": %d, \"cond_waits\": %d, "
		"\"heap_cond_waits\": %d, "
		"\"objects\": {\"table[3].lock\": \"%p\", "
		"\"outer.inner.mu\": \"%p\", \"jobs.not_empty\": \"%p\", "
		"\"jobs.lock\": \"%p\"}, "
		"\"heap\": {\"(struct heapq *)->lock\": \"%p\", "
		"\"(struct heapq *)->inner.mu\": \"%p\", "
		"\"(struct heapq *)->slots[2].lock\": \"%p\", "
		"\"(struct heapq *)->not_empty\": \"%p\"}, "
		"\"untyped\": \"%p\"}\n", (int)getpid(), iters,
		static_waits, atomic_load(&cond_waits), (void *)&table[3].lock,
		(void *)&outer.inner.mu, (void *)&jobs.not_empty,
		(void *)&jobs.lock, (void *)&q->lock, (void *)&q->inner.mu,
		(void *)&q->slots[2].lock, (void *)&q->not_empty,
		(void *)&q->slots[0].lock);
	return fclose(f) ? 1 : 0;
}
