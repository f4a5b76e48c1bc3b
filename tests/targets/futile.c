// SPDX-License-Identifier: GPL-2.0
/*
 * A target for futile wakeups (docs/why.md): threads that count their own
 * wakeups for nothing.  The ground truth goes to --truth FILE as JSON.
 *
 *   futile SCENARIO [--threads N] [--rounds N] [--hold-us N]
 *          [--truth FILE] [--wait-signal]
 *
 * Scenarios:
 *   condvar  --threads consumers wait on one condvar in a predicate loop
 *            (CALLSITE:cond_wait); a producer puts one item and
 *            broadcasts, --rounds times, each time once every consumer
 *            sleeps in its wait.  One consumer takes the item (and lets
 *            the mutex go and takes it again); each other one finds the
 *            predicate still false and waits again at once, holding the
 *            mutex: it counts that futile return.  Truth: cond, mutex,
 *            futile (all consumers), per_thread {TID: futile}.
 *   barge    --threads threads, started together once all exist, take
 *            one mutex --rounds times each
 *            (CALLSITE:barge_lock), hold it --hold-us (spinning, once
 *            another thread sleeps on it) and take it again right after
 *            the unlock, before the waiter the unlock woke runs: glibc's
 *            mutex lets them barge.  Each thread counts its voluntary
 *            context switches (getrusage(RUSAGE_THREAD)) around every
 *            lock call: a call that slept n times was woken n - 1 times
 *            for nothing.  Truth: mutex, futile_sleeps (the sum of
 *            n - 1), unlocks (every unlock: each wakes one waiter at
 *            most, so no more wakeups can be futile).
 *   sem      the same with a semaphore of one token for the mutex:
 *            sem_wait (CALLSITE:sem_wait), sem_post; a waker's sem_post
 *            wakes one waiter, whose token the poster takes back first.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>

#include "lib/targetkit.h"

#define MAX_THREADS 16

static struct {
	int threads;
	int rounds;
	int hold_us;
} cfg = { .threads = 4, .rounds = 30, .hold_us = 200 };

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t sem;		/* sem: one token */
static bool use_sem;

static struct {
	int tid[MAX_THREADS];
	uint64_t futile[MAX_THREADS];
	uint64_t unlocks;
} truth;

/* condvar: the shared state, under mutex. */
static int items;
static bool done;
static atomic_int consumed;
static atomic_int started;

static void *consumer(void *arg)
{
	int me = (int)(intptr_t)arg;

	truth.tid[me] = (int)syscall(SYS_gettid);
	atomic_fetch_add(&started, 1);
	pthread_mutex_lock(&mutex);
	for (;;) {
		while (!items && !done) {
			pthread_cond_wait(&cond, &mutex); /* CALLSITE:cond_wait */
			if (!items && !done)
				truth.futile[me]++;
		}
		if (!items)
			break;		/* done */
		items--;
		atomic_fetch_add(&consumed, 1);
		/* As a consumer does its work: without the mutex. */
		pthread_mutex_unlock(&mutex);
		pthread_mutex_lock(&mutex);
	}
	pthread_mutex_unlock(&mutex);
	return NULL;
}

/* Every consumer sleeps in its condvar wait (a second at most each). */
static void consumers_asleep(void)
{
	for (int i = 0; i < cfg.threads; i++)
		wait_blocked_in_futex_within(truth.tid[i], &cond, sizeof(cond));
}

static void run_condvar(void)
{
	pthread_t th[MAX_THREADS];

	for (int i = 0; i < cfg.threads; i++)
		pthread_create(&th[i], NULL, consumer, (void *)(intptr_t)i);
	while (atomic_load(&started) < cfg.threads)
		sleep_us(100);
	for (int round = 1; round <= cfg.rounds; round++) {
		consumers_asleep();
		pthread_mutex_lock(&mutex);
		items = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&mutex);
		while (atomic_load(&consumed) < round)
			sleep_us(100);
	}
	consumers_asleep();
	pthread_mutex_lock(&mutex);
	done = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mutex);
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(th[i], NULL);
}

/* barge: the threads still taking the mutex; set once all are created. */
static atomic_int barging;
static atomic_bool barge_go;

static long nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * Another thread sleeps on the mutex or the semaphore (a second at
 * most), if any is left.
 */
