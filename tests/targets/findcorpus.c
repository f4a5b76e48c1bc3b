// SPDX-License-Identifier: GPL-2.0
/*
 * The findings' labelled corpus: small programs with one known thing
 * worth fixing (or none), each writing its own truth: the category, the
 * lock's name, the lines of the site to change (by __LINE__), and the
 * waits it timed itself.
 *
 *   kvstore  long-hold: getters take table_lock briefly; a stats reporter
 *            walks the table for --hold-ms while it holds it
 *   logger   long-hold: workers append under log_lock at two lines; a
 *            compactor holds it for --hold-ms each round
 *   stripes  hot-stripe: stripes[8].lock, most keys hash to stripes[3]
 *   buckets  hot-stripe: table[16].mu, every key lands in table[5]
 *   decoy    workers make items through items_lock (short holds, the
 *            item rate's bound); background threads fight over bg_lock
 *            with more wait in all, sleeping between rounds
 *   flusher  blocking-under-lock: workers append under journal_lock; a
 *            flusher sleeps --hold-ms (a slow sync) while it holds it
 *   resolver blocking-under-lock: a resolver reads an answer from a pipe
 *            (an answer --hold-ms away) while it holds cache_lock
 *   crowd    holder-preempted: more threads than CPUs compute under
 *            crowd_lock, and are preempted holding it
 *   barge    futile-wakeups: threads retake turn_lock as soon as they
 *            let it go; the waiters woken find it taken again
 *   counter  futile-wakeups: threads bump tally under tally_lock in a
 *            tight loop
 *   rwonly   wrong-primitive: config_lock, an rwlock every thread only
 *            ever write-locks
 *   spin     wrong-primitive: threads spin on spin_lock while its holder
 *            computes ~200 us
 *   sharded  tuned: each thread its own lock
 *   sparse   tuned: one lock, short holds, long work outside it
 *   queue    tuned: consumers idle on a condvar between items
 *   waitq    long-hold through a wait queue with a semaphore per waiter
 *            (PostgreSQL's LWLocks): each worker sleeps on its own
 *            wq_waiters[i].sem; the holder flushes for --hold-ms / 20
 *            and hands the lock to the next with sem_post
 *
 * findcorpus SCENARIO [--seconds S] [--hold-ms N] [--linger-ms N]
 *            [--truth FILE] [--wait-signal]
 *
 * --linger-ms: main stays N ms after its threads end (a program's
 * cleanup), so that the threads exit long before the process does.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <semaphore.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/targetkit.h"

static struct {
	double seconds;
	int hold_ms;
	int linger_ms;
	const char *truth;
} cfg = { .seconds = 2.0, .hold_ms = 80 };

static atomic_bool stop;
static _Atomic uint64_t items, waited_ns[2];

/* Computes for us microseconds of CPU (wall time, preemption included). */
static void compute_us(int us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000u;
	volatile uint64_t x = 0;

	while (now_ns() < end)
		x++;
}

/* Takes m, timing the wait into waited_ns[slot]. */
#define TIMED_LOCK(m, slot) do { \
	uint64_t t0_ = now_ns(); \
	pthread_mutex_lock(m); \
	atomic_fetch_add(&waited_ns[slot], now_ns() - t0_); \
} while (0)

static FILE *truth_open(void)
{
	FILE *f = cfg.truth ? fopen(cfg.truth, "w") : NULL;

	return f ? f : stdout;
}

static void truth_close(FILE *f)
{
	if (f != stdout)
		fclose(f);
}

/* --- kvstore --------------------------------------------------------- */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static long table[4096];
static int kv_lock_line, kv_unlock_line;

/*
 * The truth of a queue behind the reporter: each getter's waits and
 * each of the reporter's holds, as intervals; their overlap is the wait
 * the reporter's holds caused.
 */
#define KV_GETTERS 3
#define KV_WAITS 400000
#define KV_HOLDS 1000
struct span {
	uint64_t from, to;
};
static struct span kv_waits[KV_GETTERS][KV_WAITS], kv_holds[KV_HOLDS];
static size_t kv_n_waits[KV_GETTERS], kv_n_holds;
static atomic_bool kv_overflow;

