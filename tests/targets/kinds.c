// SPDX-License-Identifier: GPL-2.0
/*
 * A target for full mode's lock kinds beyond the mutex and the condvar:
 * spinlocks, rwlocks (readers and writers, plain, try, timed and clock
 * calls), semaphores (wait, trywait, timedwait, clockwait) and barriers.
 *
 *   kinds SCENARIO [--iters N] [--hold-us N] [--threads N]
 *         [--truth FILE] [--wait-signal]
 *
 * Scenarios: spin, rwlock, sem, barrier, all (the four in turn).
 *
 * Two threads play phases: the holder takes the lock (or, for a
 * semaphore, nothing), says so through an atomic flag (polled with
 * nanosleep, never a futex), waits until the waiter is about to call,
 * keeps it --hold-us more, then lets it go (sem_post for a semaphore).
 * The waiter first makes the calls that must fail or succeed at once
 * while the lock is held (trylocks), then the call that waits: until the
 * release, or until its timeout (1 ms) runs out.  For a call that must
 * time out the holder lets go only once the call has returned, never
 * after a fixed hold: on a loaded machine a waiter late to its call
 * would otherwise find the lock free, or be woken as its deadline ends.
 * A barrier has --threads threads; in each round one of them, in turn,
 * arrives --hold-us late.
 *
 * Every lock call is made through TIMED(), on one line: the call site's
 * line, its function, the object, the type syncprof should give it, and
 * per site the successful calls, the failed ones and the time in the
 * calls (two clock_gettime(CLOCK_MONOTONIC) reads around each) go to
 * --truth FILE as JSON; so do the holder's hold times (from its lock
 * call's return to its unlock call) and the lines of its releases.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/targetkit.h"

#define MAX_THREADS 16
#define TIMEOUT_US 1000

static struct {
	int iters;
	int hold_us;
	int threads;
} cfg = { .iters = 20, .hold_us = 3000, .threads = 3 };

static pthread_spinlock_t spin;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static pthread_barrier_t barrier;

/* Every call site of a lock function, and what it measured. */
enum site_id {
	SPIN_HOLD, SPIN_TRY_BUSY, SPIN_WAIT, SPIN_TRY_FREE,
	RW_HOLD_W, RW_HOLD_R, RW_TRYRD_BUSY, RW_RDLOCK, RW_TRYWR_BUSY,
	RW_TRYRD_SHARED, RW_WRLOCK, RW_TIMEDRD_TIMEOUT, RW_TIMEDWR,
	RW_CLOCKRD, RW_CLOCKWR_TIMEOUT,
	SEM_TIMED_TIMEOUT, SEM_TRY_POSTED, SEM_CLOCKWAIT, SEM_TRY_EMPTY,
	SEM_WAIT,
	BARRIER_WAIT,
	N_SITES,
};

static struct site {
	const char *name;
	const char *type;	/* what syncprof should call it */
	int line;		/* of the call, from TIMED() */
	const char *func;
	atomic_ullong count, failed, wait_ns;
	uint64_t holds, hold_ns;	/* the holder's: taken to let go */
} sites[N_SITES] = {
	[SPIN_HOLD] = { "spin_hold", "spinlock" },
	[SPIN_TRY_BUSY] = { "spin_try_busy", "spinlock" },
	[SPIN_WAIT] = { "spin_wait", "spinlock" },
	[SPIN_TRY_FREE] = { "spin_try_free", "spinlock" },
	[RW_HOLD_W] = { "rw_hold_w", "rwlock-w" },
	[RW_HOLD_R] = { "rw_hold_r", "rwlock-r" },
	[RW_TRYRD_BUSY] = { "rw_tryrd_busy", "rwlock-r" },
	[RW_RDLOCK] = { "rw_rdlock", "rwlock-r" },
	[RW_TRYWR_BUSY] = { "rw_trywr_busy", "rwlock-w" },
	[RW_TRYRD_SHARED] = { "rw_tryrd_shared", "rwlock-r" },
	[RW_WRLOCK] = { "rw_wrlock", "rwlock-w" },
	[RW_TIMEDRD_TIMEOUT] = { "rw_timedrd_timeout", "rwlock-r" },
	[RW_TIMEDWR] = { "rw_timedwr", "rwlock-w" },
	[RW_CLOCKRD] = { "rw_clockrd", "rwlock-r" },
	[RW_CLOCKWR_TIMEOUT] = { "rw_clockwr_timeout", "rwlock-w" },
	[SEM_TIMED_TIMEOUT] = { "sem_timed_timeout", "sem" },
	[SEM_TRY_POSTED] = { "sem_try_posted", "sem" },
	[SEM_CLOCKWAIT] = { "sem_clockwait", "sem" },
	[SEM_TRY_EMPTY] = { "sem_try_empty", "sem" },
	[SEM_WAIT] = { "sem_wait", "sem" },
	[BARRIER_WAIT] = { "barrier_wait", "barrier" },
};

