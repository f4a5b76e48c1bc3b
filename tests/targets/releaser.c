// SPDX-License-Identifier: GPL-2.0
/*
 * A target for --blame, --hist and --hold: threads release locks at known
 * lines after known holds, and every waiter times its own wait with
 * clock_gettime(CLOCK_MONOTONIC) around the call.  A holder lets go only
 * once its waiter sleeps in the futex system call (read from
 * /proc/self/task/TID/syscall), so every measured wait blocks, and is
 * woken by the release the truth names.  The ground truth goes to
 * --truth FILE as JSON: per release line, the waits it ended and their
 * sum; per hold marker, the holds and their sum.
 *
 *   releaser SCENARIO [--iters N] [--hold-us N] [--hold2-us N]
 *            [--threads N] [--truth FILE] [--wait-signal]
 *
 * Scenarios (lines are marked RELEASE:name, waits CALLSITE:name, lock
 * calls whose holds are timed HOLD:name):
 *   two        holders A and B take big_lock in turns, hold --hold-us (A)
 *              or --hold2-us (B) after the waiter blocked, and unlock at
 *              RELEASE:unlock_a or RELEASE:unlock_b; the truth also has
 *              the waiter's own log2 histogram of its waits
 *   later      two waiters queue on big_lock, X first, then W; the
 *              holder's unlock (RELEASE:first) wakes X, which holds
 *              --hold2-us and unlocks at RELEASE:second, waking W: W's
 *              whole wait was ended by the later release
 *   condvar    a signaller signals cond at RELEASE:signal --hold-us after
 *              the waiter blocked in pthread_cond_wait (unlocking the
 *              mutex first, so taking it back never blocks)
 *   broadcast  --threads waiters on cond, woken by one broadcast at
 *              RELEASE:broadcast
 *   requeue    a condvar and a mutex of raw futex words: the waiter waits
 *              on the condvar word; --hold-us later the broadcaster, who
 *              holds the mutex word, requeues it onto the mutex
 *              (FUTEX_CMP_REQUEUE) at RELEASE:requeue, then unlocks the
 *              mutex at RELEASE:requeue_unlock --hold2-us later
 *   signal     the waiter blocks on big_lock; halfway through the hold a
 *              handled signal interrupts its futex wait (glibc waits
 *              again); the holder unlocks at RELEASE:after_signal
 *   timeout    pthread_cond_timedwait of --hold-us that nobody signals
 *   exit       the waiter blocks on big_lock; --hold-us later the process
 *              exits with it still waiting
 *   hold       one thread, timing its own holds from the return of each
 *              lock call to the call of its unlock: big_lock
 *              (HOLD:mutex), a recursive mutex taken twice (HOLD:rec,
 *              the outermost hold), and a mutex held around a condvar
 *              wait that times out (HOLD:cond_lock up to the wait,
 *              HOLD:cond_wait from its return to the unlock); the
 *              truth's hold_spans has each HOLD:mutex hold's start and end
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
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

#define MAX_THREADS 8
#define HIST_SLOTS 48

static struct {
	int iters;
	int hold_us;
	int hold2_us;
	int threads;
} cfg = { .iters = 20, .hold_us = 3000, .hold2_us = 1000, .threads = 3 };

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t rec_lock;
/* requeue: a condvar word and a mutex word (0 free, 2 held, waiters) */
static struct {
	atomic_int cv;
	int pad[7];
	atomic_int m;
	int pad2[7];
} words;

static atomic_int turn;		/* the iteration being played */
static atomic_int done;		/* the last iteration its waiter finished */
static atomic_int ready;	/* waiters that reached their wait */
static int generation;		/* condvar predicate, under cond_lock */
static const char *scenario;

/* What a release line ended, and what a hold marker held. */
struct tally {
	const char *name;
	uint64_t count;
	uint64_t ns;
};

static struct tally releases[8];
static struct tally holds[8];
static uint64_t hist[HIST_SLOTS];
static uint64_t waits, wait_ns, failed;
static pid_t tids[MAX_THREADS];
static int n_waiters;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static void tally(struct tally *table, const char *name, uint64_t ns)
{
	pthread_mutex_lock(&truth_lock);
	for (int i = 0; i < 8; i++) {
		if (!table[i].name)
			table[i].name = name;
		if (!strcmp(table[i].name, name)) {
			table[i].count++;
			table[i].ns += ns;
			break;
		}
	}
	pthread_mutex_unlock(&truth_lock);
}