static void *kv_getter(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	size_t me = (size_t)(uintptr_t)arg - 1;

	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns(), t1;

		pthread_mutex_lock(&table_lock);
		t1 = now_ns();
		atomic_fetch_add(&waited_ns[0], t1 - t0);
		if (kv_n_waits[me] < KV_WAITS)
			kv_waits[me][kv_n_waits[me]++] = (struct span){ t0, t1 };
		else
			atomic_store(&kv_overflow, true);
		(void)table[rand_r(&seed) % 4096];
		compute_us(2);
		pthread_mutex_unlock(&table_lock);
		atomic_fetch_add(&items, 1);
		compute_us(20);
	}
	return NULL;
}

static void *kv_reporter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t from;

		kv_lock_line = __LINE__; pthread_mutex_lock(&table_lock);
		from = now_ns();
		compute_us(cfg.hold_ms * 1000);	/* walks, sums, formats */
		if (kv_n_holds < KV_HOLDS)
			kv_holds[kv_n_holds++] = (struct span){ from, now_ns() };
		else
			atomic_store(&kv_overflow, true);
		kv_unlock_line = __LINE__; pthread_mutex_unlock(&table_lock);
		sleep_us(cfg.hold_ms * 1000 * 2);
	}
	return NULL;
}

/* --- logger ---------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[1 << 16];
static size_t log_len;
static int log_lock_line, log_unlock_line;

static void *log_worker(void *arg)
{
	int n = (int)(uintptr_t)arg;

	while (!atomic_load(&stop)) {
		if (n & 1) {
			TIMED_LOCK(&log_lock, 0);
			log_buf[log_len++ % sizeof(log_buf)] = 'a';
			pthread_mutex_unlock(&log_lock);
		} else {
			TIMED_LOCK(&log_lock, 0);
			log_buf[log_len++ % sizeof(log_buf)] = 'b';
			compute_us(1);
			pthread_mutex_unlock(&log_lock);
		}
		atomic_fetch_add(&items, 1);
		compute_us(15);
	}
	return NULL;
}

static void *log_compactor(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		sleep_us(cfg.hold_ms * 1000 * 2);
		log_lock_line = __LINE__; pthread_mutex_lock(&log_lock);
		compute_us(cfg.hold_ms * 1000);	/* compresses the buffer */
		log_len = 0;
		log_unlock_line = __LINE__; pthread_mutex_unlock(&log_lock);
	}
	return NULL;
}

/* --- stripes, buckets ------------------------------------------------ */

static struct stripe {
	pthread_mutex_t lock;
	long n;
} stripes[8];
static int stripe_line;

static void *stripe_worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!atomic_load(&stop)) {
		unsigned int key = (unsigned int)rand_r(&seed);
		/* A poor hash: 7 keys in 8 land on stripe 3. */
		struct stripe *s = &stripes[key % 8 ? 3 : key / 8 % 8];
		uint64_t t0 = now_ns();

		stripe_line = __LINE__; pthread_mutex_lock(&s->lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		s->n++;
		compute_us(10);
		pthread_mutex_unlock(&s->lock);
		atomic_fetch_add(&items, 1);
		compute_us(5);
	}
	return NULL;
}

static struct bucket {
	long count;
	pthread_mutex_t mu;
} buckets[16];
static int bucket_line;

static void *bucket_worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!atomic_load(&stop)) {
		/* Keys are multiples of 16 plus 5, mostly: one bucket. */
		unsigned int key = (unsigned int)rand_r(&seed) % 10 ?
				   16u * (unsigned int)rand_r(&seed) + 5 :
				   (unsigned int)rand_r(&seed);
		struct bucket *b = &buckets[key % 16];
		uint64_t t0 = now_ns();

		bucket_line = __LINE__; pthread_mutex_lock(&b->mu);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		b->count++;
		compute_us(8);
		pthread_mutex_unlock(&b->mu);
		atomic_fetch_add(&items, 1);
		compute_us(8);
	}
	return NULL;
}

/* --- decoy ----------------------------------------------------------- */

static pthread_mutex_t items_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;
static int items_lock_line, items_unlock_line;

static void *decoy_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		items_lock_line = __LINE__; pthread_mutex_lock(&items_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		compute_us(80);		/* the item's shared part */
		items_unlock_line = __LINE__; pthread_mutex_unlock(&items_lock);
		atomic_fetch_add(&items, 1);
		compute_us(10);
	}
	return NULL;
}

