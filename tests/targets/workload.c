// SPDX-License-Identifier: GPL-2.0
/*
 * A target for syncprof's integration tests.  Each scenario locks real
 * pthread objects with known timings, times every call itself with
 * clock_gettime(CLOCK_MONOTONIC) and writes the ground truth as JSON
 * (--truth FILE) when it ends: object addresses, counts, failures and
 * the summed wait per object and per thread.
 *
 *   workload SCENARIO [--threads N] [--iters N] [--hold-us N]
 *            [--objects N] [--truth FILE] [--wait-signal] [--exit-code N]
 *
 * Scenarios: mutex, condvar, trylock, recursive, heap, many, churn
 * (--churn N: the --threads lock big_lock until N short-lived threads,
 * one at a time and one every millisecond, have each locked churn_lock
 * once; "churn" in the truth counts theirs), and
 * dlopen (--lib PATH: loads a library after the start signal and calls
 * its shared_lock_work(iters)).
 * --wait-signal: print "ready PID" and start only on SIGUSR1, so a
 * profiler can attach first.
 * --wait-end: once the truth is written, print "done PID" and exit only
 * on SIGUSR1.
 * --until-signal: the mutex workers stop early on SIGUSR2 (--iters bounds
 * them still), so a test can keep them locking until it has seen what it
 * waits for.
 * --log-calls: the truth also lists every timed_lock call's start and end
 * ("calls": [[t0, t1], ...], CLOCK_MONOTONIC ns; up to MAX_CALLS).
 * --main-exits: the main thread leaves with pthread_exit once the workers
 * exist; they start on SIGUSR2, and a starter thread that lives until
 * they end writes the truth.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "lib/targetkit.h"

#define MAX_THREADS 128
#define MAX_OBJECTS 256
#define MAX_CALLS 65536

struct thread_truth {
	pid_t tid;
	uint64_t count;		/* successful calls */
	uint64_t failed;	/* failed trylocks / timeouts */
	uint64_t wait_ns;	/* time in the calls, failed ones too */
};

static struct {
	int threads;
	int iters;
	int hold_us;
	int n_objects;
} cfg = { .threads = 2, .iters = 50, .hold_us = 2000, .n_objects = 4 };

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t rec_lock;
static pthread_mutex_t *heap_locks[MAX_OBJECTS];
static struct thread_truth truth[MAX_THREADS];
static uint64_t hold_count;	/* trylock: the holder's own acquisitions */
static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static int churn_threads;
static volatile int churn_done;
static uint64_t churn_count;
static int cond_generation, cond_done;

/* --main-exits: the workers' start gate, and what the starter writes. */
static void *(*main_exits_worker)(void *);
static volatile int main_exits_go;
static pthread_t main_exits_threads[MAX_THREADS];
static const char *main_exits_truth, *main_exits_scenario;
static const void *main_exits_object;

/* Locked once before main(): launch mode must see it. */
static pthread_mutex_t ctor_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void lock_before_main(void)
{
	pthread_mutex_lock(&ctor_lock);
	pthread_mutex_unlock(&ctor_lock);
}

/* --log-calls: every timed_lock call, [t0, t1]. */
static int log_calls;
static uint64_t call_log[MAX_CALLS][2];
static unsigned int n_calls;

/* Times one lock call; noinline and global keep one named call site. */
int timed_lock(struct thread_truth *t, pthread_mutex_t *m);
__attribute__((noinline)) int timed_lock(struct thread_truth *t,
					 pthread_mutex_t *m)
{
	uint64_t t0 = now_ns();
	int err = pthread_mutex_lock(m); /* CALLSITE:timed_lock */
	uint64_t t1 = now_ns();

	t->wait_ns += t1 - t0;
	if (log_calls) {
		unsigned int i = __atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED);

		if (i < MAX_CALLS) {
			call_log[i][0] = t0;
			call_log[i][1] = t1;
		}
	}
	if (err)
		t->failed++;
	else
		t->count++;
	return err;
}

static volatile sig_atomic_t stop_early;	/* --until-signal: SIGUSR2 came */

static void on_stop(int sig)
{
	(void)sig;
	stop_early = 1;
}

static void *mutex_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < cfg.iters && !stop_early; i++) {
		timed_lock(t, &big_lock);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&big_lock);
		sleep_us(cfg.hold_us / 4);
	}
	return NULL;
}

static void *recursive_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < cfg.iters; i++) {
		timed_lock(t, &rec_lock);
		timed_lock(t, &rec_lock);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&rec_lock);
		pthread_mutex_unlock(&rec_lock);
		sleep_us(cfg.hold_us / 4);
	}
	return NULL;
}

static void *heap_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < cfg.iters; i++) {
		for (int o = 0; o < cfg.n_objects; o++) {
			timed_lock(t, heap_locks[o]);
			sleep_us(cfg.hold_us);
			pthread_mutex_unlock(heap_locks[o]);
		}
	}
	return NULL;
}

