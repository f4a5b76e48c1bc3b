// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for make bench.  Each prints one JSON line: how long the
 * operations took (ns per op) and, with --truth, what the workload
 * measured itself around every lock call with clock_gettime: calls,
 * summed wait, the objects' addresses.
 *
 *   lockbench uncontended|contended|pingpong|many|handoff|condhandoff|
 *             futexpp|futexwake|getppid|hammer
 *             futexpp|futexwake|getppid|pipepp
 *             [--threads N] [--ops N] [--hold-ns N] [--locks N] [--pin CPU]
 *             [--rounds N] [--depth N] [--kind K] [--truth]
 *
 * uncontended: each thread locks its own mutex (the fast path); with
 *              --kind spin|rdlock|wrlock|sem|trywrlock, its own spinlock,
 *              rwlock (read or write; trywrlock: pthread_rwlock_trywrlock)
 *              or semaphore (sem_wait, then sem_post) instead: what full
 *              mode's probe on each kind's function costs; --kind nested:
 *              its own mutex, then a second one inside it (--lock-order's
 *              pair on every op).
 * contended:   all threads on one mutex, held --hold-ns (busy) each time.
 * pingpong:    two threads hand a token back and forth through a condvar.
 * many:        --threads threads on --locks mutexes, short holds.
 * handoff:     two threads, one mutex; each op the holder takes it, waits
 *              until the waiter's pthread_mutex_lock is asleep in the
 *              futex system call (read from /proc/self/task/TID/syscall),
 *              holds it --hold-ns more and lets go.  Every one of the
 *              waiter's --ops lock calls blocks, by construction.
 * condhandoff: the same with a condvar: the signaller waits until the
 *              waiter's pthread_cond_wait is asleep in the kernel, holds
 *              --hold-ns, then sets the predicate and signals (after
 *              unlocking, so taking the mutex back never blocks).
 * futexpp:     two threads hand a turn back and forth through a bare futex
 *              word: FUTEX_WAIT while it is the other's turn, then
 *              FUTEX_WAKE.  calls = FUTEX_WAIT calls made.
 * futexwake:   each thread calls futex(FUTEX_WAKE) on its own word that
 *              nobody waits on: what every futex call pays, never blocking.
 * getppid:     each thread calls getppid: what any other system call pays.
 * hammer:      --threads threads on one GLib-style mutex (GMutex: a futex
 *              word, 0/1/2, waits through syscall(SYS_futex) in a slow
 *              path), held --hold-ns and left --hold-ns between takes:
 *              many short blocking waits.  Each thread first recurses
 *              --depth frames, so every wait has a stack that deep.
 *              calls = blocking waits (FUTEX_WAIT calls made).
 * pipepp:      two threads pass a byte back and forth through two pipes, no
 *              futex and no lock: with --pin, every op is two context
 *              switches, the workload for what a context switch costs.
 *
 * --rounds N runs the workload N times over in one process (not the
 * handoffs), the workers starting together each time; ns_per_op is then
 * the fastest round's (time only adds: the fastest round is the one other
 * work on the machine disturbed least), round_ns_per_op lists them all.
 *
 * --pin CPU runs every worker on that one CPU: a ping-pong then does one
 * wakeup and one blocking wait per op, always, which makes the cost of a
 * blocking wait measurable on a noisy machine.
 *
 * "blocking_calls" in the JSON is the number of calls that were made to
 * block (the two handoff workloads); null where it is not known.
 * "sleeps" is the workers' voluntary context switches during the run
 * (getrusage RUSAGE_THREAD): how often they went to sleep in the kernel,
 * futex waits and anything else, profiled or not; "switches" adds the
 * involuntary ones (a woken thread preempting its waker).  Both are
 * summed over all rounds.
 *
 * Nothing outside the measured calls blocks in the kernel: threads start
 * on an atomic flag and report their end through an atomic counter, both
 * polled with nanosleep, and main joins them with pthread_tryjoin_np, so
 * a profiler that sees only blocking waits sees nothing of the harness
 * (the uncontended workload must show zero events).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_LOCKS 64