/* A waiter's own measured wait, ended by the release `by`. */
static void waited(const char *by, uint64_t ns)
{
	size_t slot = 0;

	for (uint64_t v = ns; v; v >>= 1)
		slot++;
	if (slot >= HIST_SLOTS)
		slot = HIST_SLOTS - 1;
	pthread_mutex_lock(&truth_lock);
	hist[slot]++;
	waits++;
	wait_ns += ns;
	pthread_mutex_unlock(&truth_lock);
	if (by)
		tally(releases, by, ns);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void until(atomic_int *flag, int value)
{
	while (atomic_load(flag) < value)
		sleep_us(50);
}

static void until_tid(int i)
{
	while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
		sleep_us(50);
}

static void set_tid(int i)
{
	__atomic_store_n(&tids[i], gettid_(), __ATOMIC_RELEASE);
}

/* --- two, later, signal: mutex waits ---------------------------------- */

/* The waiter's call, in a function of its own. */
__attribute__((noinline)) static uint64_t wait_big_lock(void)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&big_lock); /* CALLSITE:wait_big_lock */
	t0 = now_ns() - t0;
	pthread_mutex_unlock(&big_lock);
	return t0;
}

/*
 * Functions of their own: the counts after the calls keep them out of
 * tail position, and the two functions apart (gcc merges identical ones).
 */
static volatile int unlocks_a, unlocks_b;

__attribute__((noinline)) static void unlock_a(void)
{
	pthread_mutex_unlock(&big_lock); /* RELEASE:unlock_a */
	unlocks_a++;
}

__attribute__((noinline)) static void unlock_b(void)
{
	pthread_mutex_unlock(&big_lock); /* RELEASE:unlock_b */
	unlocks_b++;
}

/* two: holder 0 plays the odd turns, holder 1 the even ones. */
static void *two_holder(void *arg)
{
	int me = (int)(intptr_t)arg;

	for (int i = 1 + me; i <= cfg.iters; i += 2) {
		until(&done, i - 1);
		pthread_mutex_lock(&big_lock);
		atomic_store(&turn, i);
		wait_blocked_in_futex(tids[0]);
		sleep_us(me ? cfg.hold2_us : cfg.hold_us);
		if (me)
			unlock_b();
		else
			unlock_a();
	}
	return NULL;
}

static void *two_waiter(void *arg)
{
	set_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		until(&turn, i);
		waited(i % 2 ? "unlock_a" : "unlock_b", wait_big_lock());
		atomic_store(&done, i);
	}
	return arg;
}

/* later: X (tids[1]) queues first, W (tids[0]) second. */
static void *later_x(void *arg)
{
	set_tid(1);
	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t t0;

		until(&turn, i);
		t0 = now_ns();
		pthread_mutex_lock(&big_lock); /* CALLSITE:later_x */
		waited("first", now_ns() - t0);
		wait_blocked_in_futex(tids[0]);
		sleep_us(cfg.hold2_us);
		pthread_mutex_unlock(&big_lock); /* RELEASE:second */
		until(&done, i);
	}
	return arg;
}

static void *later_w(void *arg)
{
	set_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		until(&turn, i);
		wait_blocked_in_futex(tids[1]);
		waited("second", wait_big_lock());
		atomic_store(&done, i);
	}
	return arg;
}

static void later_holder(void)
{
	until_tid(0);
	until_tid(1);
	for (int i = 1; i <= cfg.iters; i++) {
		pthread_mutex_lock(&big_lock);
		atomic_store(&turn, i);
		wait_blocked_in_futex(tids[1]);
		wait_blocked_in_futex(tids[0]);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&big_lock); /* RELEASE:first */
		until(&done, i);
	}
}

static void on_signal(int sig)
{
	(void)sig;
}

static void *signal_waiter(void *arg)
{
	set_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		until(&turn, i);
		waited("after_signal", wait_big_lock());
		atomic_store(&done, i);
	}
	return arg;
}

