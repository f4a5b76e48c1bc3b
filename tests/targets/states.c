// SPDX-License-Identifier: GPL-2.0
/*
 * A target for --states: threads that measure where their own time went.
 *
 *   states SCENARIO [--iters N] [--work-ms N] [--sleep-ms N] [--hold-ms N]
 *          [--threads N] [--spin-ms N] [--truth FILE] [--wait-signal]
 *
 * mixed: a thread named "worker" computes --work-ms of CPU time, sleeps
 *   --sleep-ms in nanosleep, then blocks on a mutex that a "holder" thread
 *   holds, --iters times (default 15, 10, 10).  The holder takes the
 *   mutex before the worker's iteration, waits until the worker says it
 *   is about to lock, and holds it --hold-ms more (default 20): every lock
 *   call blocks at least that long, however loaded the machine.
 * spin: --threads "spinner" threads (default 4) each spin for --spin-ms
 *   (default 600) of wall-clock time; with more of them than CPUs, they
 *   wait for one.
 * Both start an "idler" thread before the start handshake, blocked in a
 * pipe read until the end: a thread that lives through the whole run.
 *
 * Each measured thread writes its truth: its CPU time
 * (CLOCK_THREAD_CPUTIME_ID, at its end), its life (CLOCK_MONOTONIC from its
 * first instruction to its last), the time it sleeps and waits for the
 * mutex (clock_gettime around each nanosleep and lock call), and the time
 * it waited for a CPU (run_delay in /proc/thread-self/schedstat, the
 * kernel's own count, over its life).  The sleep and lock figures leave
 * out the time the thread waited for a CPU inside the call after its
 * wakeup (run_delay read before and after it): that time is runnable, and
 * on a loaded machine it can be milliseconds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/targetkit.h"

#define MAX_THREADS 32

static struct {
	int iters;
	int work_ms;
	int sleep_ms;
	int hold_ms;
	int threads;
	int spin_ms;
} cfg = { 15, 10, 10, 20, 4, 600 };

struct truth {
	const char *name;
	pid_t tid;
	uint64_t cpu_ns;
	uint64_t wall_ns;
	uint64_t sleep_ns;
	uint64_t lock_ns;
	uint64_t run_delay_ns;
	uint64_t start_delay_ns;	/* on a run queue before its first
					   instruction: outside wall_ns */
	uint64_t end_ns;	/* CLOCK_MONOTONIC at its last read: what is
				   left of its life (returning, exiting) is
				   before the truth's end_ns */
	int schedstat_fd;
};

static struct truth truths[MAX_THREADS];
static int n_truths;
static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;		/* iteration the holder holds the lock for */
static atomic_int asking;	/* iteration the worker is about to lock in */
static atomic_int done;		/* iteration the worker finished */
static int idle_pipe[2];

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This thread's time spent waiting on a run queue, per the kernel. */
static uint64_t run_delay_ns(struct truth *t)
{
	char buf[128];
	unsigned long long on_cpu, delay;
	ssize_t n = pread(t->schedstat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
		return 0;
	return delay;
}

static void truth_begin(struct truth *t, const char *name)
{
	t->name = name;
	t->tid = (pid_t)syscall(SYS_gettid);
	t->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	t->start_delay_ns = run_delay_ns(t);
	pthread_setname_np(pthread_self(), name);
}

static void truth_end(struct truth *t, uint64_t start_ns)
{
	t->run_delay_ns = run_delay_ns(t);
	t->cpu_ns = thread_cpu_ns();
	t->end_ns = now_ns();
	t->wall_ns = t->end_ns - start_ns;
	close(t->schedstat_fd);
}

/* Wall time of a blocking call less the CPU wait inside it. */
static uint64_t blocked_ns(uint64_t t0, uint64_t t1, uint64_t delay0,
			   uint64_t delay1)
{
	uint64_t wall = t1 - t0, delay = delay1 - delay0;

	return wall > delay ? wall - delay : 0;
}

/* Burns ms of this thread's CPU time. */
static void compute(int ms)
{
	uint64_t until = thread_cpu_ns() + (uint64_t)ms * 1000000ull;
	volatile uint64_t x = 0;

	while (thread_cpu_ns() < until)
		for (int i = 0; i < 20000; i++)
			x += (uint64_t)i * i;
}

static void *worker(void *arg)
{
	uint64_t start = now_ns();
	struct truth *t = arg;

	truth_begin(t, "worker");
	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t d0, d1, t0, t1;

		compute(cfg.work_ms);

		d0 = run_delay_ns(t);
		t0 = now_ns();
		sleep_us(cfg.sleep_ms * 1000);
		t1 = now_ns();
		d1 = run_delay_ns(t);
		t->sleep_ns += blocked_ns(t0, t1, d0, d1);

		atomic_store(&asking, i);
		d0 = run_delay_ns(t);
		t0 = now_ns();
		pthread_mutex_lock(&the_lock);
		t1 = now_ns();
		d1 = run_delay_ns(t);
		t->lock_ns += blocked_ns(t0, t1, d0, d1);
		pthread_mutex_unlock(&the_lock);
		atomic_store(&done, i);
	}
	truth_end(t, start);
	return NULL;
}

