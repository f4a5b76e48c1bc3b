// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for make bench.  Each prints one JSON line: how long the
 * operations took (ns per op) and, with --truth, what the workload
 * measured itself around every lock call with clock_gettime: calls,
 * summed wait, the objects' addresses.
 *
 *   lockbench uncontended|contended|pingpong|many
 *             [--threads N] [--ops N] [--hold-ns N] [--locks N] [--truth]
 *
 * uncontended: each thread locks its own mutex (the fast path).
 * contended:   all threads on one mutex, held --hold-ns (busy) each time.
 * pingpong:    two threads hand a token back and forth through a condvar.
 * many:        --threads threads on --locks mutexes, short holds.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define MAX_LOCKS 64

struct worker {
	pthread_t thread;
	int index;
	pthread_mutex_t own;		/* uncontended */
	uint64_t calls;
	uint64_t wait_ns;
	uint64_t start_ns, end_ns;	/* the run spans all workers' */
} __attribute__((aligned(64)));

static struct {
	const char *name;
	int threads, locks, truth;
	long ops;
	uint64_t hold_ns;
} cfg = { .threads = 2, .ops = 20000, .hold_ns = 2000, .locks = 4 };

static struct worker workers[MAX_THREADS];
static pthread_mutex_t shared[MAX_LOCKS];
static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int pp_turn;
static pthread_barrier_t start;

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

static void *run_uncontended(struct worker *w)
{
	for (long i = 0; i < cfg.ops; i++) {
		lock(w, &w->own);
		pthread_mutex_unlock(&w->own);
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

static void *thread_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	w->start_ns = now_ns();
	if (!strcmp(cfg.name, "uncontended"))
		run_uncontended(w);
	else if (!strcmp(cfg.name, "contended"))
		run_contended(w);
	else if (!strcmp(cfg.name, "many"))
		run_many(w);
	else
		run_pingpong(w);
	w->end_ns = now_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t first = UINT64_MAX, last = 0, elapsed, calls = 0, wait_ns = 0;
	long total_ops;

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
		else
			return 2;
	}
	if (!strcmp(cfg.name, "pingpong"))
		cfg.threads = 2;
	if (cfg.threads < 1 || cfg.threads > MAX_THREADS || cfg.locks < 1 ||
	    cfg.locks > MAX_LOCKS)
		return 2;
	for (int i = 0; i < MAX_LOCKS; i++)
		pthread_mutex_init(&shared[i], NULL);
	pthread_barrier_init(&start, NULL, (unsigned int)cfg.threads + 1);
	for (int i = 0; i < cfg.threads; i++) {
		workers[i].index = i;
		pthread_mutex_init(&workers[i].own, NULL);
		pthread_create(&workers[i].thread, NULL, thread_main, &workers[i]);
	}
	pthread_barrier_wait(&start);
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(workers[i].thread, NULL);
	for (int i = 0; i < cfg.threads; i++) {
		calls += workers[i].calls;
		wait_ns += workers[i].wait_ns;
		if (workers[i].start_ns < first)
			first = workers[i].start_ns;
		if (workers[i].end_ns > last)
			last = workers[i].end_ns;
	}
	elapsed = last - first;
	total_ops = cfg.ops * cfg.threads;
	printf("{\"workload\": \"%s\", \"threads\": %d, \"ops\": %ld, "
	       "\"elapsed_ns\": %" PRIu64 ", \"ns_per_op\": %.2f, "
	       "\"truth\": %s, \"calls\": %" PRIu64 ", \"wait_ns\": %" PRIu64
	       ", \"objects\": [", cfg.name, cfg.threads, total_ops, elapsed,
	       (double)elapsed / (double)total_ops, cfg.truth ? "true" : "false",
	       calls, wait_ns);
	if (!strcmp(cfg.name, "uncontended"))
		for (int i = 0; i < cfg.threads; i++)
			printf("%s\"%p\"", i ? ", " : "", (void *)&workers[i].own);
	else if (!strcmp(cfg.name, "pingpong"))
		printf("\"%p\"", (void *)&pp_cond);
	else
		for (int i = 0; i < (!strcmp(cfg.name, "many") ? cfg.locks : 1); i++)
			printf("%s\"%p\"", i ? ", " : "", (void *)&shared[i]);
	printf("]}\n");
	return 0;
}