static void signal_holder(pthread_t waiter)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGUSR2, &sa, NULL);	/* no SA_RESTART */
	until_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		pthread_mutex_lock(&big_lock);
		atomic_store(&turn, i);
		wait_blocked_in_futex(tids[0]);
		sleep_us(cfg.hold_us / 2);
		pthread_kill(waiter, SIGUSR2);
		sleep_us(cfg.hold_us / 2);
		wait_blocked_in_futex(tids[0]);
		pthread_mutex_unlock(&big_lock); /* RELEASE:after_signal */
		until(&done, i);
	}
}

/* --- condvar, broadcast -------------------------------------------------- */

__attribute__((noinline)) static uint64_t wait_cond(int iteration)
{
	uint64_t t0;

	pthread_mutex_lock(&cond_lock);
	atomic_fetch_add(&ready, 1);
	t0 = now_ns();
	while (generation < iteration)
		pthread_cond_wait(&cond, &cond_lock); /* CALLSITE:wait_cond */
	t0 = now_ns() - t0;
	pthread_mutex_unlock(&cond_lock);
	return t0;
}

static void *cond_waiter(void *arg)
{
	int me = (int)(intptr_t)arg;

	set_tid(me);
	for (int i = 1; i <= cfg.iters; i++) {
		until(&turn, i);
		waited(!strcmp(scenario, "condvar") ? "signal" : "broadcast",
		       wait_cond(i));
		atomic_fetch_add(&done, 1);
	}
	return NULL;
}

static void cond_releaser(void)
{
	for (int i = 1; i <= cfg.iters; i++) {
		atomic_store(&ready, 0);
		atomic_store(&turn, i);
		until(&ready, n_waiters);
		for (int w = 0; w < n_waiters; w++) {
			until_tid(w);
			wait_blocked_in_futex(tids[w]);
		}
		sleep_us(cfg.hold_us);
		pthread_mutex_lock(&cond_lock);
		generation = i;
		pthread_mutex_unlock(&cond_lock);
		if (n_waiters == 1)
			pthread_cond_signal(&cond); /* RELEASE:signal */
		else
			pthread_cond_broadcast(&cond); /* RELEASE:broadcast */
		until(&done, i * n_waiters);
	}
}

/* --- requeue: raw futex words -------------------------------------------- */

/* A macro: each call's line is its caller's, as the tests expect. */
#define futex(word, op, val, timeout_or_val2, word2, val3) \
	syscall(SYS_futex, word, op, val, timeout_or_val2, word2, val3)

static uint64_t requeued_at;	/* when the broadcaster requeued */

static void *requeue_waiter(void *arg)
{
	set_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		int seq;
		uint64_t t0, t1;

		until(&turn, i);
		seq = atomic_load(&words.cv);
		t0 = now_ns();
		while (atomic_load(&words.cv) == seq)
			futex(&words.cv, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0); /* CALLSITE:requeue_wait */
		/* Requeued onto the mutex word: woken when it is ours. */
		t1 = now_ns();
		tally(releases, "requeue", requeued_at - t0);
		tally(releases, "requeue_unlock", t1 - requeued_at);
		waited(NULL, t1 - t0);
		atomic_store(&words.m, 0);
		atomic_store(&done, i);
	}
	return arg;
}

static void requeue_broadcaster(void)
{
	until_tid(0);
	for (int i = 1; i <= cfg.iters; i++) {
		int seq;

		atomic_store(&words.m, 2);	/* held, with a waiter to come */
		atomic_store(&turn, i);
		wait_blocked_in_futex(tids[0]);
		sleep_us(cfg.hold_us);
		seq = atomic_fetch_add(&words.cv, 1) + 1;
		requeued_at = now_ns();
		futex(&words.cv, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)(long)INT_MAX, &words.m, seq); /* RELEASE:requeue */
		sleep_us(cfg.hold2_us);
		atomic_store(&words.m, 1);	/* handed over: the waiter's now */
		futex(&words.m, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* RELEASE:requeue_unlock */
		until(&done, i);
	}
}

/* --- timeout, exit ------------------------------------------------------- */

__attribute__((noinline)) static void timed_out_waits(void)
{
	for (int i = 0; i < cfg.iters; i++) {
		struct timespec ts;
		uint64_t t0;
		int err;

		pthread_mutex_lock(&cond_lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)cfg.hold_us * 1000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		t0 = now_ns();
		err = pthread_cond_timedwait(&cond, &cond_lock, &ts); /* CALLSITE:timedwait */
		t0 = now_ns() - t0;
		pthread_mutex_unlock(&cond_lock);
		pthread_mutex_lock(&truth_lock);
		wait_ns += t0;
		if (err)
			failed++;
		else
			waits++;
		pthread_mutex_unlock(&truth_lock);
	}
}

