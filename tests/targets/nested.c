// SPDX-License-Identifier: GPL-2.0
/*
 * Lock calls inside lock calls, for full mode: a waiter blocks in
 * pthread_mutex_lock while a holder keeps the lock, and the holder sends
 * the waiter a signal whose handler
 *   nested:  takes another mutex with pthread_mutex_trylock and gives it
 *            back (a probed call inside a probed call);
 *   longjmp: siglongjmps out of the blocked pthread_mutex_lock, which
 *            never returns (every other round; the others lock).
 * The program counts what it did and writes it as JSON (--truth FILE).
 *
 *   nested nested|longjmp [--iters N] [--truth FILE]
 */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/targetkit.h"

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t waiter_thread;
static int iters = 20, use_longjmp;

/* Round i's handshake: held, the holder has the lock; want, the waiter
 * is about to call it; done, the waiter is through with it. */
static volatile int held, want, done;
static volatile sig_atomic_t in_lock;	/* inside pthread_mutex_lock */
static sigjmp_buf escape;

static struct {
	uint64_t locks;			/* the waiter's successful locks */
	uint64_t abandoned;		/* lock calls left by siglongjmp */
	uint64_t handler_calls;		/* trylocks made by the handler */
	uint64_t handler_ok;		/* of which succeeded */
	uint64_t nested;		/* handler calls made inside a lock call */
} truth;

static void on_signal(int sig)
{
	if (use_longjmp) {
		if (in_lock)
			siglongjmp(escape, 1);
		return;
	}
	truth.nested += in_lock;
	truth.handler_calls++;
	/* CALLSITE:handler */
	if (!pthread_mutex_trylock(&handler_lock)) {
		truth.handler_ok++;
		pthread_mutex_unlock(&handler_lock);
	}
}

static void *waiter(void *arg)
{
	for (int i = 1; i <= iters; i++) {
		while (held != i)
			sleep_us(100);
		if (sigsetjmp(escape, 1)) {
			in_lock = 0;
			truth.abandoned++;
			done = i;
			continue;
		}
		want = i;
		in_lock = 1;
		pthread_mutex_lock(&big_lock);	/* CALLSITE:waiter */
		in_lock = 0;
		truth.locks++;
		pthread_mutex_unlock(&big_lock);
		done = i;
	}
	return NULL;
}

/* The holder: takes the lock, lets the waiter block, signals it. */
static void *holder(void *arg)
{
	for (int i = 1; i <= iters; i++) {
		pthread_mutex_lock(&big_lock);
		held = i;
		while (want != i)
			sleep_us(100);
		sleep_us(3000);		/* the waiter sleeps in the futex */
		if (!use_longjmp || i % 2)	/* longjmp: every other round */
			pthread_kill(waiter_thread, SIGUSR1);
		sleep_us(2000);
		pthread_mutex_unlock(&big_lock);
		while (done != i)
			sleep_us(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *truth_path = NULL;
	struct sigaction sa;
	pthread_t h;
	FILE *f;

	if (argc < 2 || (strcmp(argv[1], "nested") && strcmp(argv[1], "longjmp"))) {
		fprintf(stderr, "usage: nested nested|longjmp [--iters N] [--truth FILE]\n");
		return 2;
	}
	use_longjmp = !strcmp(argv[1], "longjmp");
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--truth"))
			truth_path = argv[i + 1];
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: EINTR is fine too */
	pthread_create(&waiter_thread, NULL, waiter, NULL);
	pthread_create(&h, NULL, holder, NULL);
	pthread_join(waiter_thread, NULL);
	pthread_join(h, NULL);
	f = truth_path ? fopen(truth_path, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f, "{\"big_lock\": \"%p\", \"handler_lock\": \"%p\", "
		"\"locks\": %" PRIu64 ", \"abandoned\": %" PRIu64
		", \"handler_calls\": %" PRIu64 ", \"handler_ok\": %" PRIu64
		", \"nested\": %" PRIu64 "}\n", (void *)&big_lock,
		(void *)&handler_lock, truth.locks, truth.abandoned,
		truth.handler_calls, truth.handler_ok, truth.nested);
	if (f != stdout)
		fclose(f);
	return 0;
}
