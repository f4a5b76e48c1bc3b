// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the dlopen race: the first thing it does is dlopen
 * libdlrace.so (next to it) and wait through it at once, three frames
 * deep in the library (lib/dlrace.c), on a mutex a holder keeps
 * --hold-us after the waiter blocked; --iters times, no pause between.
 * Launched under a profiler, the library is mapped microseconds after
 * the profiler let the program go, and its first waits come before any
 * profiler can have read it.
 *
 *   dlrace [--iters N] [--hold-us N] [--linger-ms N] [--truth FILE]
 *
 * --linger-ms: stays that long after its waits, as a program goes on
 * with other work (a program that exits within the profiler's reaction
 * leaves it no time to read the library at all: stacks_late counts them).
 *
 * Truth: {"pid", "object", "count", "wait_ns", "first_wait_ns"}: the
 * waiter's own clock around each dlrace_lock call, and how long after
 * dlopen returned the first wait began.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/targetkit.h"

static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;		/* the iteration the holder holds for */
static atomic_int done;		/* the iteration the waiter finished */
static atomic_int waiter_tid;
static int iters = 10, hold_us = 2000, linger_ms;

static void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(50);
}

/* Takes the lock before the waiter comes; lets go once it blocked. */
static void *holder(void *arg)
{
	(void)arg;
	for (int i = 1; i <= iters; i++) {
		wait_until(&done, i - 1);
		pthread_mutex_lock(&race_lock);
		atomic_store(&held, i);
		while (!atomic_load(&waiter_tid))
			sleep_us(50);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(hold_us);
		pthread_mutex_unlock(&race_lock);
	}
	return NULL;
}

static void *load(void)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *handle;

	self[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/libdlrace.so", dirname(self));
	handle = dlopen(path, RTLD_NOW);
	return handle ? dlsym(handle, "dlrace_lock") : NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "truth", required_argument, NULL, 'T' },
		{ "linger-ms", required_argument, NULL, 'l' },
		{ 0 },
	};
	int (*dl_lock)(pthread_mutex_t *m);
	uint64_t wait_ns = 0, first_ns = 0, loaded;
	const char *truth_path = NULL;
	pthread_t thread;
	FILE *f;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': iters = atoi(optarg); break;
		case 'h': hold_us = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'l': linger_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: dlrace [--iters N] [--hold-us N] "
				"[--linger-ms N] [--truth FILE]\n");
			return 2;
		}
	}
	pthread_create(&thread, NULL, holder, NULL);
	dl_lock = (int (*)(pthread_mutex_t *))load();
	if (!dl_lock) {
		fprintf(stderr, "dlrace: %s\n", dlerror());
		return 1;
	}
	loaded = now_ns();
	atomic_store(&waiter_tid, (int)gettid());
	for (int i = 1; i <= iters; i++) {
		uint64_t t0;

		wait_until(&held, i);
		t0 = now_ns();
		if (i == 1)
			first_ns = t0 - loaded;
		dl_lock(&race_lock); /* CALLSITE:dlrace_main */
		wait_ns += now_ns() - t0;
		pthread_mutex_unlock(&race_lock);
		atomic_store(&done, i);
	}
	pthread_join(thread, NULL);
	sleep_us(linger_ms * 1000);
	f = truth_path ? fopen(truth_path, "w") : NULL;
	if (f) {
		fprintf(f, "{\"pid\": %d, \"object\": \"%p\", \"count\": %d, "
			"\"wait_ns\": %llu, \"first_wait_ns\": %llu}\n",
			(int)getpid(), (void *)&race_lock, iters,
			(unsigned long long)wait_ns, (unsigned long long)first_ns);
		fclose(f);
	}
	return 0;
}