#define MAX_ROUNDS 64

struct worker {
	pthread_t thread;
	int index;
	int tid;			/* for the handoff partner's /proc read */
	pthread_mutex_t own;		/* uncontended */
	pthread_mutex_t own_inner;	/* uncontended --kind nested */
	pthread_spinlock_t own_spin;	/* uncontended --kind ... */
	pthread_rwlock_t own_rw;
	sem_t own_sem;
	uint64_t calls;
	uint64_t wait_ns;
	uint64_t start_ns[MAX_ROUNDS], end_ns[MAX_ROUNDS]; /* a round spans all workers' */
	long sleeps;			/* voluntary context switches in it */
	long switches;			/* all its context switches */
} __attribute__((aligned(64)));

static struct {
	const char *name;
	const char *kind;		/* uncontended: the lock kind */
	int threads, locks, truth, pin, rounds;
	long ops;
	uint64_t hold_ns;
} cfg = { .kind = "mutex", .threads = 2, .ops = 20000, .hold_ns = 2000, .locks = 4, .pin = -1,
	.rounds = 1 };

static struct worker workers[MAX_THREADS];
static pthread_mutex_t shared[MAX_LOCKS];
static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int pp_turn;
static int fx_turn;
static int pipes[2][2];		/* pipepp: to thread 1, to thread 0 */
static int go, finished, started;
static int gm_word;		/* hammer: the GMutex */
static int depth;		/* hammer: frames before the loop */

/* The handoff protocol: sequence numbers published by each side. */
static long ho_ready, ho_done;
static int ho_pred;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	nanosleep(&ts, NULL);
}

/* Wait for the partner's sequence number without a futex. */
static void await(long *seq, long value)
{
	while (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != value)
		sched_yield();
}

/* Wait until thread tid is asleep in the futex system call. */
static void await_futex_sleep(int fd)
{
	char want[16], buf[128];
	int len = snprintf(want, sizeof(want), "%d ", (int)SYS_futex);

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		if (n < 0) {
			perror("lockbench: read /proc/self/task/TID/syscall");
			exit(1);
		}
		buf[n] = '\0';
		if (!strncmp(buf, want, (size_t)len))
			return;
		sched_yield();
	}
}