static void site_done(enum site_id id, uint64_t t0, bool ok, int line,
		      const char *func)
{
	struct site *s = &sites[id];

	atomic_fetch_add(&s->wait_ns, now_ns() - t0);
	atomic_fetch_add(ok ? &s->count : &s->failed, 1);
	s->line = line;
	s->func = func;
}

/* The call, timed, on the caller's line; ok(r) says whether it succeeded. */
#define TIMED(id, call, ok) do { uint64_t t0_ = now_ns(); int r_ = (call); site_done(id, t0_, ok(r_), __LINE__, __func__); } while (0)

#define OK_ZERO(r) ((r) == 0)
#define OK_BARRIER(r) ((r) == 0 || (r) == PTHREAD_BARRIER_SERIAL_THREAD)

/* The phase protocol between the holder and the waiter. */
static atomic_int held;		/* phase the holder holds for */
static atomic_int calling;	/* phase the waiter makes its waiting call in */
static atomic_int done;		/* phase the waiter finished */

static void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(50);
}

/* An absolute time `us` from now on clock `clk`. */
static struct timespec deadline(clockid_t clk, int us)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_nsec += (long)us * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return ts;
}

enum hold { HOLD_SPIN, HOLD_WRITE, HOLD_READ, HOLD_POST };

/* One phase: what the holder holds, and what the waiter does. */
struct phase {
	enum hold hold;
	void (*waiter)(int k);
	bool times_out;		/* released once the waiter's call returned */
};

/* The waiter's part before its waiting call: the holder holds. */
static void announce(int k)
{
	atomic_store(&calling, k);
}

__attribute__((noinline)) static void spin_waiter(int k)
{
	TIMED(SPIN_TRY_BUSY, pthread_spin_trylock(&spin), OK_ZERO);
	announce(k);
	TIMED(SPIN_WAIT, pthread_spin_lock(&spin), OK_ZERO);
	pthread_spin_unlock(&spin);
	TIMED(SPIN_TRY_FREE, pthread_spin_trylock(&spin), OK_ZERO);
	pthread_spin_unlock(&spin);
}

__attribute__((noinline)) static void rw_reader_blocked(int k)
{
	TIMED(RW_TRYRD_BUSY, pthread_rwlock_tryrdlock(&rwlock), OK_ZERO);
	announce(k);
	TIMED(RW_RDLOCK, pthread_rwlock_rdlock(&rwlock), OK_ZERO);
	pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void rw_writer_blocked(int k)
{
	int r;

	TIMED(RW_TRYWR_BUSY, pthread_rwlock_trywrlock(&rwlock), OK_ZERO);
	/* Readers share: this one gets in beside the holder. */
	TIMED(RW_TRYRD_SHARED, r = pthread_rwlock_tryrdlock(&rwlock), OK_ZERO);
	if (!r)
		pthread_rwlock_unlock(&rwlock);
	announce(k);
	TIMED(RW_WRLOCK, pthread_rwlock_wrlock(&rwlock), OK_ZERO);
	pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void rw_timed_reader_times_out(int k)
{
	struct timespec ts = deadline(CLOCK_REALTIME, TIMEOUT_US);
	int r;

	announce(k);
	TIMED(RW_TIMEDRD_TIMEOUT, r = pthread_rwlock_timedrdlock(&rwlock, &ts), OK_ZERO);
	if (!r)
		pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void rw_timed_writer(int k)
{
	struct timespec ts = deadline(CLOCK_REALTIME, 10000000);
	int r;

	announce(k);
	TIMED(RW_TIMEDWR, r = pthread_rwlock_timedwrlock(&rwlock, &ts), OK_ZERO);
	if (!r)
		pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void rw_clock_reader(int k)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC, 10000000);
	int r;

	announce(k);
	TIMED(RW_CLOCKRD, r = pthread_rwlock_clockrdlock(&rwlock, CLOCK_MONOTONIC, &ts), OK_ZERO);
	if (!r)
		pthread_rwlock_unlock(&rwlock);
}

__attribute__((noinline)) static void rw_clock_writer_times_out(int k)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC, TIMEOUT_US);
	int r;

	announce(k);
	TIMED(RW_CLOCKWR_TIMEOUT, r = pthread_rwlock_clockwrlock(&rwlock, CLOCK_MONOTONIC, &ts), OK_ZERO);
	if (!r)
		pthread_rwlock_unlock(&rwlock);
}