static void *decoy_background(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		TIMED_LOCK(&bg_lock, 1);
		compute_us(500);	/* housekeeping */
		pthread_mutex_unlock(&bg_lock);
		sleep_us(10000);	/* until the next round */
	}
	return NULL;
}

/* --- flusher, resolver ---------------------------------------------- */

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static int journal_lock_line, journal_unlock_line;
static long journal_n;

static void *journal_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		TIMED_LOCK(&journal_lock, 0);
		journal_n++;
		pthread_mutex_unlock(&journal_lock);
		atomic_fetch_add(&items, 1);
		compute_us(20);
	}
	return NULL;
}

static void *journal_flusher(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		sleep_us(cfg.hold_ms * 1000);
		journal_lock_line = __LINE__; pthread_mutex_lock(&journal_lock);
		usleep((useconds_t)cfg.hold_ms * 1000);	/* a slow sync */
		journal_unlock_line = __LINE__; pthread_mutex_unlock(&journal_lock);
	}
	return NULL;
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_lock_line, cache_unlock_line;
static int question_pipe[2], answer_pipe[2];	/* made by main */

static void *cache_reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		TIMED_LOCK(&cache_lock, 0);
		compute_us(2);
		pthread_mutex_unlock(&cache_lock);
		atomic_fetch_add(&items, 1);
		compute_us(20);
	}
	return NULL;
}

/* Answers each question --hold-ms after it was asked; ends on 'x'. */
static void *cache_upstream(void *arg)
{
	char c;

	(void)arg;
	while (read(question_pipe[0], &c, 1) == 1 && c == '?') {
		sleep_us(cfg.hold_ms * 1000);
		if (write(answer_pipe[1], "!", 1) != 1)
			break;
	}
	return NULL;
}

static void *cache_resolver(void *arg)
{
	pthread_t upstream;
	char c;

	(void)arg;
	pthread_create(&upstream, NULL, cache_upstream, NULL);
	while (!atomic_load(&stop)) {
		sleep_us(cfg.hold_ms * 1000);
		cache_lock_line = __LINE__; pthread_mutex_lock(&cache_lock);
		/* Asks upstream, and waits for the answer holding the lock. */
		if (write(question_pipe[1], "?", 1) != 1 ||
		    read(answer_pipe[0], &c, 1) != 1)
			atomic_store(&stop, true);
		cache_unlock_line = __LINE__; pthread_mutex_unlock(&cache_lock);
	}
	if (write(question_pipe[1], "x", 1) == 1)
		pthread_join(upstream, NULL);
	return NULL;
}

/* --- crowd ------------------------------------------------------------ */

static pthread_mutex_t crowd_lock = PTHREAD_MUTEX_INITIALIZER;
static int crowd_lock_line, crowd_unlock_line;

static void *crowd_worker(void *arg)
{
	cpu_set_t one;

	(void)arg;
	/* All on one CPU: more threads than CPUs however idle the machine,
	 * so a holder waits for the CPU while others compute. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		crowd_lock_line = __LINE__; pthread_mutex_lock(&crowd_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		compute_us(300);
		crowd_unlock_line = __LINE__; pthread_mutex_unlock(&crowd_lock);
		atomic_fetch_add(&items, 1);
		compute_us(300);
	}
	return NULL;
}

/* --- barge, counter --------------------------------------------------- */

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static int turn_lock_line;

static void *barge_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		turn_lock_line = __LINE__; pthread_mutex_lock(&turn_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		compute_us(30);
		pthread_mutex_unlock(&turn_lock);
		atomic_fetch_add(&items, 1);	/* and at once again */
	}
	return NULL;
}

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static int tally_lock_line;
static long tally;

static void *counter_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		tally_lock_line = __LINE__; pthread_mutex_lock(&tally_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		for (int i = 0; i < 200; i++)
			tally++;
		compute_us(15);
		pthread_mutex_unlock(&tally_lock);
		atomic_fetch_add(&items, 1);
	}
	return NULL;
}

/* --- rwonly, spin ----------------------------------------------------- */

static pthread_rwlock_t config_lock = PTHREAD_RWLOCK_INITIALIZER;
static int config_lock_line;
static long config_version;

static void *rwonly_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		config_lock_line = __LINE__; pthread_rwlock_wrlock(&config_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		config_version++;
		compute_us(30);
		pthread_rwlock_unlock(&config_lock);
		atomic_fetch_add(&items, 1);
		compute_us(30);
	}
	return NULL;
}

