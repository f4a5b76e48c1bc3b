// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the frame cache test: a burst of forked processes running
 * one binary.  The parent forks --procs children at once, after the
 * start handshake; each child hands one mutex from a holder thread to a
 * waiter thread --iters times, the waiter --depth frames deep, so every
 * acquisition blocks once (the holder waits until the waiter sits in the
 * futex call) and every walk crosses the same frames: 32 distinct
 * functions, then --depth levels of one (default 0).  The parent waits
 * for them all and never blocks on the mutex.
 *
 *   forkburst [--procs N] [--iters N] [--depth N] [--hold-us N]
 *             [--wait-signal]
 *
 * stdout, at the end: {"procs": N, "waits": N} (acquisitions made by
 * the children, each one blocked).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/targetkit.h"

static int procs = 8, iters = 20, depth, hold_us = 200;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;		/* iteration the holder holds for */
static atomic_int done;		/* iteration the waiter finished */
static atomic_int waiter_tid;
static atomic_int *waits;	/* shared: acquisitions of all children */

static void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(20);
}

/*
 * 32 functions, each a frame of its own with its own return address (a
 * recursion would give the frame cache one address), then --depth more
 * levels of one recursive function.
 */
__attribute__((noinline)) static int deep_down(int n)
{
	int r;

	if (!n) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		return 1;
	}
	r = deep_down(n - 1);
	__asm__ volatile("" : : "r"(r) : "memory");
	return r + 1;
}

#define LEVEL(name, next)						\
	__attribute__((noinline)) static int name(int n)		\
	{								\
		int r = next(n);					\
		__asm__ volatile("" : : "r"(r) : "memory");		\
		return r + 1;						\
	}
#define LEVELS4(p, next) LEVEL(p##3, next) LEVEL(p##2, p##3)		\
	LEVEL(p##1, p##2) LEVEL(p##0, p##1)
LEVELS4(l7_, deep_down)
LEVELS4(l6_, l7_0)
LEVELS4(l5_, l6_0)
LEVELS4(l4_, l5_0)
LEVELS4(l3_, l4_0)
LEVELS4(l2_, l3_0)
LEVELS4(l1_, l2_0)
LEVELS4(l0_, l1_0)

static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	for (int i = 1; i <= iters; i++) {
		wait_until(&held, i);
		l0_0(depth);
		atomic_fetch_add(waits, 1);
		atomic_store(&done, i);
	}
	return NULL;
}

static void child(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, waiter, NULL))
		_exit(1);
	while (!atomic_load(&waiter_tid))
		sleep_us(20);
	for (int i = 1; i <= iters; i++) {
		pthread_mutex_lock(&lock);
		atomic_store(&held, i);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(hold_us);
		pthread_mutex_unlock(&lock);
		wait_until(&done, i);
	}
	pthread_join(t, NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'n' },
		{ "depth", required_argument, NULL, 'd' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	bool wait_signal = false;
	int opt, status, failed = 0;
	pid_t *kids;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': procs = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'd': depth = atoi(optarg); break;
		case 'h': hold_us = atoi(optarg); break;
		case 'w': wait_signal = true; break;
		default: return 2;
		}
	}
	if (procs < 1 || iters < 1 || depth < 0)
		return 2;
	waits = mmap(NULL, sizeof(*waits), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	kids = calloc((size_t)procs, sizeof(*kids));
	if (waits == MAP_FAILED || !kids)
		return 1;
	if (wait_signal)
		wait_for_go();
	for (int c = 0; c < procs; c++) {
		kids[c] = fork();
		if (kids[c] < 0)
			return 1;
		if (!kids[c])
			child();
	}
	for (int c = 0; c < procs; c++) {
		waitpid(kids[c], &status, 0);
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	printf("{\"procs\": %d, \"waits\": %d}\n", procs, atomic_load(waits));
	free(kids);
	return failed;
}
