// SPDX-License-Identifier: GPL-2.0
/*
 * Lock orders for --lock-order, none of which deadlocks: the threads of a
 * scenario run one after the other.  The program writes the lines of its
 * acquisitions as JSON (--truth FILE), for the test to find in the report.
 *
 *   lockorder abba|ladder|cycle3|heap|recursive|readers [--truth FILE]
 *             [--wait-signal] [--linger-ms N]
 *
 * --wait-signal: print "ready PID" and start on SIGUSR1; --linger-ms:
 * stay N ms after the scenario (a live screen's time to show it).
 *
 * abba      one thread takes lock_a then lock_b, a later one lock_b then
 *           lock_a: one inversion
 * ladder    two threads take ladder[0..7] in order, holding all: none
 * cycle3    A -> B, B -> C, C -> A in three threads: one cycle of three
 * heap      items allocated at one site, each locked under list_lock;
 *           then, at the same addresses, other objects locked before
 *           list_lock at another site: by object that is a cycle, by
 *           site (the class of heap locks) it is none
 * recursive a recursive mutex taken twice, then other_lock: no self edge
 * readers   one thread reads rw then takes lock_a, another holds lock_a
 *           then reads rw: read after read never blocks, none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/targetkit.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ladder[8];
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t other_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec_lock;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

/* Lines of the acquisitions, by name. */
static struct {
	int a_then_b_a, a_then_b_b;	/* abba: first a, then b */
	int b_then_a_b, b_then_a_a;
	int cyc_ab, cyc_bc, cyc_ca;	/* cycle3: the second take of each */
} lines;

#define TAKE(m, field) do { lines.field = __LINE__; pthread_mutex_lock(m); } while (0)

static void *abba_first(void *arg)
{
	(void)arg;
	TAKE(&lock_a, a_then_b_a);
	TAKE(&lock_b, a_then_b_b);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

static void *abba_second(void *arg)
{
	(void)arg;
	TAKE(&lock_b, b_then_a_b);
	TAKE(&lock_a, b_then_a_a);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return NULL;
}

static void *ladder_climb(void *arg)
{
	(void)arg;
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 8; i++)
			pthread_mutex_lock(&ladder[i]);
		for (int i = 7; i >= 0; i--)
			pthread_mutex_unlock(&ladder[i]);
	}
	return NULL;
}

static void *cycle_ab(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_a);
	TAKE(&lock_b, cyc_ab);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

static void *cycle_bc(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_b);
	TAKE(&lock_c, cyc_bc);
	pthread_mutex_unlock(&lock_c);
	pthread_mutex_unlock(&lock_b);
	return NULL;
}

static void *cycle_ca(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_c);
	TAKE(&lock_a, cyc_ca);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_c);
	return NULL;
}

/* Items, then other objects of one size at the addresses freed. */
struct item {
	pthread_mutex_t lock;
	char payload[64];
};

static struct item *pool[32];
static int reused;		/* addresses the second allocation took back */

static void pool_fill(void)
{
	for (int i = 0; i < 32; i++) {
		pool[i] = malloc(sizeof(*pool[i]));	/* calloc skips tcache */
		memset(pool[i], 0, sizeof(*pool[i]));
		pthread_mutex_init(&pool[i]->lock, NULL);
	}
}

static void heap_items(void)
{
	for (int i = 0; i < 32; i++) {
		pthread_mutex_lock(&list_lock);
		pthread_mutex_lock(&pool[i]->lock);	/* the items' site */
		pthread_mutex_unlock(&pool[i]->lock);
		pthread_mutex_unlock(&list_lock);
	}
}

static void heap_others(void)
{
	for (int i = 0; i < 32; i++) {
		pthread_mutex_lock(&pool[i]->lock);	/* another site */
		pthread_mutex_lock(&list_lock);
		pthread_mutex_unlock(&list_lock);
		pthread_mutex_unlock(&pool[i]->lock);
	}
}