static pthread_spinlock_t spin_lock;
static int spin_lock_line;

static void *spin_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns();

		spin_lock_line = __LINE__; pthread_spin_lock(&spin_lock);
		atomic_fetch_add(&waited_ns[0], now_ns() - t0);
		compute_us(200);
		pthread_spin_unlock(&spin_lock);
		atomic_fetch_add(&items, 1);
		compute_us(50);
	}
	return NULL;
}

/* --- tuned ----------------------------------------------------------- */

static pthread_mutex_t own_locks[4] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};
static pthread_mutex_t sparse_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_ready = PTHREAD_COND_INITIALIZER;
static int q_len;

static void *sharded_worker(void *arg)
{
	pthread_mutex_t *m = &own_locks[(uintptr_t)arg % 4];

	while (!atomic_load(&stop)) {
		TIMED_LOCK(m, 0);
		compute_us(5);
		pthread_mutex_unlock(m);
		atomic_fetch_add(&items, 1);
		compute_us(5);
	}
	return NULL;
}

static void *sparse_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		TIMED_LOCK(&sparse_lock, 0);
		compute_us(1);
		pthread_mutex_unlock(&sparse_lock);
		atomic_fetch_add(&items, 1);
		compute_us(50);
		sleep_us(1000);		/* waits for its next request */
	}
	return NULL;
}

static void *q_consumer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&q_lock);
		while (!q_len && !atomic_load(&stop))
			pthread_cond_wait(&q_ready, &q_lock);
		if (q_len)
			q_len--;
		pthread_mutex_unlock(&q_lock);
		atomic_fetch_add(&items, 1);
		compute_us(50);
	}
	return NULL;
}

static void *q_producer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		sleep_us(5000);
		pthread_mutex_lock(&q_lock);
		q_len++;
		pthread_cond_signal(&q_ready);
		pthread_mutex_unlock(&q_lock);
	}
	pthread_mutex_lock(&q_lock);
	pthread_cond_broadcast(&q_ready);
	pthread_mutex_unlock(&q_lock);
	return NULL;
}

/* --- waitq ------------------------------------------------------------ */

#define WQ_WORKERS 4
static struct wq_waiter {
	sem_t sem;
} wq_waiters[WQ_WORKERS];
static pthread_mutex_t wq_mu = PTHREAD_MUTEX_INITIALIZER;
static bool wq_held;
static int wq_queue[WQ_WORKERS], wq_head, wq_len;
static int wq_post_line;

/* Takes the queue's lock: at once when free, else handed it asleep. */
static void wq_acquire(int me)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&wq_mu);
	if (!wq_held) {
		wq_held = true;
		pthread_mutex_unlock(&wq_mu);
		return;
	}
	wq_queue[(wq_head + wq_len++) % WQ_WORKERS] = me;
	pthread_mutex_unlock(&wq_mu);
	while (sem_wait(&wq_waiters[me].sem))
		;
	atomic_fetch_add(&waited_ns[0], now_ns() - t0);
}

/* Lets it go: to the first waiter, woken on its own semaphore. */
static void wq_release(void)
{
	int next;

	pthread_mutex_lock(&wq_mu);
	if (!wq_len) {
		wq_held = false;
		pthread_mutex_unlock(&wq_mu);
		return;
	}
	next = wq_queue[wq_head];
	wq_head = (wq_head + 1) % WQ_WORKERS;
	wq_len--;
	pthread_mutex_unlock(&wq_mu);
	wq_post_line = __LINE__; sem_post(&wq_waiters[next].sem);
}

static void *wq_worker(void *arg)
{
	int me = (int)(uintptr_t)arg - 1;

	while (!atomic_load(&stop)) {
		wq_acquire(me);
		compute_us(cfg.hold_ms * 1000 / 20);	/* the flush */
		wq_release();
		atomic_fetch_add(&items, 1);
		compute_us(200);
	}
	return NULL;
}

/* --- main ------------------------------------------------------------ */

struct scenario {
	const char *name;
	void *(*workers)(void *);
	int n_workers;
	void *(*other)(void *);
	int n_other;
};

