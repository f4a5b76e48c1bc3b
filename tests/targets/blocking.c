// SPDX-License-Identifier: GPL-2.0
/*
 * A target for contended mode's tests: every measured acquisition blocks
 * in the kernel exactly once, so the count it reports is exact.  A holder
 * takes the object, says so through an atomic flag (polled with
 * nanosleep, never a futex), waits until the waiter sits in the futex
 * call, and keeps it --hold-us more; the waiter, told, calls the lock
 * function between two clock_gettime(CLOCK_MONOTONIC) reads.  The ground truth goes to --truth FILE as JSON.
 *
 *   blocking SCENARIO [--iters N] [--hold-us N] [--threads N]
 *            [--truth FILE] [--wait-signal]
 *
 * Scenarios: mutex, recursive, condvar (the waiter blocks for the signal,
 * then again taking the mutex back: the signaller holds it --hold-us
 * after signalling), rwlock-r, rwlock-w, sem, futex (a lock of its own on
 * syscall(SYS_futex)), futex2 (the same lock on futex2's futex_wait and
 * futex_wake, Linux 6.7), stdio (glibc's FILE lock, via flockfile and
 * fputs), uncontended (--threads threads each lock their own mutex
 * --iters times and nothing ever blocks: the process makes no futex
 * call at all).
 */
#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/targetkit.h"

#define MAX_THREADS 16

static struct {
	int iters;
	int hold_us;
	int threads;
} cfg = { .iters = 40, .hold_us = 3000, .threads = 4 };

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec_lock;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static atomic_int futex_word;
static FILE *stream;
static pthread_mutex_t own_locks[MAX_THREADS];

static atomic_int held;		/* iteration the holder holds for */
static atomic_int done;		/* iteration the waiter finished */
static atomic_int ready;	/* condvar: iteration the waiter waits in */
static int generation;		/* condvar: under cond_lock */
static atomic_int finished;	/* uncontended: workers done */

static const char *scenario;
static uint64_t wait_ns, count;
static pid_t waiter_tid, holder_tid;

/* Polls without a futex: the measured objects are the only ones. */
static void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(50);
}

static void measured(uint64_t t0)
{
	wait_ns += now_ns() - t0;
	count++;
}

/* Each waiter's call is in a function of its own, marked for the tests. */
__attribute__((noinline)) static void wait_mutex(pthread_mutex_t *m)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(m); /* CALLSITE:blocking_mutex */
	measured(t0);
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) static void wait_cond(int iteration)
{
	uint64_t t0;

	pthread_mutex_lock(&cond_lock);
	atomic_store(&ready, iteration);
	t0 = now_ns();
	while (generation < iteration)
		pthread_cond_wait(&cond, &cond_lock); /* CALLSITE:blocking_cond */
	measured(t0);
	pthread_mutex_unlock(&cond_lock);
}

__attribute__((noinline)) static void wait_rdlock(void)
{
	uint64_t t0 = now_ns();

	pthread_rwlock_rdlock(&rwlock); /* CALLSITE:blocking_rdlock */
	measured(t0);
	pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void wait_wrlock(void)
{
	uint64_t t0 = now_ns();

	pthread_rwlock_wrlock(&rwlock); /* CALLSITE:blocking_wrlock */
	measured(t0);
	pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void wait_sem(void)
{
	uint64_t t0 = now_ns();

	while (sem_wait(&sem) && errno == EINTR) /* CALLSITE:blocking_sem */
		;
	measured(t0);
}

__attribute__((noinline)) static void wait_futex(void)
{
	uint64_t t0 = now_ns();

	while (atomic_load(&futex_word))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0); /* CALLSITE:blocking_futex */
	measured(t0);
}

/* futex2 (Linux 6.7): futex_wait(uaddr, val, mask, flags, timeout, clock). */
#define SYS_futex2_wake 454
#define SYS_futex2_wait 455
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE 128

__attribute__((noinline)) static void wait_futex2(void)
{
	uint64_t t0 = now_ns();

	while (atomic_load(&futex_word))
		syscall(SYS_futex2_wait, &futex_word, 1UL, 0xffffffffUL, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, NULL, 0); /* CALLSITE:blocking_futex2 */
	measured(t0);
}

__attribute__((noinline)) static void wait_stdio(void)
{
	uint64_t t0 = now_ns();

	fputs("x", stream); /* CALLSITE:blocking_stdio */
	measured(t0);
}

/* Holds for --hold-us after the waiter blocked (or a second at most). */
static void hold(int iteration)
{
	atomic_store(&held, iteration);
	wait_blocked_in_futex(waiter_tid);
	sleep_us(cfg.hold_us);
}

static void *holder(void *arg)
{
	holder_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 1; i <= cfg.iters; i++) {
		if (!strcmp(scenario, "mutex")) {
			pthread_mutex_lock(&big_lock);
			hold(i);
			pthread_mutex_unlock(&big_lock);
		} else if (!strcmp(scenario, "recursive")) {
			pthread_mutex_lock(&rec_lock);
			pthread_mutex_lock(&rec_lock);
			hold(i);
			pthread_mutex_unlock(&rec_lock);
			pthread_mutex_unlock(&rec_lock);
		} else if (!strcmp(scenario, "condvar")) {
			wait_until(&ready, i);
			pthread_mutex_lock(&cond_lock);
			/* The waiter sleeps on the condvar, */
			wait_blocked_in_futex_within(waiter_tid, &cond,
						     sizeof(cond));
			sleep_us(cfg.hold_us);
			generation = i;
			pthread_cond_signal(&cond);
			/* wakes and blocks taking its mutex back. */
			wait_blocked_in_futex_within(waiter_tid, &cond_lock,
						     sizeof(cond_lock));
			sleep_us(cfg.hold_us);
			pthread_mutex_unlock(&cond_lock);
		} else if (!strcmp(scenario, "rwlock-r")) {
			pthread_rwlock_wrlock(&rwlock);
			hold(i);
			pthread_rwlock_unlock(&rwlock);
		} else if (!strcmp(scenario, "rwlock-w")) {
			pthread_rwlock_rdlock(&rwlock);
			hold(i);
			pthread_rwlock_unlock(&rwlock);
		} else if (!strcmp(scenario, "sem")) {
			hold(i);
			sem_post(&sem);
		} else if (!strcmp(scenario, "futex")) {
			atomic_store(&futex_word, 1);
			hold(i);
			atomic_store(&futex_word, 0);
			syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1,
				NULL, NULL, 0);
		} else if (!strcmp(scenario, "futex2")) {
			atomic_store(&futex_word, 1);
			hold(i);
			atomic_store(&futex_word, 0);
			syscall(SYS_futex2_wake, &futex_word, 0xffffffffUL, 1,
				FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
		} else if (!strcmp(scenario, "stdio")) {
			flockfile(stream);
			hold(i);
			funlockfile(stream);
		}
		wait_until(&done, i);
	}
	return arg;
}

