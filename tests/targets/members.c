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

static int iters = 5;
static atomic_int waiter_tid;
static atomic_int consumed, cond_waits;

/* One lock made to block: the holder lets go once the waiter sleeps. */
struct contention {
	pthread_mutex_t *lock;
	atomic_int round;	/* the holder holds the lock for this round */
	atomic_int done;	/* the waiter's last round */
};

static void *lock_waiter(void *arg)
{
	struct contention *c = arg;

	atomic_store(&waiter_tid, (int)gettid());
	for (int i = 1; i <= iters; i++) {
		while (atomic_load(&c->round) < i)
			sleep_us(100);
		pthread_mutex_lock(c->lock); /* CALLSITE:member_lock */
		pthread_mutex_unlock(c->lock);
		atomic_store(&c->done, i);
	}
	return NULL;
}

static void contend(pthread_mutex_t *lock)
{
	struct contention c = { .lock = lock };
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

static void *consumer(void *arg)
{
	(void)arg;
	atomic_store(&waiter_tid, (int)gettid());
	pthread_mutex_lock(&jobs.lock);
	for (int i = 0; i < iters; i++) {
		while (!jobs.n) {
			atomic_fetch_add(&cond_waits, 1);
			pthread_cond_wait(&jobs.not_empty, &jobs.lock); /* CALLSITE:member_wait */
		}
		jobs.n--;
		atomic_fetch_add(&consumed, 1);
	}
	pthread_mutex_unlock(&jobs.lock);
	return NULL;
}

static void produce(void)
{
	pthread_t t;

	atomic_store(&waiter_tid, 0);
	if (pthread_create(&t, NULL, consumer, NULL))
		exit(1);
	while (!atomic_load(&waiter_tid))
		sleep_us(100);
	for (int i = 0; i < iters; i++) {
		/* Wait until it sleeps on the condvar (it holds no lock then). */
		while (atomic_load(&consumed) < i)
			sleep_us(100);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		pthread_mutex_lock(&jobs.lock);
		jobs.n++;
		pthread_cond_signal(&jobs.not_empty);
		pthread_mutex_unlock(&jobs.lock);
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
	FILE *f;
	int c;

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
	contend(&table[3].lock);
	contend(&outer.inner.mu);
	produce();
	f = truth_path ? fopen(truth_path, "w") : NULL;
	if (!f)
		return truth_path ? 1 : 0;
	fprintf(f, "{\"pid\": %d, \"iters\": %d, \"cond_waits\": %d, "
		"\"objects\": {\"table[3].lock\": \"%p\", "
		"\"outer.inner.mu\": \"%p\", \"jobs.not_empty\": \"%p\", "
		"\"jobs.lock\": \"%p\"}}\n", (int)getpid(), iters,
		atomic_load(&cond_waits), (void *)&table[3].lock,
		(void *)&outer.inner.mu, (void *)&jobs.not_empty,
		(void *)&jobs.lock);
	return fclose(f) ? 1 : 0;
}