static int open_syscall_file(int tid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* One lock call, timed by the workload itself when --truth. */
static inline void lock(struct worker *w, pthread_mutex_t *m)
{
	if (cfg.truth) {
		uint64_t t0 = now_ns();

		pthread_mutex_lock(m);
		w->wait_ns += now_ns() - t0;
	} else {
		pthread_mutex_lock(m);
	}
	w->calls++;
}

/* --kind as one letter: m, s(pin), r(d), w(r), t(rywr), e (sem), n(ested). */
static char kind_code(void)
{
	static const char *const names[] = { "mutex", "spin", "rdlock",
					     "wrlock", "trywrlock", "sem",
					     "nested" };

	for (int i = 0; i < 7; i++)
		if (!strcmp(cfg.kind, names[i]))
			return "msrwten"[i];
	return 0;
}

/* One lock call of another kind, timed as lock() does. */
static inline void lock_kind(struct worker *w, char kind)
{
	uint64_t t0 = cfg.truth ? now_ns() : 0;

	switch (kind) {
	case 's': pthread_spin_lock(&w->own_spin); break;
	case 'r': pthread_rwlock_rdlock(&w->own_rw); break;
	case 'w': pthread_rwlock_wrlock(&w->own_rw); break;
	case 't': pthread_rwlock_trywrlock(&w->own_rw); break;
	default: sem_wait(&w->own_sem); break;
	}
	if (cfg.truth)
		w->wait_ns += now_ns() - t0;
	w->calls++;
}

static void *run_uncontended(struct worker *w)
{
	char kind = kind_code();

	if (kind == 'm') {
		for (long i = 0; i < cfg.ops; i++) {
			lock(w, &w->own);
			pthread_mutex_unlock(&w->own);
		}
		return NULL;
	}
	if (kind == 'n') {	/* two lock calls an op, one inside the other */
		for (long i = 0; i < cfg.ops; i++) {
			lock(w, &w->own);
			lock(w, &w->own_inner);
			pthread_mutex_unlock(&w->own_inner);
			pthread_mutex_unlock(&w->own);
		}
		return NULL;
	}
	for (long i = 0; i < cfg.ops; i++) {
		lock_kind(w, kind);
		if (kind == 's')
			pthread_spin_unlock(&w->own_spin);
		else if (kind == 'r' || kind == 'w' || kind == 't')
			pthread_rwlock_unlock(&w->own_rw);
		else
			sem_post(&w->own_sem);
	}
	return NULL;
}

static void *run_contended(struct worker *w)
{
	for (long i = 0; i < cfg.ops; i++) {
		lock(w, &shared[0]);
		spin_ns(cfg.hold_ns);
		pthread_mutex_unlock(&shared[0]);
	}
	return NULL;
}

static void *run_many(struct worker *w)
{
	unsigned int seed = (unsigned int)w->index * 2654435761u;

	for (long i = 0; i < cfg.ops; i++) {
		pthread_mutex_t *m = &shared[rand_r(&seed) % cfg.locks];

		lock(w, m);
		spin_ns(cfg.hold_ns);
		pthread_mutex_unlock(m);
	}
	return NULL;
}

static void *run_futexpp(struct worker *w)
{
	int other = !w->index;

	for (long i = 0; i < cfg.ops; i++) {
		while (__atomic_load_n(&fx_turn, __ATOMIC_ACQUIRE) != w->index) {
			uint64_t t0 = cfg.truth ? now_ns() : 0;

			syscall(SYS_futex, &fx_turn, FUTEX_WAIT_PRIVATE, other, NULL, NULL, 0);
			if (cfg.truth)
				w->wait_ns += now_ns() - t0;
			w->calls++;
		}
		__atomic_store_n(&fx_turn, other, __ATOMIC_RELEASE);
		syscall(SYS_futex, &fx_turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

/* Thread 0 writes first; each then reads the other's byte and answers. */
static void *run_pipepp(struct worker *w)
{
	int in = pipes[!w->index][0], out = pipes[w->index][1];
	char c = 'x';

	for (long i = 0; i < cfg.ops; i++) {
		if (w->index == 0 && write(out, &c, 1) != 1)
			exit(1);
		if (read(in, &c, 1) != 1)
			exit(1);
		if (w->index == 1 && write(out, &c, 1) != 1)
			exit(1);
	}
	w->calls = (uint64_t)cfg.ops;
	return NULL;
}

static void *run_futexwake(struct worker *w)
{
	int word = 0;

	for (long i = 0; i < cfg.ops; i++)
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	w->calls = (uint64_t)cfg.ops;
	return NULL;
}

static void *run_getppid(struct worker *w)
{
	for (long i = 0; i < cfg.ops; i++)
		syscall(SYS_getppid);
	w->calls = (uint64_t)cfg.ops;
	return NULL;
}

/* GLib's GMutex, futex flavour (glib/gthread-posix.c): the same shape. */
__attribute__((noipa)) static void gm_futex(int *word, int op, int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

__attribute__((noipa)) static void gm_lock_slowpath(struct worker *w)
{
	while (__atomic_exchange_n(&gm_word, 2, __ATOMIC_ACQUIRE) != 0) {
		gm_futex(&gm_word, FUTEX_WAIT_PRIVATE, 2);
		w->calls++;
	}
}

static inline void gm_lock(struct worker *w)
{
	int zero = 0;

	if (!__atomic_compare_exchange_n(&gm_word, &zero, 1, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		gm_lock_slowpath(w);
}

static inline void gm_unlock(void)
{
	if (__atomic_exchange_n(&gm_word, 0, __ATOMIC_RELEASE) == 2)
		gm_futex(&gm_word, FUTEX_WAKE_PRIVATE, 1);
}

__attribute__((noipa)) static void run_hammer_loop(struct worker *w)
{
	for (long i = 0; i < cfg.ops; i++) {
		gm_lock(w);
		spin_ns(cfg.hold_ns);
		gm_unlock();
		spin_ns(cfg.hold_ns);
	}
}

/* One frame per level; the store after the call keeps it a call. */
__attribute__((noipa)) static void run_hammer(struct worker *w, int n)
{
	static volatile int sink;

	if (n > 0)
		run_hammer(w, n - 1);
	else
		run_hammer_loop(w);
	sink += n;
}

/* Thread i waits for turn i, passes it on: every op is one wakeup. */
static void *run_pingpong(struct worker *w)
{
	pthread_mutex_lock(&pp_lock);
	for (long i = 0; i < cfg.ops; i++) {
		while (pp_turn != w->index) {
			uint64_t t0 = cfg.truth ? now_ns() : 0;

			pthread_cond_wait(&pp_cond, &pp_lock);
			if (cfg.truth)
				w->wait_ns += now_ns() - t0;
			w->calls++;
		}
		pp_turn = !w->index;
		pthread_cond_broadcast(&pp_cond);
	}
	pthread_mutex_unlock(&pp_lock);
	return NULL;
}

/*
 * Worker 0 holds shared[0] until worker 1's lock call sleeps in the
 * kernel, then --hold-ns more; worker 1 takes it, lets go, and the next
 * round starts only then, so worker 0's own lock calls never block.
 */
static void *run_handoff(struct worker *w)
{
	pthread_mutex_t *m = &shared[0];

	if (w->index == 0) {
		int fd = open_syscall_file(workers[1].tid);

		for (long i = 1; i <= cfg.ops; i++) {
			await(&ho_done, i - 1);
			lock(w, m);
			__atomic_store_n(&ho_ready, i, __ATOMIC_RELEASE);
			await_futex_sleep(fd);
			spin_ns(cfg.hold_ns);
			pthread_mutex_unlock(m);
		}
		close(fd);
	} else {
		for (long i = 1; i <= cfg.ops; i++) {
			await(&ho_ready, i);
			lock(w, m);
			pthread_mutex_unlock(m);
			__atomic_store_n(&ho_done, i, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/*
 * Worker 1 waits on pp_cond under pp_lock; worker 0 signals once that
 * wait sleeps in the kernel, plus --hold-ns.  The predicate is set under
 * the mutex and the signal sent after unlocking, so worker 1 takes the
 * mutex back without blocking: each op is exactly one blocking wait.
 */
static void *run_condhandoff(struct worker *w)
{
	if (w->index == 0) {
		int fd = open_syscall_file(workers[1].tid);

		for (long i = 1; i <= cfg.ops; i++) {
			await(&ho_ready, i);
			await_futex_sleep(fd);
			spin_ns(cfg.hold_ns);
			pthread_mutex_lock(&pp_lock);
			ho_pred = 1;
			pthread_mutex_unlock(&pp_lock);
			pthread_cond_signal(&pp_cond);
			await(&ho_done, i);
		}
		close(fd);
	} else {
		for (long i = 1; i <= cfg.ops; i++) {
			pthread_mutex_lock(&pp_lock);
			__atomic_store_n(&ho_ready, i, __ATOMIC_RELEASE);
			while (!ho_pred) {
				uint64_t t0 = cfg.truth ? now_ns() : 0;

				pthread_cond_wait(&pp_cond, &pp_lock);
				if (cfg.truth)
					w->wait_ns += now_ns() - t0;
				w->calls++;
			}
			ho_pred = 0;
			pthread_mutex_unlock(&pp_lock);
			__atomic_store_n(&ho_done, i, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void run_workload(struct worker *w);

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	struct rusage ru0, ru1;

	w->tid = (int)gettid();
	if (cfg.pin >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cfg.pin, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("lockbench: sched_setaffinity");
			exit(1);
		}
	}
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	for (int r = 0; r < cfg.rounds; r++) {
		while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) <= r)
			sleep_ns(50000);
		getrusage(RUSAGE_THREAD, &ru0);
		w->start_ns[r] = now_ns();
		run_workload(w);
		w->end_ns[r] = now_ns();
		getrusage(RUSAGE_THREAD, &ru1);
		w->sleeps += ru1.ru_nvcsw - ru0.ru_nvcsw;
		w->switches += ru1.ru_nvcsw - ru0.ru_nvcsw +
			       ru1.ru_nivcsw - ru0.ru_nivcsw;
		__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void run_workload(struct worker *w)
{
	if (!strcmp(cfg.name, "uncontended"))
		run_uncontended(w);
	else if (!strcmp(cfg.name, "contended"))
		run_contended(w);
	else if (!strcmp(cfg.name, "many"))
		run_many(w);
	else if (!strcmp(cfg.name, "handoff"))
		run_handoff(w);
	else if (!strcmp(cfg.name, "condhandoff"))
		run_condhandoff(w);
	else if (!strcmp(cfg.name, "futexpp"))
		run_futexpp(w);
	else if (!strcmp(cfg.name, "futexwake"))
		run_futexwake(w);
	else if (!strcmp(cfg.name, "getppid"))
		run_getppid(w);
	else if (!strcmp(cfg.name, "hammer"))
		run_hammer(w, depth);
	else if (!strcmp(cfg.name, "pipepp"))
		run_pipepp(w);
	else
		run_pingpong(w);
}

int main(int argc, char **argv)
{
	uint64_t elapsed = UINT64_MAX, round_ns[MAX_ROUNDS], calls = 0, wait_ns = 0;
	long total_ops, blocking_calls = -1, sleeps = 0, switches = 0;
	int handoff;

	if (argc < 2)
		return 2;
	cfg.name = argv[1];
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--truth"))
			cfg.truth = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
			cfg.threads = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--ops"))
			cfg.ops = atol(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--hold-ns"))
			cfg.hold_ns = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && !strcmp(argv[i], "--locks"))
			cfg.locks = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--pin"))
			cfg.pin = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--rounds"))
			cfg.rounds = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--depth"))
			depth = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--kind"))
			cfg.kind = argv[++i];
		else
			return 2;
	}
	if (strcmp(cfg.name, "uncontended") && strcmp(cfg.name, "contended") &&
	    strcmp(cfg.name, "pingpong") && strcmp(cfg.name, "many") &&
	    strcmp(cfg.name, "handoff") && strcmp(cfg.name, "condhandoff") &&
	    strcmp(cfg.name, "futexpp") && strcmp(cfg.name, "futexwake") &&
	    strcmp(cfg.name, "getppid") && strcmp(cfg.name, "hammer") &&
	    strcmp(cfg.name, "pipepp"))
		return 2;
	handoff = !strcmp(cfg.name, "handoff") || !strcmp(cfg.name, "condhandoff");
	if (!strcmp(cfg.name, "pingpong") || !strcmp(cfg.name, "futexpp") ||
	    !strcmp(cfg.name, "pipepp") || handoff)
		cfg.threads = 2;
	if (!strcmp(cfg.name, "pipepp") && (pipe(pipes[0]) || pipe(pipes[1])))
		return 1;
	if (cfg.threads < 1 || cfg.threads > MAX_THREADS || cfg.locks < 1 ||
	    cfg.locks > MAX_LOCKS || cfg.pin >= CPU_SETSIZE || cfg.rounds < 1 ||
	    cfg.rounds > MAX_ROUNDS || (handoff && cfg.rounds > 1) ||
	    depth < 0 || depth > 1000)
		return 2;
	if (!kind_code())
		return 2;
	for (int i = 0; i < MAX_LOCKS; i++)
		pthread_mutex_init(&shared[i], NULL);
	for (int i = 0; i < cfg.threads; i++) {
		workers[i].index = i;
		pthread_mutex_init(&workers[i].own, NULL);
		pthread_mutex_init(&workers[i].own_inner, NULL);
		pthread_spin_init(&workers[i].own_spin, PTHREAD_PROCESS_PRIVATE);
		pthread_rwlock_init(&workers[i].own_rw, NULL);
		sem_init(&workers[i].own_sem, 0, 1);
		if (pthread_create(&workers[i].thread, NULL, thread_main, &workers[i]))
			return 1;
	}
	/* Every tid is known before any worker starts (the handoffs read them). */
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < cfg.threads)
		sleep_ns(50000);
	for (int r = 0; r < cfg.rounds; r++) {
		__atomic_store_n(&go, r + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < (r + 1) * cfg.threads)
			sleep_ns(1000000);
	}
	for (int i = 0; i < cfg.threads; i++)
		while (pthread_tryjoin_np(workers[i].thread, NULL) == EBUSY)
			sleep_ns(100000);
	for (int i = 0; i < cfg.threads; i++) {
		calls += workers[i].calls;
		wait_ns += workers[i].wait_ns;
		sleeps += workers[i].sleeps;
		switches += workers[i].switches;
	}
	for (int r = 0; r < cfg.rounds; r++) {
		uint64_t first = UINT64_MAX, last = 0;

		for (int i = 0; i < cfg.threads; i++) {
			if (workers[i].start_ns[r] < first)
				first = workers[i].start_ns[r];
			if (workers[i].end_ns[r] > last)
				last = workers[i].end_ns[r];
		}
		round_ns[r] = last - first;
		if (round_ns[r] < elapsed)
			elapsed = round_ns[r];
	}
	total_ops = handoff ? cfg.ops : cfg.ops * cfg.threads;
	if (handoff)
		blocking_calls = cfg.ops;
	printf("{\"workload\": \"%s\", \"threads\": %d, \"ops\": %ld, "
	       "\"elapsed_ns\": %" PRIu64 ", \"ns_per_op\": %.2f, "
	       "\"truth\": %s, \"calls\": %" PRIu64 ", \"wait_ns\": %" PRIu64,
	       cfg.name, cfg.threads, total_ops, elapsed,
	       (double)elapsed / (double)total_ops, cfg.truth ? "true" : "false",
	       calls, wait_ns);
	if (blocking_calls >= 0)
		printf(", \"blocking_calls\": %ld", blocking_calls);
	else
		printf(", \"blocking_calls\": null");
	printf(", \"rounds\": %d, \"round_ns_per_op\": [", cfg.rounds);
	for (int r = 0; r < cfg.rounds; r++)
		printf("%s%.2f", r ? ", " : "", (double)round_ns[r] / (double)total_ops);
	printf("], \"sleeps\": %ld, \"switches\": %ld, \"objects\": [",
	       sleeps, switches);
	if (!strcmp(cfg.name, "uncontended"))
		for (int i = 0; i < cfg.threads; i++)
			printf("%s\"%p\"", i ? ", " : "",
			       kind_code() == 'm' || kind_code() == 'n' ?
			       (void *)&workers[i].own :
			       kind_code() == 's' ? (void *)(uintptr_t)&workers[i].own_spin :
			       kind_code() == 'e' ? (void *)&workers[i].own_sem :
			       (void *)&workers[i].own_rw);
	else if (!strcmp(cfg.name, "pingpong") || !strcmp(cfg.name, "condhandoff"))
		printf("\"%p\"", (void *)&pp_cond);
	else if (!strcmp(cfg.name, "futexpp"))
		printf("\"%p\"", (void *)&fx_turn);
	else if (!strcmp(cfg.name, "hammer"))
		printf("\"%p\"", (void *)&gm_word);
	else if (strcmp(cfg.name, "futexwake") && strcmp(cfg.name, "getppid") &&
		 strcmp(cfg.name, "pipepp"))
		for (int i = 0; i < (!strcmp(cfg.name, "many") ? cfg.locks : 1); i++)
			printf("%s\"%p\"", i ? ", " : "", (void *)&shared[i]);
	printf("]}\n");
	return 0;
}
