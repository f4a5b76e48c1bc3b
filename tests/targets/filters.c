// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the filters' tests (--tid, --type, --object, --min-wait):
 * several threads, several kinds of lock, and every lock call counted and
 * timed by the thread that makes it, so that the ground truth of any
 * subset (a thread, a type, an object, the calls at least --min-us long)
 * is exact.
 *
 *   filters [--iters N] [--slow-iters N] [--slow-us N] [--min-us N]
 *           [--truth FILE] [--wait-signal]
 *
 * --wait-signal: the threads are made, then "ready PID name=TID ...
 * cond_lock=ADDR" is printed and they start on SIGUSR1.
 *
 * Threads:
 *   mutex0, mutex1  --iters times each: shared_lock (normal), then their
 *                   own own_lock[i]
 *   recursive       --iters times: rec_lock twice (recursive), unlock twice
 *   condwait        --iters times: waits on cond under cond_lock until the
 *                   condsignal thread's next round
 *   condsignal      --iters rounds: cond_lock, a round, pthread_cond_signal
 *   slowhold        --slow-iters times: holds slow_lock --slow-us, after
 *                   slowwait said it is about to lock it
 *   slowwait        --slow-iters times: locks slow_lock while slowhold
 *                   holds it, so each of its calls blocks about --slow-us
 *
 * The truth (JSON): the threads' TIDs, the objects' addresses, and per
 * (thread, object, type) the calls made and how many of them took at
 * least --min-us by the caller's clock (long_calls), and how many did
 * without the time the thread waited for a CPU meanwhile (sure_calls:
 * its run delay, /proc/thread-self/schedstat).  The caller's clock
 * brackets the probes' interval, and a busy host can stretch the gap
 * between the two only by keeping the thread from a CPU: a profiler
 * sees between sure_calls and long_calls of them.  Flags are polled
 * with nanosleep, never a futex: the measured locks are the only ones.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
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

static struct {
	int iters;
	int slow_iters;
	int slow_us;
	uint64_t min_ns;
} cfg = { .iters = 200, .slow_iters = 5, .slow_us = 40000,
	  .min_ns = 10000000 };

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own_lock[2] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};
static pthread_mutex_t rec_lock;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;

static int round_no;		/* under cond_lock */
static atomic_int slow_held;	/* iteration slowhold holds for */
static atomic_int slow_done;	/* iteration slowwait finished */
static atomic_int go;		/* the threads start */

/* One (thread, object, type) of the truth. */
struct tally {
	const char *thread, *object, *type;
	uint64_t calls, long_calls, sure_calls;
};

#define MAX_TALLIES 16
static struct tally tallies[MAX_TALLIES];
static int n_tallies;

static struct {
	const char *name;
	pid_t tid;
} threads[8];
static atomic_int n_threads;

static struct tally *tally_new(const char *thread, const char *object,
			       const char *type)
{
	/* Each thread makes its tallies before the go, one at a time. */
	struct tally *t = &tallies[n_tallies++];

	t->thread = thread;
	t->object = object;
	t->type = type;
	return t;
}

/* The calling thread's time waiting for a CPU so far, in ns. */
static uint64_t run_delay_ns(void)
{
	static __thread int fd = -1;
	char buf[96];
	unsigned long long run, delay;
	ssize_t n;

	if (fd < 0)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		perror("filters: /proc/thread-self/schedstat");
		exit(1);
	}
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2) {
		fprintf(stderr, "filters: schedstat unreadable: %s\n", buf);
		exit(1);
	}
	return delay;
}

/* A call begun at t0 (d0: the run delay then) has returned. */
static void tally_add(struct tally *t, uint64_t t0, uint64_t d0)
{
	uint64_t took = now_ns() - t0, delayed = run_delay_ns() - d0;

	t->calls++;
	if (took >= cfg.min_ns)
		t->long_calls++;
	if (took >= delayed && took - delayed >= cfg.min_ns)
		t->sure_calls++;
}

static void name_thread(const char *name)
{
	int i = atomic_fetch_add(&n_threads, 1);

	threads[i].name = name;
	threads[i].tid = (pid_t)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), name);
	while (!atomic_load(&go))
		sleep_us(100);
}

static void wait_flag(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(100);
}

static void timed_lock(pthread_mutex_t *m, struct tally *t)
{
	uint64_t d0 = run_delay_ns(), t0 = now_ns();

	pthread_mutex_lock(m);
	tally_add(t, t0, d0);
}

static struct tally *mutex_tallies[2][2], *rec_tally, *condwait_tallies[2],
	*condsignal_tally, *slowhold_tally, *slowwait_tally;

static void *mutexer(void *arg)
{
	long i = (long)arg;

	name_thread(i ? "mutex1" : "mutex0");
	for (int k = 0; k < cfg.iters; k++) {
		timed_lock(&shared_lock, mutex_tallies[i][0]);
		pthread_mutex_unlock(&shared_lock);
		timed_lock(&own_lock[i], mutex_tallies[i][1]);
		pthread_mutex_unlock(&own_lock[i]);
		if (k % 16 == 0)
			sleep_us(200);
	}
	return NULL;
}

static void *recursive(void *arg)
{
	(void)arg;
	name_thread("recursive");
	for (int k = 0; k < cfg.iters; k++) {
		timed_lock(&rec_lock, rec_tally);
		timed_lock(&rec_lock, rec_tally);
		pthread_mutex_unlock(&rec_lock);
		pthread_mutex_unlock(&rec_lock);
	}
	return NULL;
}