static uint64_t exit_t0;

static void *exit_waiter(void *arg)
{
	set_tid(0);
	exit_t0 = now_ns();
	pthread_mutex_lock(&big_lock); /* CALLSITE:exit_wait */
	return arg;	/* never: the process exits first */
}

/* --- hold ---------------------------------------------------------------- */

/*
 * Binds, before the first timed hold, every function a hold calls:
 * lazy binding inside the first one (the dynamic linker resolving
 * clock_gettime) would be hold time the holder's clock does not see.
 */
static void bind_hold_functions(void)
{
	static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t warm_cond = PTHREAD_COND_INITIALIZER;
	struct timespec ts = { 0, 0 };

	now_ns();
	sleep_us(1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec--;
	pthread_mutex_lock(&warm_lock);
	pthread_cond_timedwait(&warm_cond, &warm_lock, &ts);
	pthread_mutex_unlock(&warm_lock);
}

/*
 * Each hold ends with the clock read just before its unlock; the tallies
 * (which lock a mutex of their own) wait until after it.  cond_lock's
 * hold is also timed from just before its lock call (cond_lock_call): a
 * thread preempted between the lock's return and the clock read is
 * holding the lock, which only this bound counts.
 */
/* When each HOLD:mutex hold began and ended (the truth's hold_spans). */
static uint64_t (*hold_spans)[2];
static int n_hold_spans;

__attribute__((noinline)) static void timed_holds(void)
{
	bind_hold_functions();
	hold_spans = calloc((size_t)cfg.iters, sizeof(*hold_spans));
	for (int i = 0; i < cfg.iters; i++) {
		uint64_t t, mutex_ns, rec_ns, cond_lock_ns, cond_wait_ns;
		uint64_t called, cond_lock_call_ns;
		struct timespec ts;

		pthread_mutex_lock(&big_lock); /* HOLD:mutex */
		t = now_ns();
		sleep_us(cfg.hold_us);
		mutex_ns = now_ns() - t;
		pthread_mutex_unlock(&big_lock);
		if (hold_spans) {
			hold_spans[n_hold_spans][0] = t;
			hold_spans[n_hold_spans++][1] = t + mutex_ns;
		}

		pthread_mutex_lock(&rec_lock); /* HOLD:rec */
		t = now_ns();
		pthread_mutex_lock(&rec_lock); /* HOLD:rec_inner */
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&rec_lock);
		sleep_us(cfg.hold2_us);
		rec_ns = now_ns() - t;
		pthread_mutex_unlock(&rec_lock);

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000 + (long)cfg.hold2_us * 1000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		called = now_ns();
		pthread_mutex_lock(&cond_lock); /* HOLD:cond_lock */
		t = now_ns();
		sleep_us(cfg.hold2_us);
		cond_lock_ns = now_ns() - t;
		cond_lock_call_ns = cond_lock_ns + (t - called);
		pthread_cond_timedwait(&cond, &cond_lock, &ts); /* HOLD:cond_wait */
		t = now_ns();
		sleep_us(cfg.hold_us);
		cond_wait_ns = now_ns() - t;
		pthread_mutex_unlock(&cond_lock);

		tally(holds, "mutex", mutex_ns);
		tally(holds, "rec", rec_ns);
		tally(holds, "cond_lock", cond_lock_ns);
		tally(holds, "cond_lock_call", cond_lock_call_ns);
		tally(holds, "cond_wait", cond_wait_ns);
		sleep_us(200);
	}
}

/* --- truth --------------------------------------------------------------- */

static void print_tallies(FILE *f, const char *name, const struct tally *t)
{
	fprintf(f, ", \"%s\": {", name);
	for (int i = 0; i < 8 && t[i].name; i++)
		fprintf(f, "%s\"%s\": {\"count\": %llu, \"ns\": %llu}",
			i ? ", " : "", t[i].name, (unsigned long long)t[i].count,
			(unsigned long long)t[i].ns);
	fputc('}', f);
}

