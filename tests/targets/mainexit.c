// SPDX-License-Identifier: GPL-2.0
/*
 * A process whose main thread leaves with pthread_exit while its workers
 * go on locking: each worker takes one mutex --iters times and holds it
 * --hold-us, its own clock_gettime(CLOCK_MONOTONIC) around each
 * pthread_mutex_lock; main leaves --main-ms after starting them, in the
 * middle of their calls.  The last worker to finish writes the truth:
 * {"pid", "object", "count", "wait_ns", "main_left_ns"}.
 *
 *   mainexit [--threads N] [--iters N] [--hold-us N] [--main-ms N]
 *            [--park] [--wait-signal] [--truth FILE]
 *
 * --park: no workers lock; one thread sleeps until SIGTERM after main has
 * left and prints "parked PID" (a process to attach to after its main
 * thread is gone).  --wait-signal: "ready PID", then the workers start on
 * SIGUSR1 (a profiler attaches before).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdatomic.h>
#include <string.h>

#include "lib/targetkit.h"

static struct {
	int threads, iters, hold_us, main_ms;
} cfg = { .threads = 3, .iters = 100, .hold_us = 2000, .main_ms = 100 };

static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ullong count, wait_ns;
static atomic_int finished;
static uint64_t main_left_ns;
static const char *truth_path;
static pthread_t main_thread;

static void write_truth(void)
{
	FILE *f = truth_path ? fopen(truth_path, "w") : NULL;

	if (!f)
		return;
	fprintf(f, "{\"pid\": %d, \"object\": \"%p\", \"count\": %llu, "
		"\"wait_ns\": %llu, \"main_left_ns\": %llu}\n", (int)getpid(),
		(void *)&work_lock, (unsigned long long)atomic_load(&count),
		(unsigned long long)atomic_load(&wait_ns),
		(unsigned long long)main_left_ns);
	fclose(f);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < cfg.iters; i++) {
		uint64_t t0 = now_ns();

		pthread_mutex_lock(&work_lock); /* CALLSITE:worker */
		atomic_fetch_add(&wait_ns, now_ns() - t0);
		atomic_fetch_add(&count, 1);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&work_lock);
		sleep_us(50);
	}
	if (atomic_fetch_add(&finished, 1) == cfg.threads - 1) {
		/* main's exit is over once it is joined (a zombie leader). */
		pthread_join(main_thread, NULL);
		write_truth();
	}
	return NULL;
}

static void *parked(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	pthread_join(main_thread, NULL);
	printf("parked %d\n", (int)getpid());
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigwait(&set, &sig);
	exit(0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 'n' },
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "main-ms", required_argument, NULL, 'm' },
		{ "park", no_argument, NULL, 'p' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "truth", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	bool park = false, wait_signal = false;
	pthread_t t;
	sigset_t set;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': cfg.threads = atoi(optarg); break;
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 'm': cfg.main_ms = atoi(optarg); break;
		case 'p': park = true; break;
		case 'w': wait_signal = true; break;
		case 't': truth_path = optarg; break;
		default: return 2;
		}
	}
	main_thread = pthread_self();
	/* SIGTERM for the parked thread's sigwait, in every thread. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (park) {
		pthread_create(&t, NULL, parked, NULL);
		pthread_exit(NULL);
	}
	if (wait_signal)
		wait_for_go();
	for (int i = 0; i < cfg.threads; i++)
		pthread_create(&t, NULL, worker, NULL);
	sleep_us(cfg.main_ms * 1000);
	main_left_ns = now_ns();
	pthread_exit(NULL);
}
