// SPDX-License-Identifier: GPL-2.0
/*
 * A target whose library file shrinks under the profiler: it dlopens
 * --lib (a copy the test owns), takes the address of the library's
 * shared_lock, and after the start handshake (--wait-signal) contends on
 * that lock --iters times from its own code, never running the
 * library's code again: the test truncates the file meanwhile, and code
 * or data read from a truncated file's pages would kill the target
 * itself with SIGBUS.  It ends with _exit, so the library's destructors
 * (in the truncated file) do not run either.
 *
 *   shrinklib --lib PATH [--iters N] [--truth PATH] [--wait-signal]
 *
 * Truth: {"object": shared_lock, "count": contended acquisitions}.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/targetkit.h"

static pthread_mutex_t *lock;
static volatile int holding;
static pid_t waiter_tid;

/* Holds the library's lock until the main thread blocks on it. */
static void *holder(void *arg)
{
	pthread_mutex_lock(lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	wait_blocked_in_futex_within(waiter_tid, lock, sizeof(*lock));
	pthread_mutex_unlock(lock);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "iters", required_argument, NULL, 'i' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *lib = NULL, *truth = NULL;
	int opt, iters = 20, wait = 0;
	void *handle;
	FILE *f;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': lib = optarg; break;
		case 'i': iters = atoi(optarg); break;
		case 'T': truth = optarg; break;
		case 'w': wait = 1; break;
		default: return 2;
		}
	}
	if (!lib || iters < 1) {
		fprintf(stderr, "usage: shrinklib --lib PATH [--iters N] "
			"[--truth PATH] [--wait-signal]\n");
		return 2;
	}
	handle = dlopen(lib, RTLD_NOW);
	lock = handle ? dlsym(handle, "shared_lock") : NULL;
	if (!lock) {
		fprintf(stderr, "shrinklib: %s\n", dlerror());
		return 1;
	}
	waiter_tid = (pid_t)syscall(SYS_gettid);
	if (wait)
		wait_for_go();
	for (int i = 0; i < iters; i++) {
		pthread_t t;

		__atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
		if (pthread_create(&t, NULL, holder, NULL))
			return 1;
		while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
			sleep_us(50);
		pthread_mutex_lock(lock); /* CALLSITE:shrinklib */
		pthread_mutex_unlock(lock);
		pthread_join(t, NULL);
	}
	f = truth ? fopen(truth, "w") : NULL;
	if (f) {
		fprintf(f, "{\"object\": \"%p\", \"count\": %d}\n", (void *)lock,
			iters);
		fclose(f);
	}
	fflush(stdout);
	_exit(0);
}