/* The post comes after the timeout: the next phase finds it. */
__attribute__((noinline)) static void sem_timed_times_out(int k)
{
	struct timespec ts = deadline(CLOCK_REALTIME, TIMEOUT_US);

	announce(k);
	TIMED(SEM_TIMED_TIMEOUT, sem_timedwait(&sem, &ts), OK_ZERO);
}

__attribute__((noinline)) static void sem_posted_then_clockwait(int k)
{
	struct timespec ts = deadline(CLOCK_MONOTONIC, 10000000);

	TIMED(SEM_TRY_POSTED, sem_trywait(&sem), OK_ZERO);
	announce(k);
	TIMED(SEM_CLOCKWAIT, sem_clockwait(&sem, CLOCK_MONOTONIC, &ts), OK_ZERO);
}

__attribute__((noinline)) static void sem_empty_then_wait(int k)
{
	TIMED(SEM_TRY_EMPTY, sem_trywait(&sem), OK_ZERO);
	announce(k);
	TIMED(SEM_WAIT, sem_wait(&sem), OK_ZERO);
}

static const struct phase spin_phases[] = {
	{ HOLD_SPIN, spin_waiter },
};

static const struct phase rwlock_phases[] = {
	{ HOLD_WRITE, rw_reader_blocked },
	{ HOLD_READ, rw_writer_blocked },
	{ HOLD_WRITE, rw_timed_reader_times_out, true },
	{ HOLD_READ, rw_timed_writer },
	{ HOLD_WRITE, rw_clock_reader },
	{ HOLD_READ, rw_clock_writer_times_out, true },
};

static const struct phase sem_phases[] = {
	{ HOLD_POST, sem_timed_times_out, true },
	{ HOLD_POST, sem_posted_then_clockwait },
	{ HOLD_POST, sem_empty_then_wait },
};

static const struct phase *phases;
static size_t n_phases;

/* The holder's release lines, for the blame rows: spin, rwlock, sem. */
static int release_line[3];
static atomic_int releases;	/* after the call: no tail call, so the
				   return address is the release's line */

/* Takes the phase's lock; returns when it was taken and the site. */
__attribute__((noinline)) static uint64_t holder_take(enum hold hold,
						      enum site_id *id)
{
	switch (hold) {
	case HOLD_SPIN:
		TIMED(*id = SPIN_HOLD, pthread_spin_lock(&spin), OK_ZERO);
		break;
	case HOLD_WRITE:
		TIMED(*id = RW_HOLD_W, pthread_rwlock_wrlock(&rwlock), OK_ZERO);
		break;
	case HOLD_READ:
		TIMED(*id = RW_HOLD_R, pthread_rwlock_rdlock(&rwlock), OK_ZERO);
		break;
	case HOLD_POST:
		*id = N_SITES;
		break;
	}
	return now_ns();
}

/* Lets it go; the hold, from the take's return to the unlock's call. */
__attribute__((noinline)) static void holder_release(enum hold hold,
						     enum site_id id,
						     uint64_t taken)
{
	if (id != N_SITES) {
		sites[id].hold_ns += now_ns() - taken;
		sites[id].holds++;
	}
	switch (hold) {
	case HOLD_SPIN:
		release_line[0] = __LINE__; pthread_spin_unlock(&spin);
		break;
	case HOLD_WRITE:
	case HOLD_READ:
		release_line[1] = __LINE__; pthread_rwlock_unlock(&rwlock);
		break;
	case HOLD_POST:
		release_line[2] = __LINE__; sem_post(&sem);
		break;
	}
	atomic_fetch_add(&releases, 1);
}

static void *holder(void *arg)
{
	int k = 0;

	(void)arg;
	for (int i = 0; i < cfg.iters; i++) {
		for (size_t p = 0; p < n_phases; p++) {
			enum site_id id;
			uint64_t taken;

			k++;
			taken = holder_take(phases[p].hold, &id);
			atomic_store(&held, k);
			wait_until(&calling, k);
			if (phases[p].times_out) {
				wait_until(&done, k);
				holder_release(phases[p].hold, id, taken);
				continue;
			}
			sleep_us(cfg.hold_us);
			holder_release(phases[p].hold, id, taken);
			wait_until(&done, k);
		}
	}
	return NULL;
}

static void *waiter(void *arg)
{
	int k = 0;

	(void)arg;
	for (int i = 0; i < cfg.iters; i++) {
		for (size_t p = 0; p < n_phases; p++) {
			k++;
			wait_until(&held, k);
			phases[p].waiter(k);
			atomic_store(&done, k);
		}
	}
	return NULL;
}

static void run_phases(const struct phase *list, size_t n)
{
	pthread_t h, w;

	phases = list;
	n_phases = n;
	atomic_store(&held, 0);
	atomic_store(&calling, 0);
	atomic_store(&done, 0);
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
}