static void *condwait(void *arg)
{
	(void)arg;
	name_thread("condwait");
	for (int k = 1; k <= cfg.iters; k++) {
		timed_lock(&cond_lock, condwait_tallies[0]);
		while (round_no < k) {
			uint64_t d0 = run_delay_ns(), t0 = now_ns();

			pthread_cond_wait(&cond, &cond_lock);
			tally_add(condwait_tallies[1], t0, d0);
		}
		pthread_mutex_unlock(&cond_lock);
	}
	return NULL;
}

static void *condsignal(void *arg)
{
	(void)arg;
	name_thread("condsignal");
	for (int k = 1; k <= cfg.iters; k++) {
		sleep_us(300);
		timed_lock(&cond_lock, condsignal_tally);
		round_no = k;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&cond_lock);
	}
	return NULL;
}

static void *slowhold(void *arg)
{
	(void)arg;
	name_thread("slowhold");
	for (int k = 1; k <= cfg.slow_iters; k++) {
		timed_lock(&slow_lock, slowhold_tally);
		atomic_store(&slow_held, k);
		sleep_us(cfg.slow_us);
		pthread_mutex_unlock(&slow_lock);
		wait_flag(&slow_done, k);
	}
	return NULL;
}

static void *slowwait(void *arg)
{
	(void)arg;
	name_thread("slowwait");
	for (int k = 1; k <= cfg.slow_iters; k++) {
		wait_flag(&slow_held, k);
		timed_lock(&slow_lock, slowwait_tally);
		pthread_mutex_unlock(&slow_lock);
		atomic_store(&slow_done, k);
	}
	return NULL;
}

static const char *object_name(const void *p, char *buf, size_t len)
{
	snprintf(buf, len, "%p", p);
	return buf;
}

static void write_truth(const char *path)
{
	FILE *f = fopen(path, "w");
	struct { const char *name; const void *addr; } objects[] = {
		{ "shared_lock", &shared_lock }, { "own_lock0", &own_lock[0] },
		{ "own_lock1", &own_lock[1] }, { "rec_lock", &rec_lock },
		{ "cond_lock", &cond_lock }, { "cond", &cond },
		{ "slow_lock", &slow_lock },
	};
	char buf[32];

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "{\"pid\": %d, \"min_ns\": %llu, \"threads\": {", (int)getpid(),
		(unsigned long long)cfg.min_ns);
	for (int i = 0; i < atomic_load(&n_threads); i++)
		fprintf(f, "%s\"%s\": %d", i ? ", " : "", threads[i].name,
			(int)threads[i].tid);
	fputs("}, \"objects\": {", f);
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		fprintf(f, "%s\"%s\": \"%s\"", i ? ", " : "", objects[i].name,
			object_name(objects[i].addr, buf, sizeof(buf)));
	fputs("}, \"calls\": [", f);
	for (int i = 0; i < n_tallies; i++)
		fprintf(f, "%s{\"thread\": \"%s\", \"object\": \"%s\", "
			"\"type\": \"%s\", \"calls\": %llu, \"long_calls\": %llu, "
			"\"sure_calls\": %llu}",
			i ? ", " : "", tallies[i].thread, tallies[i].object,
			tallies[i].type, (unsigned long long)tallies[i].calls,
			(unsigned long long)tallies[i].long_calls,
			(unsigned long long)tallies[i].sure_calls);
	fputs("]}\n", f);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "slow-iters", required_argument, NULL, 's' },
		{ "slow-us", required_argument, NULL, 'u' },
		{ "min-us", required_argument, NULL, 'm' },
		{ "truth", required_argument, NULL, 't' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	void *(*bodies[])(void *) = {
		mutexer, mutexer, recursive, condwait, condsignal, slowhold,
		slowwait,
	};
	const char *truth = NULL;
	bool wait_signal = false;
	pthread_mutexattr_t attr;
	pthread_t tids[7];
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 's': cfg.slow_iters = atoi(optarg); break;
		case 'u': cfg.slow_us = atoi(optarg); break;
		case 'm': cfg.min_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 't': truth = optarg; break;
		case 'w': wait_signal = true; break;
		default:
			fprintf(stderr, "usage: filters [--iters N] [--slow-iters N] "
				"[--slow-us N] [--min-us N] [--truth FILE] "
				"[--wait-signal]\n");
			return 2;
		}
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec_lock, &attr);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "mutex1" : "mutex0";

		mutex_tallies[i][0] = tally_new(name, "shared_lock", "mutex");
		mutex_tallies[i][1] = tally_new(name, i ? "own_lock1" : "own_lock0",
						"mutex");
	}
	rec_tally = tally_new("recursive", "rec_lock", "rec_mutex");
	condwait_tallies[0] = tally_new("condwait", "cond_lock", "mutex");
	condwait_tallies[1] = tally_new("condwait", "cond", "condvar");
	condsignal_tally = tally_new("condsignal", "cond_lock", "mutex");
	slowhold_tally = tally_new("slowhold", "slow_lock", "mutex");
	slowwait_tally = tally_new("slowwait", "slow_lock", "mutex");
	for (long i = 0; i < 7; i++)
		pthread_create(&tids[i], NULL, bodies[i], (void *)(long)(i == 1));
	while (atomic_load(&n_threads) < 7)
		sleep_us(100);
	if (wait_signal) {
		/* "ready PID name=TID ...": the TIDs a --tid test gives. */
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		printf("ready %d", (int)getpid());
		for (int i = 0; i < 7; i++)
			printf(" %s=%d", threads[i].name, (int)threads[i].tid);
		printf(" cond_lock=%p", (void *)&cond_lock);
		printf("\n");
		fflush(stdout);
		sigwait(&set, &sig);
	}
	atomic_store(&go, 1);
	for (int i = 0; i < 7; i++)
		pthread_join(tids[i], NULL);
	if (truth)
		write_truth(truth);
	return 0;
}