/*
 * Items locked under list_lock, freed; others of their size at the same
 * addresses (one thread: its tcache and arena hand them back), locked
 * before list_lock.
 */
static void *heap_reuse(void *arg)
{
	struct item *old[32];

	(void)arg;
	pool_fill();
	heap_items();
	memcpy(old, pool, sizeof(old));
	for (int i = 0; i < 32; i++)
		free(pool[i]);
	pool_fill();
	for (int i = 0; i < 32; i++)
		for (int j = 0; j < 32; j++)
			reused += pool[i] == old[j];
	heap_others();
	return NULL;
}

static void *recursive_twice(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rec_lock);
	pthread_mutex_lock(&rec_lock);
	pthread_mutex_lock(&other_lock);
	pthread_mutex_unlock(&other_lock);
	pthread_mutex_unlock(&rec_lock);
	pthread_mutex_unlock(&rec_lock);
	return NULL;
}

static void *reader_then_lock(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&rw);
	pthread_mutex_lock(&lock_a);
	pthread_mutex_unlock(&lock_a);
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static void *lock_then_reader(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_a);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

/* Runs the threads one after the other: nothing ever deadlocks. */
static void run_in_turn(void *(*const *threads)(void *))
{
	for (; *threads; threads++) {
		pthread_t t;

		pthread_create(&t, NULL, *threads, NULL);
		pthread_join(t, NULL);
	}
}

int main(int argc, char **argv)
{
	static void *(*const abba[])(void *) = { abba_first, abba_second, NULL };
	static void *(*const climb[])(void *) = { ladder_climb, ladder_climb,
						  NULL };
	static void *(*const cycle3[])(void *) = { cycle_ab, cycle_bc, cycle_ca,
						   NULL };
	static void *(*const heap[])(void *) = { heap_reuse, NULL };
	static void *(*const recursive[])(void *) = { recursive_twice, NULL };
	static void *(*const readers[])(void *) = { reader_then_lock,
						    lock_then_reader, NULL };
	static const struct {
		const char *name;
		void *(*const *threads)(void *);
	} scenarios[] = {
		{ "abba", abba }, { "ladder", climb }, { "cycle3", cycle3 },
		{ "heap", heap }, { "recursive", recursive },
		{ "readers", readers },
	};
	const char *truth_path = NULL;
	bool wait_signal = false;
	int linger_ms = 0;
	pthread_mutexattr_t attr;
	size_t s;
	FILE *f;

	for (s = 0; argc > 1 && s < sizeof(scenarios) / sizeof(scenarios[0]); s++)
		if (!strcmp(argv[1], scenarios[s].name))
			break;
	if (argc < 2 || s == sizeof(scenarios) / sizeof(scenarios[0])) {
		fprintf(stderr, "usage: lockorder abba|ladder|cycle3|heap|"
			"recursive|readers [--truth FILE] [--wait-signal] "
			"[--linger-ms N]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--truth") && i + 1 < argc)
			truth_path = argv[++i];
		else if (!strcmp(argv[i], "--linger-ms") && i + 1 < argc)
			linger_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wait-signal"))
			wait_signal = true;
	}
	if (wait_signal)
		wait_for_go();
	for (int i = 0; i < 8; i++)
		pthread_mutex_init(&ladder[i], NULL);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec_lock, &attr);
	run_in_turn(scenarios[s].threads);
	sleep_us(linger_ms * 1000);
	f = truth_path ? fopen(truth_path, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f, "{\"a_then_b\": [%d, %d], \"b_then_a\": [%d, %d], "
		"\"cycle3\": [%d, %d, %d], \"reused\": %d}\n",
		lines.a_then_b_a, lines.a_then_b_b, lines.b_then_a_b,
		lines.b_then_a_a, lines.cyc_ab, lines.cyc_bc, lines.cyc_ca,
		reused);
	if (f != stdout)
		fclose(f);
	return 0;
}
