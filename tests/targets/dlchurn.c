// SPDX-License-Identifier: GPL-2.0
/*
 * A target that loads and unloads a library over and over, for the test
 * that a profiler's memory stays flat under dlopen/dlclose churn.  Each
 * cycle dlopens --lib, calls its shared_lock_work(1) (one acquisition of
 * the library's own lock, from the library's code) and dlcloses it; every
 * --every cycles the main thread also takes churn_lock while a helper
 * holds it, letting go only once main blocks in the kernel: one
 * contended acquisition, exactly.
 *
 *   dlchurn --lib PATH [--warmup N] [--cycles N] [--every N]
 *           [--truth PATH] [--wait-signal]
 *
 * With --wait-signal: "ready PID", waits for SIGUSR1; --warmup cycles,
 * then "warm PID" and waits for SIGUSR1 again; --cycles cycles, writes
 * the truth, "done PID" and waits for a last SIGUSR1 before it exits.
 * Truth: {"object": churn_lock, "contended": N, "library_calls": N,
 * "cycles": N}.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/targetkit.h"

static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int holding;
static pid_t waiter_tid;

/* Holds churn_lock until the main thread blocks on it. */
static void *holder(void *arg)
{
	pthread_mutex_lock(&churn_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	wait_blocked_in_futex_within(waiter_tid, &churn_lock,
				     sizeof(churn_lock));
	pthread_mutex_unlock(&churn_lock);
	return NULL;
}

/* The next SIGUSR1 (wait_for_go blocked it), with nothing printed. */
static void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

static int contend(void)
{
	pthread_t t;

	__atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
	if (pthread_create(&t, NULL, holder, NULL))
		return -1;
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sleep_us(50);
	pthread_mutex_lock(&churn_lock); /* CALLSITE:churn_lock */
	pthread_mutex_unlock(&churn_lock);
	pthread_join(t, NULL);
	return 0;
}

/* One dlopen, one call into the library, one dlclose; 0 or -1. */
static int cycle(const char *lib, long *calls)
{
	void *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	long (*work)(int);

	if (!handle) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		return -1;
	}
	work = (long (*)(int))dlsym(handle, "shared_lock_work");
	if (!work) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		dlclose(handle);
		return -1;
	}
	*calls += work(1);
	if (dlclose(handle)) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		return -1;
	}
	return 0;
}

static int run(const char *lib, int n, int every, int *done, long *calls,
	       long *contended)
{
	for (int i = 0; i < n; i++, (*done)++) {
		if (cycle(lib, calls))
			return -1;
		if (*done % every == 0) {
			if (contend())
				return -1;
			(*contended)++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "every", required_argument, NULL, 'e' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *lib = NULL, *truth = NULL;
	int opt, warmup = 300, cycles = 2400, every = 20, wait = 0, done = 0;
	long calls = 0, contended = 0;
	FILE *f;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': lib = optarg; break;
		case 'W': warmup = atoi(optarg); break;
		case 'c': cycles = atoi(optarg); break;
		case 'e': every = atoi(optarg); break;
		case 'T': truth = optarg; break;
		case 'w': wait = 1; break;
		default: return 2;
		}
	}
	if (!lib || warmup < 0 || cycles < 0 || every < 1) {
		fprintf(stderr, "usage: dlchurn --lib PATH [--warmup N] "
			"[--cycles N] [--every N] [--truth PATH] [--wait-signal]\n");
		return 2;
	}
	waiter_tid = (pid_t)syscall(SYS_gettid);
	if (wait)
		wait_for_go();
	if (run(lib, warmup, every, &done, &calls, &contended))
		return 1;
	if (wait) {
		printf("warm %d\n", (int)getpid());
		fflush(stdout);
		wait_usr1();
	}
	if (run(lib, cycles, every, &done, &calls, &contended))
		return 1;
	f = truth ? fopen(truth, "w") : NULL;
	if (f) {
		fprintf(f, "{\"object\": \"%p\", \"contended\": %ld, "
			"\"library_calls\": %ld, \"cycles\": %d}\n",
			(void *)&churn_lock, contended, calls, done);
		fclose(f);
	}
	if (wait)
		wait_for_end();
	return 0;
}
