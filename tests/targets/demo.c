// SPDX-License-Identifier: GPL-2.0
/*
 * demo: the workload `make demo` profiles -- a toy job server with real
 * lock contention, so that syncprof has something interesting to show.
 *
 *   demo [WORKERS [SECONDS]]     (default: 4 workers, run until SIGINT/SIGTERM)
 *
 * One producer pushes jobs in bursts into a small bounded queue; WORKERS
 * threads pop and run them; a housekeeping thread ticks every 50 ms.
 * The locks it contends:
 *   queue.lock + not_empty/not_full  producer and workers (mutex_lock and
 *                  cond_wait on both sides; the queue holds 4, bursts are 8)
 *   stats_lock     every worker, briefly, after each job (and for 1 ms every
 *                  64th job); housekeeping reads it
 *   cache_lock     PTHREAD_MUTEX_RECURSIVE; cache_get() takes it and, on a
 *                  miss, computes the entry under it and calls cache_put(),
 *                  which takes it again
 *   buckets[8]     heap-allocated, one mutex each, all locked at ONE call
 *                  site (bucket_add) by index: one "[8]" row when coalesced,
 *                  8 rows with --no-coalesce, bucket 0 the hot one
 *   flush_lock     workers pthread_mutex_trylock() it to flush now and then
 *                  and skip when busy; housekeeping holds it with a plain lock
 *   house_lock + house_cond  pthread_cond_timedwait() with a 50 ms timeout;
 *                  a worker that skipped a flush signals it early
 * About 400 jobs/s, i.e. roughly 2,500-3,500 probed calls/s in all.
 *
 * SIGINT, SIGTERM or SIGHUP (or the end of SECONDS) stops it cleanly:
 * the queue drains, every thread is joined, a summary goes to stderr and
 * it exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS	64
#define QUEUE_CAP	4	/* small, so the producer waits for room too */
#define BURST		8	/* jobs per producer burst */
#define BURST_MS	20	/* one burst every 20 ms: 400 jobs/s */
#define N_BUCKETS	8
#define CACHE_SLOTS	64
#define N_KEYS		128
#define FLUSH_EVERY	16	/* a worker tries to flush every 16 jobs */
#define TICK_MS		50	/* housekeeping timeout */

struct job {
	uint64_t id;
	unsigned key;		/* cache key */
	unsigned bucket;
	unsigned work_us;	/* simulated work, outside any lock */
};

struct bucket {
	pthread_mutex_t lock;
	uint64_t items, sum;
	char pad[64];		/* keep the buckets on their own lines */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	struct job jobs[QUEUE_CAP];
	unsigned head, len;
	bool closed;
} queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER,
};

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t jobs, work_us, cache_hits, cache_misses;
	uint64_t flushes, flushes_skipped;
} stats;

static pthread_mutex_t cache_lock;	/* recursive, set up in main() */
static struct {
	bool valid;
	unsigned key;
	uint64_t value;
} cache[CACHE_SLOTS];

static struct bucket *buckets[N_BUCKETS];

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t flushed_items;

static pthread_mutex_t house_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t house_cond = PTHREAD_COND_INITIALIZER;
static bool house_stop, house_kick;

static atomic_bool stopping;