static void someone_asleep(int me)
{
	const void *lock = use_sem ? (const void *)&sem : (const void *)&mutex;
	size_t len = use_sem ? sizeof(sem) : sizeof(mutex);

	for (int spent = 0; spent < 1000000 && atomic_load(&barging) > 1;
	     spent += 50) {
		for (int i = 0; i < cfg.threads; i++)
			if (i != me && truth.tid[i] &&
			    thread_in_futex_within(truth.tid[i], lock, len))
				return;
		sleep_us(50);
	}
}

static void *barger(void *arg)
{
	int me = (int)(intptr_t)arg;

	truth.tid[me] = (int)syscall(SYS_gettid);
	/*
	 * Every thread created first: a thread's stack is mapped with the
	 * address space's lock held for writing, and a lock call that ran
	 * into it (its probe, a page fault) would sleep once more.
	 */
	while (!atomic_load(&barge_go))
		sleep_us(100);
	for (int round = 0; round < cfg.rounds; round++) {
		long before = nvcsw(), slept;
		uint64_t until;

		if (use_sem)
			sem_wait(&sem); /* CALLSITE:sem_wait */
		else
			pthread_mutex_lock(&mutex); /* CALLSITE:barge_lock */
		slept = nvcsw() - before;
		if (slept > 1)
			truth.futile[me] += (uint64_t)(slept - 1);
		someone_asleep(me);
		until = now_ns() + (uint64_t)cfg.hold_us * 1000;
		while (now_ns() < until)
			;
		__atomic_fetch_add(&truth.unlocks, 1, __ATOMIC_RELAXED);
		if (use_sem)
			sem_post(&sem);
		else
			pthread_mutex_unlock(&mutex);
	}
	atomic_fetch_sub(&barging, 1);
	return NULL;
}

static void run_barge(void)
{
	pthread_t th[MAX_THREADS];

	/*
	 * A profiler's first probe hit on a function may map the kernel's
	 * page for stepping over the probed instruction, holding the
	 * address space's lock for writing: done here, not in a measured
	 * call.
	 */
	sem_wait(&sem);
	sem_post(&sem);
	pthread_mutex_lock(&mutex);
	pthread_mutex_unlock(&mutex);
	atomic_store(&barging, cfg.threads);
	for (int i = 0; i < cfg.threads; i++)
		pthread_create(&th[i], NULL, barger, (void *)(intptr_t)i);
	atomic_store(&barge_go, true);
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(th[i], NULL);
}

static void write_truth(const char *path, bool barge)
{
	uint64_t total = 0;
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	for (int i = 0; i < cfg.threads; i++)
		total += truth.futile[i];
	fprintf(f, "{\"cond\": \"%p\", \"mutex\": \"%p\", \"sem\": \"%p\", ",
		(void *)&cond, (void *)&mutex, (void *)&sem);
	if (barge)
		fprintf(f, "\"futile_sleeps\": %llu, \"unlocks\": %llu, ",
			(unsigned long long)total,
			(unsigned long long)truth.unlocks);
	else
		fprintf(f, "\"futile\": %llu, ", (unsigned long long)total);
	fprintf(f, "\"per_thread\": {");
	for (int i = 0; i < cfg.threads; i++)
		fprintf(f, "%s\"%d\": %llu", i ? ", " : "", truth.tid[i],
			(unsigned long long)truth.futile[i]);
	fprintf(f, "}}\n");
	fclose(f);
}

static void usage(void)
{
	fprintf(stderr, "usage: futile condvar|barge|sem [--threads N] "
		"[--rounds N] [--hold-us N] [--truth FILE] [--wait-signal]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, 0, 'n' },
		{ "rounds", required_argument, 0, 'r' },
		{ "hold-us", required_argument, 0, 'h' },
		{ "truth", required_argument, 0, 't' },
		{ "wait-signal", no_argument, 0, 'w' },
		{ 0 },
	};
	const char *truth_path = NULL, *scenario;
	bool wait_signal = false, barge;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': cfg.threads = atoi(optarg); break;
		case 'r': cfg.rounds = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 't': truth_path = optarg; break;
		case 'w': wait_signal = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || cfg.threads < 2 ||
	    cfg.threads > MAX_THREADS || cfg.rounds < 1)
		usage();
	scenario = argv[optind];
	use_sem = !strcmp(scenario, "sem");
	barge = use_sem || !strcmp(scenario, "barge");
	if (!barge && strcmp(scenario, "condvar"))
		usage();
	sem_init(&sem, 0, 1);
	if (wait_signal)
		wait_for_go();
	if (barge)
		run_barge();
	else
		run_condvar();
	if (truth_path)
		write_truth(truth_path, barge);
	return 0;
}