/* Takes the lock before each of the worker's iterations. */
static void *holder(void *arg)
{
	for (int i = 1; i <= cfg.iters; i++) {
		pthread_mutex_lock(&the_lock);
		atomic_store(&held, i);
		while (atomic_load(&asking) < i)
			sleep_us(100);
		sleep_us(cfg.hold_ms * 1000);
		pthread_mutex_unlock(&the_lock);
		while (atomic_load(&done) < i)
			sleep_us(100);
	}
	return arg;
}

static void *spinner(void *arg)
{
	struct truth *t = arg;
	volatile uint64_t x = 0;
	uint64_t start, until;

	/* Its wall clock starts where start_delay_ns ends. */
	truth_begin(t, "spinner");
	start = now_ns();
	until = start + (uint64_t)cfg.spin_ms * 1000000ull;
	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	truth_end(t, start);
	return NULL;
}

static void *idler(void *arg)
{
	char c;

	pthread_setname_np(pthread_self(), "idler");
	while (read(idle_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return arg;
}

static void write_truth(const char *path, uint64_t start_ns, uint64_t end_ns)
{
	FILE *f = path ? fopen(path, "w") : NULL;

	if (!f)
		return;
	fprintf(f, "{\"pid\": %d, \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
		", \"threads\": [", (int)getpid(), start_ns, end_ns);
	for (int i = 0; i < n_truths; i++) {
		const struct truth *t = &truths[i];

		fprintf(f, "%s{\"tid\": %d, \"name\": \"%s\", \"cpu_ns\": %" PRIu64
			", \"wall_ns\": %" PRIu64 ", \"sleep_ns\": %" PRIu64
			", \"lock_ns\": %" PRIu64 ", \"run_delay_ns\": %" PRIu64
			", \"start_delay_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64 "}",
			i ? ", " : "", (int)t->tid, t->name, t->cpu_ns, t->wall_ns,
			t->sleep_ns, t->lock_ns, t->run_delay_ns, t->start_delay_ns,
			t->end_ns);
	}
	fprintf(f, "]}\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "work-ms", required_argument, NULL, 'w' },
		{ "sleep-ms", required_argument, NULL, 's' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "threads", required_argument, NULL, 't' },
		{ "spin-ms", required_argument, NULL, 'S' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'W' },
		{ 0 },
	};
	pthread_t threads[MAX_THREADS], idle, hold;
	const char *truth_path = NULL, *scenario;
	bool wait_signal = false;
	uint64_t start, end;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 'w': cfg.work_ms = atoi(optarg); break;
		case 's': cfg.sleep_ms = atoi(optarg); break;
		case 'H': cfg.hold_ms = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'S': cfg.spin_ms = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'W': wait_signal = true; break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || cfg.threads < 1 || cfg.threads > MAX_THREADS)
		goto usage;
	scenario = argv[optind];
	if (strcmp(scenario, "mixed") && strcmp(scenario, "spin"))
		goto usage;
	if (pipe(idle_pipe) || pthread_create(&idle, NULL, idler, NULL))
		return 1;
	if (wait_signal)
		wait_for_go();
	start = now_ns();
	if (!strcmp(scenario, "mixed")) {
		n_truths = 1;
		if (pthread_create(&hold, NULL, holder, NULL))
			return 1;
		/* The holder takes the lock first. */
		while (atomic_load(&held) < 1)
			sleep_us(100);
		if (pthread_create(&threads[0], NULL, worker, &truths[0]))
			return 1;
		pthread_join(threads[0], NULL);
		pthread_join(hold, NULL);
	} else {
		n_truths = cfg.threads;
		for (int i = 0; i < cfg.threads; i++)
			if (pthread_create(&threads[i], NULL, spinner, &truths[i]))
				return 1;
		for (int i = 0; i < cfg.threads; i++)
			pthread_join(threads[i], NULL);
	}
	end = now_ns();
	if (write(idle_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(idle, NULL);
	write_truth(truth_path, start, end);
	return 0;
usage:
	fprintf(stderr, "usage: states mixed|spin [--iters N] [--work-ms N] "
		"[--sleep-ms N] [--hold-ms N] [--threads N] [--spin-ms N] "
		"[--truth FILE] [--wait-signal]\n");
	return 2;
}