static uint32_t rnd(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burn CPU for about us microseconds: work done while holding a lock. */
static void spin_us(unsigned us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000;

	while (now_ns() < end)
		;
}

/* Sleep for about us microseconds: work done outside any lock. */
static void sleep_us(unsigned us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- queue -------------------------------------------------------- */

static __attribute__((noinline)) bool queue_push(const struct job *job)
{
	bool ok = false;

	pthread_mutex_lock(&queue.lock);
	while (queue.len == QUEUE_CAP && !queue.closed)
		pthread_cond_wait(&queue.not_full, &queue.lock);
	if (!queue.closed) {
		queue.jobs[(queue.head + queue.len) % QUEUE_CAP] = *job;
		queue.len++;
		pthread_cond_signal(&queue.not_empty);
		ok = true;
	}
	pthread_mutex_unlock(&queue.lock);
	return ok;
}

/* False once the queue is closed and drained. */
static __attribute__((noinline)) bool queue_pop(struct job *job)
{
	bool ok = false;

	pthread_mutex_lock(&queue.lock);
	while (queue.len == 0 && !queue.closed)
		pthread_cond_wait(&queue.not_empty, &queue.lock);
	if (queue.len > 0) {
		*job = queue.jobs[queue.head];
		queue.head = (queue.head + 1) % QUEUE_CAP;
		queue.len--;
		pthread_cond_signal(&queue.not_full);
		ok = true;
	}
	pthread_mutex_unlock(&queue.lock);
	return ok;
}

static void queue_close(void)
{
	pthread_mutex_lock(&queue.lock);
	queue.closed = true;
	pthread_cond_broadcast(&queue.not_empty);
	pthread_cond_broadcast(&queue.not_full);
	pthread_mutex_unlock(&queue.lock);
}

/* ---- cache (recursive mutex) --------------------------------------- */

static __attribute__((noinline)) void cache_put(unsigned key, uint64_t value)
{
	unsigned slot = key % CACHE_SLOTS;

	pthread_mutex_lock(&cache_lock);
	cache[slot].valid = true;
	cache[slot].key = key;
	cache[slot].value = value;
	pthread_mutex_unlock(&cache_lock);
}

static __attribute__((noinline)) uint64_t cache_get(unsigned key, bool *hit)
{
	unsigned slot = key % CACHE_SLOTS;
	uint64_t value;

	pthread_mutex_lock(&cache_lock);
	*hit = cache[slot].valid && cache[slot].key == key;
	if (*hit) {
		value = cache[slot].value;
	} else {
		/* Computed under the lock: the classic mistake. */
		spin_us(200);
		value = (uint64_t)key * 2654435761u;
		cache_put(key, value);		/* re-entrant lock */
	}
	pthread_mutex_unlock(&cache_lock);
	return value;
}

/* Housekeeping drops a few entries each tick, so the misses keep coming. */
static __attribute__((noinline)) void cache_expire(uint32_t *seed)
{
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < CACHE_SLOTS / 8; i++)
		cache[rnd(seed) % CACHE_SLOTS].valid = false;
	pthread_mutex_unlock(&cache_lock);
}

/* ---- per-bucket mutexes ------------------------------------------- */

static __attribute__((noinline)) void bucket_add(unsigned idx, uint64_t value)
{
	struct bucket *b = buckets[idx];

	pthread_mutex_lock(&b->lock);		/* the one call site */
	spin_us(150);
	b->items++;
	b->sum += value;
	pthread_mutex_unlock(&b->lock);
}

/* ---- stats and flushing -------------------------------------------- */

static __attribute__((noinline)) void stats_record(unsigned work_us, bool hit)
{
	pthread_mutex_lock(&stats_lock);
	spin_us(40);
	if (++stats.jobs % 64 == 0)
		spin_us(1000);		/* recompute the percentiles, locked */
	stats.work_us += work_us;
	if (hit)
		stats.cache_hits++;
	else
		stats.cache_misses++;
	pthread_mutex_unlock(&stats_lock);
}

static __attribute__((noinline)) void stats_count_flush(bool done)
{
	pthread_mutex_lock(&stats_lock);
	if (done)
		stats.flushes++;
	else
		stats.flushes_skipped++;
	pthread_mutex_unlock(&stats_lock);
}

/* A flush was skipped: ask housekeeping to run before its next tick. */
static __attribute__((noinline)) void kick_housekeeper(void)
{
	pthread_mutex_lock(&house_lock);
	house_kick = true;
	pthread_cond_signal(&house_cond);
	pthread_mutex_unlock(&house_lock);
}

/* Opportunistic: if somebody else is flushing, there is no need to. */
static __attribute__((noinline)) void try_flush(void)
{
	if (pthread_mutex_trylock(&flush_lock)) {
		stats_count_flush(false);
		kick_housekeeper();
		return;
	}
	spin_us(500);
	flushed_items += BURST;
	pthread_mutex_unlock(&flush_lock);
	stats_count_flush(true);
}

/* Housekeeping must flush: it waits for the lock. */
static __attribute__((noinline)) void flush_all(void)
{
	pthread_mutex_lock(&flush_lock);
	spin_us(3000);
	flushed_items++;
	pthread_mutex_unlock(&flush_lock);
}

static __attribute__((noinline)) uint64_t stats_snapshot(void)
{
	uint64_t jobs;

	pthread_mutex_lock(&stats_lock);
	spin_us(30);
	jobs = stats.jobs;
	pthread_mutex_unlock(&stats_lock);
	return jobs;
}

/* ---- threads ------------------------------------------------------- */

/* Half the jobs hit bucket 0, a hot key; the rest spread evenly. */
static unsigned pick_bucket(uint32_t *seed)
{
	uint32_t r = rnd(seed);

	return r & 1 ? 0 : (r >> 1) % N_BUCKETS;
}

static void *producer(void *arg)
{
	uint32_t seed = 0x9e3779b9u;
	uint64_t id = 0;

	(void)arg;
	while (!atomic_load(&stopping)) {
		for (int i = 0; i < BURST; i++) {
			struct job job = {
				.id = id++,
				.key = rnd(&seed) % N_KEYS,
				.bucket = pick_bucket(&seed),
				.work_us = 1000 + rnd(&seed) % 1000,
			};

			if (!queue_push(&job))
				return NULL;
		}
		sleep_us(BURST_MS * 1000);
	}
	return NULL;
}

static void *worker(void *arg)
{
	unsigned done = 0;
	struct job job;
	bool hit;

	(void)arg;
	while (queue_pop(&job)) {
		sleep_us(job.work_us);
		uint64_t v = cache_get(job.key, &hit);
		bucket_add(job.bucket, v + job.id);
		stats_record(job.work_us, hit);
		if (++done % FLUSH_EVERY == 0)
			try_flush();
	}
	return NULL;
}

static void *housekeeper(void *arg)
{
	uint32_t seed = 0x2545f491u;
	struct timespec deadline;

	(void)arg;
	pthread_mutex_lock(&house_lock);
	while (!house_stop) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += TICK_MS * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		int err = 0;

		while (!house_kick && !house_stop && err != ETIMEDOUT)
			err = pthread_cond_timedwait(&house_cond, &house_lock,
						     &deadline);
		if (house_stop)
			break;
		house_kick = false;
		pthread_mutex_unlock(&house_lock);
		flush_all();
		cache_expire(&seed);
		(void)stats_snapshot();
		pthread_mutex_lock(&house_lock);
	}
	pthread_mutex_unlock(&house_lock);
	return NULL;
}