/* Thread 0 holds the lock half the time; the others try it. */
static void *trylock_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	if (t == &truth[0]) {
		struct thread_truth own = { 0 };

		for (int i = 0; i < cfg.iters; i++) {
			timed_lock(&own, &big_lock);
			sleep_us(cfg.hold_us);
			pthread_mutex_unlock(&big_lock);
			sleep_us(cfg.hold_us);
		}
		hold_count = own.count;
		return NULL;
	}
	for (int i = 0; i < cfg.iters * 2; i++) {
		uint64_t t0 = now_ns();
		int err = pthread_mutex_trylock(&big_lock); /* CALLSITE:trylock */

		t->wait_ns += now_ns() - t0;
		if (err) {
			t->failed++;
		} else {
			t->count++;
			pthread_mutex_unlock(&big_lock);
		}
		sleep_us(cfg.hold_us / 2 + 77);
	}
	return NULL;
}

/* Thread 0 signals; the others wait.  Truth: the waiters' cond_wait calls. */
static void *condvar_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	if (t == &truth[0]) {
		for (int i = 0; i < cfg.iters; i++) {
			sleep_us(cfg.hold_us);
			pthread_mutex_lock(&cond_lock);
			cond_generation++;
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&cond_lock);
		}
		pthread_mutex_lock(&cond_lock);
		cond_done = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&cond_lock);
		return NULL;
	}
	pthread_mutex_lock(&cond_lock);
	while (!cond_done) {
		uint64_t t0 = now_ns();
		int err = pthread_cond_wait(&cond, &cond_lock); /* CALLSITE:cond_wait */

		t->wait_ns += now_ns() - t0;
		if (err)
			t->failed++;
		else
			t->count++;
	}
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

/* churn: lock big_lock until the short-lived threads are through. */
static void *churn_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	while (!churn_done) {
		timed_lock(t, &big_lock);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&big_lock);
		sleep_us(cfg.hold_us);
	}
	return NULL;
}

/* One short-lived thread: one lock of its own mutex, and out. */
static void *churn_once(void *arg)
{
	struct thread_truth once = { 0 };

	timed_lock(&once, &churn_lock);
	pthread_mutex_unlock(&churn_lock);
	return (void *)(uintptr_t)once.count;
}

/* One thread, many objects, each locked once: fills small maps. */
static void *many_worker(void *arg)
{
	struct thread_truth *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	for (int o = 0; o < cfg.n_objects; o++) {
		timed_lock(t, heap_locks[o]);
		pthread_mutex_unlock(heap_locks[o]);
	}
	return NULL;
}

static void write_truth(const char *path, const char *scenario,
			const void *object)
{
	FILE *f = path ? fopen(path, "w") : NULL;
	uint64_t count = 0, failed = 0, wait_ns = 0;

	if (!f)
		return;
	for (int i = 0; i < cfg.threads; i++) {
		count += truth[i].count;
		failed += truth[i].failed;
		wait_ns += truth[i].wait_ns;
	}
	fprintf(f, "{\"scenario\": \"%s\", \"pid\": %d, \"object\": \"%p\", "
		"\"count\": %" PRIu64 ", \"failed\": %" PRIu64
		", \"wait_ns\": %" PRIu64 ", \"hold_count\": %" PRIu64
		", \"cond_mutex\": \"%p\", \"ctor_lock\": \"%p\""
		", \"churn_lock\": \"%p\", \"churn\": %" PRIu64
		", \"objects\": [", scenario, (int)getpid(), object, count,
		failed, wait_ns, hold_count, (void *)&cond_lock,
		(void *)&ctor_lock, (void *)&churn_lock, churn_count);
	for (int o = 0; o < cfg.n_objects && heap_locks[o]; o++)
		fprintf(f, "%s\"%p\"", o ? ", " : "", (void *)heap_locks[o]);
	fprintf(f, "], \"threads\": [");
	for (int i = 0; i < cfg.threads; i++)
		fprintf(f, "%s{\"tid\": %d, \"count\": %" PRIu64
			", \"failed\": %" PRIu64 ", \"wait_ns\": %" PRIu64 "}",
			i ? ", " : "", (int)truth[i].tid, truth[i].count,
			truth[i].failed, truth[i].wait_ns);
	fprintf(f, "]");
	if (log_calls) {
		fprintf(f, ", \"calls\": [");
		for (unsigned int i = 0; i < n_calls && i < MAX_CALLS; i++)
			fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", i ? ", " : "",
				call_log[i][0], call_log[i][1]);
		fprintf(f, "]");
	}
	fprintf(f, "}\n");
	fclose(f);
}

static void write_truth(const char *path, const char *scenario,
			const void *object);

/*
 * Opens the gate on SIGUSR2 (blocked in every thread, taken here by
 * sigwait), then waits for the workers and writes the truth.
 */
static void *main_exits_starter(void *arg)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigwait(&set, &sig);
	__atomic_store_n(&main_exits_go, 1, __ATOMIC_RELEASE);
	while (!main_exits_threads[cfg.threads - 1])
		sleep_us(1000);
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(main_exits_threads[i], NULL);
	write_truth(main_exits_truth, main_exits_scenario, main_exits_object);
	return NULL;
}