__attribute__((noinline)) static void barrier_round(long self, int turn)
{
	if (turn % cfg.threads == self)
		sleep_us(cfg.hold_us);	/* this round's late arrival */
	TIMED(BARRIER_WAIT, pthread_barrier_wait(&barrier), OK_BARRIER);
}

static void *barrier_thread(void *arg)
{
	for (int i = 0; i < cfg.iters; i++)
		barrier_round((long)arg, i);
	return NULL;
}

static void run_barrier(void)
{
	pthread_t t[MAX_THREADS];

	pthread_barrier_init(&barrier, NULL, (unsigned int)cfg.threads);
	for (long i = 0; i < cfg.threads; i++)
		pthread_create(&t[i], NULL, barrier_thread, (void *)i);
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(t[i], NULL);
}

/* The object a site's type works on. */
static const void *site_object(const struct site *s)
{
	if (!strcmp(s->type, "spinlock"))
		return (const void *)(uintptr_t)&spin;
	if (!strcmp(s->type, "sem"))
		return &sem;
	if (!strcmp(s->type, "barrier"))
		return &barrier;
	return &rwlock;
}

static void write_truth(const char *path, const char *scenario)
{
	FILE *f = fopen(path, "w");
	bool first = true;

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "{\"scenario\": \"%s\", \"pid\": %d, \"iters\": %d, "
		"\"hold_us\": %d, \"threads\": %d, \"objects\": {\"spin\": \"%p\", "
		"\"rwlock\": \"%p\", \"sem\": \"%p\", \"barrier\": \"%p\"}, "
		"\"releases\": {\"spin\": %d, \"rwlock\": %d, \"sem\": %d}, "
		"\"sites\": [", scenario, (int)getpid(), cfg.iters, cfg.hold_us,
		cfg.threads, (void *)(uintptr_t)&spin, (void *)&rwlock, (void *)&sem,
		(void *)&barrier, release_line[0], release_line[1],
		release_line[2]);
	for (int i = 0; i < N_SITES; i++) {
		const struct site *s = &sites[i];

		if (!s->line)
			continue;	/* not in this scenario */
		fprintf(f, "%s{\"name\": \"%s\", \"type\": \"%s\", "
			"\"object\": \"%p\", \"line\": %d, \"function\": \"%s\", "
			"\"count\": %llu, \"failed\": %llu, \"wait_ns\": %llu, "
			"\"holds\": %llu, \"hold_ns\": %llu}",
			first ? "" : ", ", s->name, s->type, site_object(s), s->line,
			s->func, (unsigned long long)atomic_load(&s->count),
			(unsigned long long)atomic_load(&s->failed),
			(unsigned long long)atomic_load(&s->wait_ns),
			(unsigned long long)s->holds,
			(unsigned long long)s->hold_ns);
		first = false;
	}
	fprintf(f, "]}\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "threads", required_argument, NULL, 't' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *truth = NULL, *scenario;
	bool wait_signal = false, all;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'T': truth = optarg; break;
		case 'w': wait_signal = true; break;
		default: return 2;
		}
	}
	if (optind >= argc || cfg.threads < 2 || cfg.threads > MAX_THREADS ||
	    cfg.iters < 1 || cfg.hold_us <= 2 * TIMEOUT_US) {
		fprintf(stderr, "usage: kinds spin|rwlock|sem|barrier|all "
			"[--iters N] [--hold-us N > %d] [--threads 2..%d] "
			"[--truth FILE] [--wait-signal]\n", 2 * TIMEOUT_US,
			MAX_THREADS);
		return 2;
	}
	scenario = argv[optind];
	all = !strcmp(scenario, "all");
	if (!all && strcmp(scenario, "spin") && strcmp(scenario, "rwlock") &&
	    strcmp(scenario, "sem") && strcmp(scenario, "barrier")) {
		fprintf(stderr, "kinds: unknown scenario '%s'\n", scenario);
		return 2;
	}
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	sem_init(&sem, 0, 0);
	if (wait_signal)
		wait_for_go();
	if (all || !strcmp(scenario, "spin"))
		run_phases(spin_phases, sizeof(spin_phases) / sizeof(spin_phases[0]));
	if (all || !strcmp(scenario, "rwlock"))
		run_phases(rwlock_phases,
			   sizeof(rwlock_phases) / sizeof(rwlock_phases[0]));
	if (all || !strcmp(scenario, "sem"))
		run_phases(sem_phases, sizeof(sem_phases) / sizeof(sem_phases[0]));
	if (all || !strcmp(scenario, "barrier"))
		run_barrier();
	if (truth)
		write_truth(truth, scenario);
	return 0;
}