/* ---- main ---------------------------------------------------------- */

static unsigned parse_uint(const char *s, const char *what, unsigned max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > (long)max) {
		fprintf(stderr, "demo: bad %s '%s' (1..%u)\n", what, s, max);
		exit(2);
	}
	return (unsigned)v;
}

static void start_thread(pthread_t *t, void *(*fn)(void *))
{
	int err = pthread_create(t, NULL, fn, NULL);

	if (err) {
		fprintf(stderr, "demo: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	pthread_t prod, house, workers[MAX_WORKERS];
	pthread_mutexattr_t attr;
	unsigned n_workers = 4, seconds = 0;
	struct timespec timeout;
	sigset_t sigs;
	uint64_t start;
	int sig;

	if (argc > 3) {
		fprintf(stderr, "usage: %s [WORKERS [SECONDS]]\n", argv[0]);
		return 2;
	}
	if (argc > 1)
		n_workers = parse_uint(argv[1], "worker count", MAX_WORKERS);
	if (argc > 2)
		seconds = parse_uint(argv[2], "duration", 86400);

	/* Every thread inherits this mask; main alone takes the signals. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&cache_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	for (int i = 0; i < N_BUCKETS; i++) {
		buckets[i] = calloc(1, sizeof(*buckets[i]));
		if (!buckets[i]) {
			perror("demo: calloc");
			return 1;
		}
		pthread_mutex_init(&buckets[i]->lock, NULL);
	}

	fprintf(stderr, "demo: %u workers, pid %d\n", n_workers, (int)getpid());
	start = now_ns();
	for (unsigned i = 0; i < n_workers; i++)
		start_thread(&workers[i], worker);
	start_thread(&house, housekeeper);
	start_thread(&prod, producer);

	/* Wait for a signal, or for the duration to pass. */
	if (seconds) {
		timeout.tv_sec = seconds;
		timeout.tv_nsec = 0;
		do
			sig = sigtimedwait(&sigs, NULL, &timeout);
		while (sig < 0 && errno == EINTR);
	} else {
		while (sigwait(&sigs, &sig))
			;
	}

	/* Stop the producer, let the workers drain the queue, then stop. */
	atomic_store(&stopping, true);
	queue_close();
	pthread_join(prod, NULL);
	for (unsigned i = 0; i < n_workers; i++)
		pthread_join(workers[i], NULL);
	pthread_mutex_lock(&house_lock);
	house_stop = true;
	pthread_cond_signal(&house_cond);
	pthread_mutex_unlock(&house_lock);
	pthread_join(house, NULL);

	double secs = (double)(now_ns() - start) / 1e9;

	for (int i = 0; i < N_BUCKETS; i++) {
		pthread_mutex_destroy(&buckets[i]->lock);
		free(buckets[i]);
	}
	pthread_mutex_destroy(&cache_lock);
	fprintf(stderr,
		"demo: %llu jobs done in %.1f s (%.0f/s), cache hits %llu/%llu, "
		"flushes %llu, skipped %llu\n",
		(unsigned long long)stats.jobs, secs,
		secs > 0 ? (double)stats.jobs / secs : 0.0,
		(unsigned long long)stats.cache_hits,
		(unsigned long long)(stats.cache_hits + stats.cache_misses),
		(unsigned long long)stats.flushes,
		(unsigned long long)stats.flushes_skipped);
	return 0;
}
