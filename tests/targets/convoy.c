// SPDX-License-Identifier: GPL-2.0
/*
 * A target for --why: chains of waits whose holders measure what they
 * did while they held.
 *
 *   convoy SCENARIO [--iters N] [--sleep-ms N] [--work-ms N] [--starve]
 *          [--b-writes] [--c-reads] [--truth FILE] [--wait-signal]
 *          [--wait-end]
 *
 * convoy: three threads and two mutexes, --iters times (default 8).  C
 *   takes l2; B takes l1, then blocks on l2 (CALLSITE:b_wait); A blocks
 *   on l1 (CALLSITE:a_wait), held by B.  Once both are blocked in the
 *   kernel, C sleeps --sleep-ms (default 20) in nanosleep, then computes
 *   --work-ms (default 20) of its own CPU time, and unlocks l2
 *   (RELEASE:c_unlock); B then unlocks l2 and l1 (RELEASE:b_unlock).
 *   With --starve, C computes pinned to one CPU beside a spinning thread
 *   of the same process, at nice 10: it waits for the CPU about as long
 *   as it runs.
 * rwlock: the convoy with l2 an rwlock, rw: C takes it as a writer, B
 *   blocks on it as a reader (CALLSITE:b_rwait) and A on l1 behind B; C
 *   unlocks at RELEASE:c_rwunlock.  --b-writes: B waits as a writer
 *   (CALLSITE:b_wwait).  --c-reads: C holds it as a reader, so no writer
 *   names the holder (glibc's __cur_writer is 0).
 * io: H takes l1; W blocks on it (CALLSITE:w_wait); H then reads a pipe
 *   that a third thread writes --sleep-ms later (blocking I/O while
 *   holding), and unlocks (RELEASE:h_unlock).
 *
 * --wait-end: once the truth is written, print "done PID" and exit only
 * on SIGUSR1 (a live screen still shows the run the truth covers).
 *
 * Truth (JSON): per scenario, the holder's clocks over the stretch it
 * held while its waiters were blocked, summed: CPU time
 * (CLOCK_THREAD_CPUTIME_ID), time waiting for a CPU (run_delay in
 * /proc/thread-self/schedstat) and the rest (asleep); and each waiter's
 * own wait (clock_gettime around its lock call).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/holdkit.h"
#include "lib/targetkit.h"

static struct {
	int iters;
	int sleep_ms;
	int work_ms;
	bool starve;
	bool rwlock, b_writes, c_reads;
} cfg = { 8, 20, 20, false, false, false, false };

pthread_mutex_t l1 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t l2 = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

/* Each iteration's steps, in order. */
static atomic_int step;
static atomic_int tid_a, tid_b;
static atomic_bool spin;
static int io_pipe[2];

static struct {
	struct clocks holder;			/* the holder's stretches */
	uint64_t wait_a_ns, wait_b_ns;		/* the waiters' own waits */
	/*
	 * The part of A's wait when B was not waiting: from C's release to
	 * B's lock of l2 returning (B woken, waiting for a CPU on a busy
	 * machine), from there to its unlock of l1, and from that unlock to
	 * A's lock returning (A woken).
	 */
	uint64_t b_woken_ns, b_tail_ns, a_woken_ns;
} truth;
static _Atomic uint64_t b_unlocked_at, c_unlocked_at;