static const struct scenario scenarios[] = {
	{ "kvstore", kv_getter, KV_GETTERS, kv_reporter, 1 },
	{ "logger", log_worker, 3, log_compactor, 1 },
	{ "stripes", stripe_worker, 4, NULL, 0 },
	{ "buckets", bucket_worker, 4, NULL, 0 },
	{ "decoy", decoy_worker, 3, decoy_background, 24 },
	{ "flusher", journal_worker, 3, journal_flusher, 1 },
	{ "resolver", cache_reader, 3, cache_resolver, 1 },
	{ "crowd", crowd_worker, 8, NULL, 0 },
	{ "barge", barge_worker, 4, NULL, 0 },
	{ "counter", counter_worker, 5, NULL, 0 },
	{ "rwonly", rwonly_worker, 3, NULL, 0 },
	{ "spin", spin_worker, 3, NULL, 0 },
	{ "sharded", sharded_worker, 4, NULL, 0 },
	{ "sparse", sparse_worker, 3, NULL, 0 },
	{ "queue", q_consumer, 3, q_producer, 1 },
	{ "waitq", wq_worker, WQ_WORKERS, NULL, 0 },
};

/*
 * The getters' waits that overlapped the reporter's holds, in all: each
 * hold from its start to its end (handoff false), or to the next
 * getter's acquisition after it (handoff true): the release wakes a
 * getter, which runs when the scheduler lets it (long, on a busy host),
 * and that wait is the hold's too.
 */
static uint64_t kv_overlap_ns(bool handoff)
{
	uint64_t sum = 0;

	for (size_t h = 0; h < kv_n_holds; h++) {
		uint64_t end = kv_holds[h].to;

		if (handoff) {
			uint64_t next = UINT64_MAX;

			for (size_t g = 0; g < KV_GETTERS; g++)
				for (size_t i = 0; i < kv_n_waits[g]; i++)
					if (kv_waits[g][i].to > end &&
					    kv_waits[g][i].to < next)
						next = kv_waits[g][i].to;
			if (next != UINT64_MAX)
				end = next;
		}
		for (size_t g = 0; g < KV_GETTERS; g++)
			for (size_t i = 0; i < kv_n_waits[g]; i++) {
				const struct span *w = &kv_waits[g][i];
				uint64_t from = w->from > kv_holds[h].from ?
						w->from : kv_holds[h].from;
				uint64_t to = w->to < end ? w->to : end;

				if (to > from)
					sum += to - from;
			}
	}
	return sum;
}