static void *waiter(void *arg)
{
	waiter_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 1; i <= cfg.iters; i++) {
		if (strcmp(scenario, "condvar"))
			wait_until(&held, i);
		if (!strcmp(scenario, "mutex"))
			wait_mutex(&big_lock);
		else if (!strcmp(scenario, "recursive"))
			wait_mutex(&rec_lock);
		else if (!strcmp(scenario, "condvar"))
			wait_cond(i);
		else if (!strcmp(scenario, "rwlock-r"))
			wait_rdlock();
		else if (!strcmp(scenario, "rwlock-w"))
			wait_wrlock();
		else if (!strcmp(scenario, "sem"))
			wait_sem();
		else if (!strcmp(scenario, "futex"))
			wait_futex();
		else if (!strcmp(scenario, "futex2"))
			wait_futex2();
		else if (!strcmp(scenario, "stdio"))
			wait_stdio();
		atomic_store(&done, i);
	}
	return arg;
}

/* Never blocks, never exits: main ends the process. */
static void *uncontended_worker(void *arg)
{
	pthread_mutex_t *m = arg;

	for (int i = 0; i < cfg.iters; i++) {
		pthread_mutex_lock(m); /* CALLSITE:uncontended */
		pthread_mutex_unlock(m);
	}
	atomic_fetch_add(&finished, 1);
	for (;;)
		pause();
	return NULL;
}

static const void *object(void)
{
	if (!strcmp(scenario, "mutex"))
		return &big_lock;
	if (!strcmp(scenario, "recursive"))
		return &rec_lock;
	if (!strcmp(scenario, "condvar"))
		return &cond;
	if (!strncmp(scenario, "rwlock", 6))
		return &rwlock;
	if (!strcmp(scenario, "sem"))
		return &sem;
	if (!strcmp(scenario, "futex") || !strcmp(scenario, "futex2"))
		return &futex_word;
	if (!strcmp(scenario, "stdio"))
		return stream->_lock;
	return NULL;
}

static void write_truth(const char *path, uint64_t elapsed_ns)
{
	FILE *f = path ? fopen(path, "w") : NULL;

	if (!f)
		return;
	fprintf(f, "{\"scenario\": \"%s\", \"pid\": %d, \"object\": \"%p\", "
		"\"count\": %llu, \"failed\": 0, \"wait_ns\": %llu, "
		"\"waiter_tid\": %d, \"holder_tid\": %d, \"cond_mutex\": \"%p\", "
		"\"elapsed_ns\": %llu, \"ops\": %llu}\n",
		scenario, (int)getpid(), object(), (unsigned long long)count,
		(unsigned long long)wait_ns, (int)waiter_tid, (int)holder_tid,
		(void *)&cond_lock, (unsigned long long)elapsed_ns,
		(unsigned long long)cfg.iters * (unsigned long long)cfg.threads);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "threads", required_argument, NULL, 't' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *truth_path = NULL;
	bool go_signal = false;
	pthread_mutexattr_t attr;
	pthread_t threads[MAX_THREADS];
	uint64_t start;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'w': go_signal = true; break;
		default: return 2;
		}
	}
	if (optind >= argc || cfg.threads < 1 || cfg.threads > MAX_THREADS) {
		fprintf(stderr, "usage: blocking SCENARIO [--iters N] [--hold-us N] "
			"[--threads N] [--truth FILE] [--wait-signal]\n");
		return 2;
	}
	scenario = argv[optind];
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec_lock, &attr);
	sem_init(&sem, 0, 0);
	stream = fopen("/dev/null", "w");
	if (!stream || !(object() || !strcmp(scenario, "uncontended"))) {
		fprintf(stderr, "blocking: unknown scenario '%s'\n", scenario);
		return 2;
	}
	if (go_signal)
		wait_for_go();
	start = now_ns();
	if (!strcmp(scenario, "uncontended")) {
		for (int i = 0; i < cfg.threads; i++) {
			pthread_mutex_init(&own_locks[i], NULL);
			pthread_create(&threads[i], NULL, uncontended_worker,
				       &own_locks[i]);
		}
		while (atomic_load(&finished) != cfg.threads)
			sleep_us(1000);
		write_truth(truth_path, now_ns() - start);
		fflush(NULL);
		_exit(0);	/* the workers sit in pause(): no join */
	}
	pthread_create(&threads[0], NULL, holder, NULL);
	pthread_create(&threads[1], NULL, waiter, NULL);
	pthread_join(threads[0], NULL);
	pthread_join(threads[1], NULL);
	write_truth(truth_path, now_ns() - start);
	return 0;
}