static void wait_step(int n)
{
	while (atomic_load(&step) < n)
		sleep_us(50);
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *hog(void *arg)
{
	(void)arg;
	pin_to(0);
	while (atomic_load(&step) >= 0) {
		if (!atomic_load(&spin)) {
			sleep_us(200);
			continue;
		}
		for (volatile int i = 0; i < 100000; i++)
			;
	}
	return NULL;
}

/* --- convoy ---------------------------------------------------------- */

static void *convoy_a(void *arg)
{
	(void)arg;
	atomic_store(&tid_a, (int)gettid());
	for (int i = 0; i < cfg.iters; i++) {
		uint64_t t0;

		wait_step(3 * i + 2);	/* B holds l1 */
		t0 = now_ns();
		pthread_mutex_lock(&l1);	/* CALLSITE:a_wait */
		uint64_t t1 = now_ns();

		truth.wait_a_ns += t1 - t0;
		truth.a_woken_ns += t1 - atomic_load(&b_unlocked_at);
		pthread_mutex_unlock(&l1);
		atomic_store(&step, 3 * i + 3);
	}
	return NULL;
}

static void *convoy_b(void *arg)
{
	(void)arg;
	atomic_store(&tid_b, (int)gettid());
	for (int i = 0; i < cfg.iters; i++) {
		uint64_t t0;

		wait_step(3 * i + 1);	/* C holds l2 (or rw) */
		pthread_mutex_lock(&l1);
		atomic_store(&step, 3 * i + 2);
		t0 = now_ns();
		if (!cfg.rwlock)
			pthread_mutex_lock(&l2);	/* CALLSITE:b_wait */
		else if (cfg.b_writes)
			pthread_rwlock_wrlock(&rw);	/* CALLSITE:b_wwait */
		else
			pthread_rwlock_rdlock(&rw);	/* CALLSITE:b_rwait */
		uint64_t t1 = now_ns();

		truth.wait_b_ns += t1 - t0;
		/* C's release inside the wait: B was woken by it. */
		if (atomic_load(&c_unlocked_at) > t0)
			truth.b_woken_ns += t1 - atomic_load(&c_unlocked_at);
		if (cfg.rwlock)
			pthread_rwlock_unlock(&rw);
		else
			pthread_mutex_unlock(&l2);
		/* Before the unlock: A cannot return from its lock earlier. */
		atomic_store(&b_unlocked_at, now_ns());
		truth.b_tail_ns += atomic_load(&b_unlocked_at) - t1;
		pthread_mutex_unlock(&l1);	/* RELEASE:b_unlock */
		wait_step(3 * i + 3);
	}
	return NULL;
}

static void *convoy_c(void *arg)
{
	(void)arg;
	if (cfg.starve) {
		pin_to(0);
		setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	}
	for (int i = 0; i < cfg.iters; i++) {
		struct stretch s;

		wait_step(3 * i);
		if (!cfg.rwlock)
			pthread_mutex_lock(&l2);
		else if (cfg.c_reads)
			pthread_rwlock_rdlock(&rw);
		else
			pthread_rwlock_wrlock(&rw);
		atomic_store(&step, 3 * i + 1);
		while (!atomic_load(&tid_b))
			sleep_us(50);
		wait_blocked_in_futex(atomic_load(&tid_b));
		stretch_begin(&s);
		wait_step(3 * i + 2);
		while (!atomic_load(&tid_a))
			sleep_us(50);
		wait_blocked_in_futex(atomic_load(&tid_a));
		sleep_us(cfg.sleep_ms * 1000);
		atomic_store(&spin, cfg.starve);
		compute_us(cfg.work_ms * 1000);
		atomic_store(&spin, false);
		stretch_end(&s, &truth.holder);
		/* Before the unlock: B cannot return from its lock earlier. */
		atomic_store(&c_unlocked_at, now_ns());
		if (cfg.rwlock)
			pthread_rwlock_unlock(&rw);	/* RELEASE:c_rwunlock */
		else
			pthread_mutex_unlock(&l2);	/* RELEASE:c_unlock */
		wait_step(3 * i + 3);
	}
	return NULL;
}

/* --- io -------------------------------------------------------------- */

static void *io_w(void *arg)
{
	(void)arg;
	atomic_store(&tid_a, (int)gettid());
	for (int i = 0; i < cfg.iters; i++) {
		uint64_t t0;

		wait_step(2 * i + 1);	/* H holds l1 */
		t0 = now_ns();
		pthread_mutex_lock(&l1);	/* CALLSITE:w_wait */
		truth.wait_a_ns += now_ns() - t0;
		pthread_mutex_unlock(&l1);
		atomic_store(&step, 2 * i + 2);
	}
	return NULL;
}

static void *io_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < cfg.iters; i++) {
		char c = 'x';

		wait_step(2 * i + 1);
		while (!atomic_load(&tid_a))
			sleep_us(50);
		wait_blocked_in_futex(atomic_load(&tid_a));
		sleep_us(cfg.sleep_ms * 1000);
		if (write(io_pipe[1], &c, 1) != 1)
			abort();
		wait_step(2 * i + 2);
	}
	return NULL;
}