/* A worker that waits at the gate. */
static void *main_exits_gated(void *arg)
{
	while (!__atomic_load_n(&main_exits_go, __ATOMIC_ACQUIRE))
		sleep_us(1000);
	return main_exits_worker(arg);
}

/* Loads lib now, while profiled, and locks through its code. */
static int run_library(const char *lib, const char *truth_path)
{
	void *handle = dlopen(lib, RTLD_NOW);
	long (*work)(int);
	void *lock;
	FILE *f;

	if (!handle) {
		fprintf(stderr, "workload: %s\n", dlerror());
		return 1;
	}
	work = (long (*)(int))dlsym(handle, "shared_lock_work");
	lock = dlsym(handle, "shared_lock");
	if (!work || !lock)
		return 1;
	long count = work(cfg.iters);
	f = truth_path ? fopen(truth_path, "w") : NULL;
	if (f) {
		fprintf(f, "{\"scenario\": \"dlopen\", \"object\": \"%p\", "
			"\"count\": %ld}\n", lock, count);
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "objects", required_argument, NULL, 'o' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "exit-code", required_argument, NULL, 'x' },
		{ "lib", required_argument, NULL, 'l' },
		{ "main-exits", no_argument, NULL, 'm' },
		{ "log-calls", no_argument, NULL, 'L' },
		{ "churn", required_argument, NULL, 'c' },
		{ "wait-end", no_argument, NULL, 'e' },
		{ "until-signal", no_argument, NULL, 'u' },
		{ 0 },
	};
	void *(*worker)(void *) = NULL;
	const char *truth_path = NULL, *scenario, *lib = NULL;
	const void *object = &big_lock;
	pthread_t threads[MAX_THREADS];
	pthread_mutexattr_t attr;
	int opt, wait_signal = 0, exit_code = 0, main_exits = 0, wait_end = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 't': cfg.threads = atoi(optarg); break;
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 'o': cfg.n_objects = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'w': wait_signal = 1; break;
		case 'x': exit_code = atoi(optarg); break;
		case 'l': lib = optarg; break;
		case 'm': main_exits = 1; break;
		case 'L': log_calls = 1; break;
		case 'c': churn_threads = atoi(optarg); break;
		case 'e': wait_end = 1; break;
		case 'u': signal(SIGUSR2, on_stop); break;
		default: return 2;
		}
	}
	if (optind >= argc || cfg.threads < 1 || cfg.threads > MAX_THREADS ||
	    cfg.n_objects < 1 || cfg.n_objects > MAX_OBJECTS) {
		fprintf(stderr, "usage: workload mutex|condvar|trylock|recursive|heap|many [options]\n");
		return 2;
	}
	scenario = argv[optind];
	if (!strcmp(scenario, "mutex")) {
		worker = mutex_worker;
	} else if (!strcmp(scenario, "recursive")) {
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&rec_lock, &attr);
		worker = recursive_worker;
		object = &rec_lock;
	} else if (!strcmp(scenario, "heap") || !strcmp(scenario, "many")) {
		for (int o = 0; o < cfg.n_objects; o++) {
			heap_locks[o] = malloc(sizeof(pthread_mutex_t));
			pthread_mutex_init(heap_locks[o], NULL);
		}
		worker = !strcmp(scenario, "heap") ? heap_worker : many_worker;
		object = NULL;
	} else if (!strcmp(scenario, "churn")) {
		worker = churn_worker;
	} else if (!strcmp(scenario, "trylock")) {
		worker = trylock_worker;
	} else if (!strcmp(scenario, "condvar")) {
		worker = condvar_worker;
		object = &cond;
	} else if (!strcmp(scenario, "dlopen") && lib) {
		if (wait_signal)
			wait_for_go();
		return run_library(lib, truth_path);
	} else {
		fprintf(stderr, "workload: unknown scenario '%s'\n", scenario);
		return 2;
	}
	if (wait_signal)
		wait_for_go();
	if (main_exits) {
		pthread_t starter;
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		main_exits_worker = worker;
		main_exits_truth = truth_path;
		main_exits_scenario = scenario;
		main_exits_object = object;
		/* First: syncprof attaches through the oldest thread left. */
		pthread_create(&starter, NULL, main_exits_starter, NULL);
		for (int i = 0; i < cfg.threads; i++)
			pthread_create(&main_exits_threads[i], NULL,
				       main_exits_gated, &truth[i]);
		pthread_exit(NULL);
	}
	for (int i = 0; i < cfg.threads; i++)
		pthread_create(&threads[i], NULL, worker, &truth[i]);
	for (int i = 0; worker == churn_worker && i < churn_threads; i++) {
		pthread_t once;
		void *count;

		if (pthread_create(&once, NULL, churn_once, NULL))
			break;
		pthread_join(once, &count);
		churn_count += (uintptr_t)count;
		sleep_us(1000);
	}
	churn_done = 1;
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(threads[i], NULL);
	write_truth(truth_path, scenario, object);
	if (wait_end)
		wait_for_end();
	return exit_code;
}