static void write_truth(const char *path)
{
	FILE *f = path ? fopen(path, "w") : NULL;
	bool first = true;

	if (!f)
		return;
	fprintf(f, "{\"scenario\": \"%s\", \"pid\": %d, \"big_lock\": \"%p\", "
		"\"cond\": \"%p\", \"cond_lock\": \"%p\", \"rec_lock\": \"%p\", "
		"\"cv_word\": \"%p\", \"m_word\": \"%p\", \"count\": %llu, "
		"\"failed\": %llu, \"wait_ns\": %llu, \"tids\": [",
		scenario, (int)getpid(), (void *)&big_lock, (void *)&cond,
		(void *)&cond_lock, (void *)&rec_lock, (void *)&words.cv,
		(void *)&words.m, (unsigned long long)waits,
		(unsigned long long)failed, (unsigned long long)wait_ns);
	for (int i = 0; i < MAX_THREADS && tids[i]; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)tids[i]);
	fputc(']', f);
	print_tallies(f, "releases", releases);
	print_tallies(f, "holds", holds);
	fputs(", \"hold_spans\": [", f);
	for (int i = 0; i < n_hold_spans; i++)
		fprintf(f, "%s[%llu, %llu]", i ? ", " : "",
			(unsigned long long)hold_spans[i][0],
			(unsigned long long)hold_spans[i][1]);
	fputc(']', f);
	fputs(", \"hist\": [", f);
	for (int k = 0; k < HIST_SLOTS; k++) {
		if (!hist[k])
			continue;
		fprintf(f, "%s[%llu, %llu]", first ? "" : ", ",
			k ? 1ull << (k - 1) : 0ull, (unsigned long long)hist[k]);
		first = false;
	}
	fputs("]}\n", f);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "hold2-us", required_argument, NULL, 'H' },
		{ "threads", required_argument, NULL, 't' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *truth_path = NULL;
	bool go_signal = false;
	pthread_mutexattr_t attr;
	pthread_t threads[MAX_THREADS];
	int opt, n = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 'H': cfg.hold2_us = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'w': go_signal = true; break;
		default: return 2;
		}
	}
	if (optind >= argc || cfg.threads < 1 || cfg.threads > MAX_THREADS) {
		fprintf(stderr, "usage: releaser SCENARIO [--iters N] [--hold-us N] "
			"[--hold2-us N] [--threads N] [--truth FILE] [--wait-signal]\n");
		return 2;
	}
	scenario = argv[optind];
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec_lock, &attr);
	if (go_signal)
		wait_for_go();

	if (!strcmp(scenario, "two")) {
		pthread_create(&threads[n++], NULL, two_waiter, NULL);
		until_tid(0);
		pthread_create(&threads[n++], NULL, two_holder, (void *)0);
		pthread_create(&threads[n++], NULL, two_holder, (void *)1);
	} else if (!strcmp(scenario, "later")) {
		pthread_create(&threads[n++], NULL, later_w, NULL);
		pthread_create(&threads[n++], NULL, later_x, NULL);
		later_holder();
	} else if (!strcmp(scenario, "signal")) {
		pthread_create(&threads[n++], NULL, signal_waiter, NULL);
		signal_holder(threads[0]);
	} else if (!strcmp(scenario, "condvar") || !strcmp(scenario, "broadcast")) {
		n_waiters = !strcmp(scenario, "condvar") ? 1 : cfg.threads;
		for (int w = 0; w < n_waiters; w++)
			pthread_create(&threads[n++], NULL, cond_waiter,
				       (void *)(intptr_t)w);
		cond_releaser();
	} else if (!strcmp(scenario, "requeue")) {
		pthread_create(&threads[n++], NULL, requeue_waiter, NULL);
		requeue_broadcaster();
	} else if (!strcmp(scenario, "timeout")) {
		timed_out_waits();
	} else if (!strcmp(scenario, "exit")) {
		pthread_mutex_lock(&big_lock);
		pthread_create(&threads[n++], NULL, exit_waiter, NULL);
		until_tid(0);
		wait_blocked_in_futex(tids[0]);
		sleep_us(cfg.hold_us);
		wait_ns = now_ns() - exit_t0;
		failed = 1;
		write_truth(truth_path);
		fflush(NULL);
		exit(0);	/* the waiter still waits */
	} else if (!strcmp(scenario, "hold")) {
		timed_holds();
	} else {
		fprintf(stderr, "releaser: unknown scenario '%s'\n", scenario);
		return 2;
	}
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	write_truth(truth_path);
	return 0;
}