static void *io_h(void *arg)
{
	(void)arg;
	for (int i = 0; i < cfg.iters; i++) {
		struct stretch s;
		char c;

		wait_step(2 * i);
		pthread_mutex_lock(&l1);
		atomic_store(&step, 2 * i + 1);
		while (!atomic_load(&tid_a))
			sleep_us(50);
		wait_blocked_in_futex(atomic_load(&tid_a));
		stretch_begin(&s);
		if (read(io_pipe[0], &c, 1) != 1)	/* blocking I/O, holding */
			abort();
		stretch_end(&s, &truth.holder);
		pthread_mutex_unlock(&l1);	/* RELEASE:h_unlock */
		wait_step(2 * i + 2);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: convoy convoy|rwlock|io [--iters N] "
		"[--sleep-ms N] [--work-ms N] [--starve] [--b-writes] "
		"[--c-reads] [--truth FILE] [--wait-signal] [--wait-end]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iters", required_argument, 0, 'i' },
		{ "sleep-ms", required_argument, 0, 's' },
		{ "work-ms", required_argument, 0, 'w' },
		{ "starve", no_argument, 0, 'S' },
		{ "b-writes", no_argument, 0, 'W' },
		{ "c-reads", no_argument, 0, 'R' },
		{ "truth", required_argument, 0, 't' },
		{ "wait-signal", no_argument, 0, 'g' },
		{ "wait-end", no_argument, 0, 'e' },
		{ 0 },
	};
	const char *truth_path = NULL, *scenario;
	bool wait_signal = false, wait_end = false, io;
	pthread_t th[3], hog_th;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 's': cfg.sleep_ms = atoi(optarg); break;
		case 'w': cfg.work_ms = atoi(optarg); break;
		case 'S': cfg.starve = true; break;
		case 'W': cfg.b_writes = true; break;
		case 'R': cfg.c_reads = true; break;
		case 't': truth_path = optarg; break;
		case 'g': wait_signal = true; break;
		case 'e': wait_end = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	scenario = argv[optind];
	io = !strcmp(scenario, "io");
	cfg.rwlock = !strcmp(scenario, "rwlock");
	if (!io && !cfg.rwlock && strcmp(scenario, "convoy"))
		usage();
	if (io && pipe(io_pipe))
		return 1;
	if (cfg.starve)
		pthread_create(&hog_th, NULL, hog, NULL);
	if (wait_signal)
		wait_for_go();
	if (io) {
		pthread_create(&th[0], NULL, io_h, NULL);
		pthread_create(&th[1], NULL, io_w, NULL);
		pthread_create(&th[2], NULL, io_writer, NULL);
	} else {
		pthread_create(&th[0], NULL, convoy_c, NULL);
		pthread_create(&th[1], NULL, convoy_b, NULL);
		pthread_create(&th[2], NULL, convoy_a, NULL);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	atomic_store(&step, -1);
	if (cfg.starve)
		pthread_join(hog_th, NULL);
	if (truth_path) {
		f = fopen(truth_path, "w");
		if (!f)
			return 1;
		fprintf(f, "{\"l1\": \"%p\", \"l2\": \"%p\", "
			"\"holder_cpu_ns\": %" PRIu64 ", "
			"\"holder_run_delay_ns\": %" PRIu64 ", "
			"\"holder_wall_ns\": %" PRIu64 ", "
			"\"wait_a_ns\": %" PRIu64 ", \"wait_b_ns\": %" PRIu64
			", \"b_woken_ns\": %" PRIu64
			", \"b_tail_ns\": %" PRIu64 ", \"a_woken_ns\": %" PRIu64
			"}\n", (void *)&l1,
			cfg.rwlock ? (void *)&rw : (void *)&l2,
			truth.holder.cpu_ns, truth.holder.run_delay_ns,
			truth.holder.wall_ns, truth.wait_a_ns,
			truth.wait_b_ns, truth.b_woken_ns, truth.b_tail_ns,
			truth.a_woken_ns);
		fclose(f);
	}
	if (wait_end)
		wait_for_end();
	return 0;
}