static void write_truth(const struct scenario *sc, double secs)
{
	FILE *f = truth_open();

	fprintf(f, "{\"scenario\": \"%s\", \"seconds\": %.3f, \"items\": %llu, "
		"\"workers\": %d, \"waited_ns\": %llu, \"other_waited_ns\": %llu, ",
		sc->name, secs, (unsigned long long)atomic_load(&items),
		sc->n_workers,
		(unsigned long long)atomic_load(&waited_ns[0]),
		(unsigned long long)atomic_load(&waited_ns[1]));
	if (!strcmp(sc->name, "kvstore"))
		fprintf(f, "\"category\": \"long-hold\", \"object\": \"table_lock\", "
			"\"lines\": [%d, %d], \"overlap_ns\": %llu, "
			"\"handoff_overlap_ns\": %llu, "
			"\"holds\": %zu, \"overflow\": %s",
			kv_lock_line, kv_unlock_line,
			(unsigned long long)kv_overlap_ns(false),
			(unsigned long long)kv_overlap_ns(true), kv_n_holds,
			atomic_load(&kv_overflow) ? "true" : "false");
	else if (!strcmp(sc->name, "logger"))
		fprintf(f, "\"category\": \"long-hold\", \"object\": \"log_lock\", "
			"\"lines\": [%d, %d]", log_lock_line, log_unlock_line);
	else if (!strcmp(sc->name, "stripes"))
		fprintf(f, "\"category\": \"hot-stripe\", "
			"\"object\": \"stripes[3].lock\", \"lines\": [%d], "
			"\"hot_n\": %ld", stripe_line, stripes[3].n);
	else if (!strcmp(sc->name, "buckets"))
		fprintf(f, "\"category\": \"hot-stripe\", "
			"\"object\": \"buckets[5].mu\", \"lines\": [%d], "
			"\"hot_n\": %ld", bucket_line, buckets[5].count);
	else if (!strcmp(sc->name, "decoy"))
		fprintf(f, "\"category\": \"long-hold\", \"object\": \"items_lock\", "
			"\"lines\": [%d, %d], \"decoy\": \"bg_lock\"",
			items_lock_line, items_unlock_line);
	else if (!strcmp(sc->name, "flusher"))
		fprintf(f, "\"category\": \"blocking-under-lock\", "
			"\"object\": \"journal_lock\", \"lines\": [%d, %d]",
			journal_lock_line, journal_unlock_line);
	else if (!strcmp(sc->name, "resolver"))
		fprintf(f, "\"category\": \"blocking-under-lock\", "
			"\"object\": \"cache_lock\", \"lines\": [%d, %d]",
			cache_lock_line, cache_unlock_line);
	else if (!strcmp(sc->name, "crowd"))
		fprintf(f, "\"category\": \"holder-preempted\", "
			"\"object\": \"crowd_lock\", \"lines\": [%d, %d]",
			crowd_lock_line, crowd_unlock_line);
	else if (!strcmp(sc->name, "barge"))
		fprintf(f, "\"category\": \"futile-wakeups\", "
			"\"object\": \"turn_lock\", \"lines\": [%d]",
			turn_lock_line);
	else if (!strcmp(sc->name, "counter"))
		fprintf(f, "\"category\": \"futile-wakeups\", "
			"\"object\": \"tally_lock\", \"lines\": [%d]",
			tally_lock_line);
	else if (!strcmp(sc->name, "rwonly"))
		fprintf(f, "\"category\": \"wrong-primitive\", "
			"\"object\": \"config_lock\", \"lines\": [%d]",
			config_lock_line);
	else if (!strcmp(sc->name, "spin"))
		fprintf(f, "\"category\": \"wrong-primitive\", "
			"\"object\": \"spin_lock\", \"lines\": [%d]",
			spin_lock_line);
	else if (!strcmp(sc->name, "waitq"))
		fprintf(f, "\"category\": \"long-hold\", "
			"\"object\": \"wq_waiters\", \"lines\": [%d], "
			"\"objects\": %d", wq_post_line, WQ_WORKERS);
	else
		fprintf(f, "\"category\": null");
	fprintf(f, "}\n");
	truth_close(f);
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "truth", required_argument, NULL, 't' },
		{ "linger-ms", required_argument, NULL, 'L' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const struct scenario *sc = NULL;
	pthread_t threads[32];
	bool wait_signal = false;
	int opt, n = 0;
	uint64_t t0;

	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case 's': cfg.seconds = atof(optarg); break;
		case 'H': cfg.hold_ms = atoi(optarg); break;
		case 'L': cfg.linger_ms = atoi(optarg); break;
		case 't': cfg.truth = optarg; break;
		case 'w': wait_signal = true; break;
		default: return 2;
		}
	}
	for (size_t i = 0; optind < argc &&
	     i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[optind], scenarios[i].name))
			sc = &scenarios[i];
	if (!sc) {
		fprintf(stderr, "findcorpus: give a scenario: kvstore, logger, "
			"stripes, buckets, decoy, flusher, resolver, crowd, "
			"barge, counter, rwonly, spin, sharded, sparse, queue, "
			"waitq\n");
		return 2;
	}
	if (pipe(question_pipe) || pipe(answer_pipe) ||
	    pthread_spin_init(&spin_lock, PTHREAD_PROCESS_PRIVATE))
		return 1;
	for (int i = 0; i < 8; i++)
		pthread_mutex_init(&stripes[i].lock, NULL);
	for (int i = 0; i < 16; i++)
		pthread_mutex_init(&buckets[i].mu, NULL);
	for (int i = 0; i < WQ_WORKERS; i++)
		if (sem_init(&wq_waiters[i].sem, 0, 0))
			return 1;
	if (wait_signal)
		wait_for_go();
	t0 = now_ns();
	for (int i = 0; i < sc->n_workers; i++)
		pthread_create(&threads[n++], NULL, sc->workers,
			       (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < sc->n_other; i++)
		pthread_create(&threads[n++], NULL, sc->other,
			       (void *)(uintptr_t)(i + 100));
	sleep_us((int)(cfg.seconds * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	if (cfg.linger_ms)
		sleep_us(cfg.linger_ms * 1000);
	write_truth(sc, (double)(now_ns() - t0) * 1e-9);
	return 0;
}
