// SPDX-License-Identifier: GPL-2.0
/*
 * A target for waits across processes: a parent holds a
 * PTHREAD_PROCESS_SHARED mutex in MAP_SHARED | MAP_ANONYMOUS memory while
 * the children it forked wait for it, one at a time.  Each hold is timed
 * the same way: the parent takes the lock, lets one child go, waits until
 * that child sits in its futex wait, then computes --spin-us of its own
 * CPU time and sleeps --sleep-us, and unlocks at a known line.  So every
 * measured wait of a child is ended by the parent's unlock, and during it
 * the holder was running, then asleep.
 *
 *   pshared [--children N] [--iters N] [--spin-us N] [--sleep-us N]
 *           [--remap] [--fork-first] [--truth DIR] [--wait-signal]
 *
 * --fork-first: the children are forked before --wait-signal's wait, so
 * a profiler can be given their PIDs.
 *
 * --remap: the shared page is a memfd, and each child maps it again at
 * another address (and unmaps the parent's): one lock, a different
 * address in every process, as with shm_open after a fork.
 *
 * Truth: each child writes DIR/child-N.json (its waits, timed around
 * pthread_mutex_lock with clock_gettime); the parent writes
 * DIR/parent.json with its holds' clocks, from the child's entry into
 * the futex to the unlock: CPU time (CLOCK_THREAD_CPUTIME_ID), wait for
 * a CPU (run_delay of /proc/thread-self/schedstat) and wall time (the
 * rest is asleep).  The parent sees that entry by polling, so the child's
 * wait starts between its turn given (turn_*: the same clocks from the
 * store that lets the child go) and the holder_* stretch's start.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/holdkit.h"
#include "lib/targetkit.h"

#define MAX_CHILDREN 8

/* The shared page; the lock is not at its start, as in real programs. */
struct board {
	atomic_int held[MAX_CHILDREN];	/* iteration the parent holds for */
	atomic_int done[MAX_CHILDREN];	/* iteration the child finished */
	atomic_int pid[MAX_CHILDREN];	/* the child, once started */
	pthread_mutex_t lock;
};

static int children = 2, iters = 10, spin_us = 3000, sleep_us_hold = 3000;
static int memfd = -1;		/* --remap: the shared page's file */
static const char *truth_dir;

static struct clocks held;	/* the holds' stretches */
static struct clocks held_all;	/* the same from before the child's turn */
static uint64_t holds;

/* The measured call, through a typed pointer: its call site is this line. */
__attribute__((noinline)) static uint64_t child_wait(struct board *b)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&b->lock); /* CALLSITE:pshared_wait */
	return now_ns() - t0;
}

/* --remap: the page again, at an address the parent's is not. */
static struct board *remap(struct board *b)
{
	void *pad = mmap(NULL, 1 << 20, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct board *mine = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
				  MAP_SHARED, memfd, 0);

	if (pad == MAP_FAILED || mine == MAP_FAILED || mine == b)
		_exit(3);
	munmap(b, sizeof(*b));
	return mine;
}

static void child(int c, void *arg)
{
	struct board *b = arg;
	uint64_t wait_ns = 0, count = 0;
	char body[256], name[32];

	if (memfd >= 0)
		b = remap(b);
	atomic_store(&b->pid[c], (int)getpid());
	for (int i = 1; i <= iters; i++) {
		wait_until(&b->held[c], i);
		wait_ns += child_wait(b);
		count++;
		pthread_mutex_unlock(&b->lock);
		atomic_store(&b->done[c], i);
	}
	snprintf(body, sizeof(body),
		 "{\"pid\": %d, \"count\": %" PRIu64 ", \"wait_ns\": %" PRIu64
		 ", \"lock\": \"0x%llx\"}\n", (int)getpid(), count, wait_ns,
		 (unsigned long long)(uintptr_t)&b->lock);
	snprintf(name, sizeof(name), "child-%d.json", c);
	write_truth(truth_dir, name, body);
	_exit(0);
}

/* One hold for child c: it waits from its futex entry to the unlock. */
__attribute__((noinline)) static void parent_hold(struct board *b, int c,
						  int i)
{
	struct stretch s, all;

	pthread_mutex_lock(&b->lock); /* CALLSITE:pshared_hold */
	stretch_begin(&all);
	atomic_store(&b->held[c], i);
	wait_task_in_futex(atomic_load(&b->pid[c]));
	stretch_begin(&s);
	compute_us(spin_us);
	sleep_us(sleep_us_hold);
	stretch_end(&s, &held);
	stretch_end(&all, &held_all);
	pthread_mutex_unlock(&b->lock); /* RELEASE:pshared_unlock */
	holds++;		/* after: the unlock is not a tail call */
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "children", required_argument, NULL, 'c' },
		{ "iters", required_argument, NULL, 'n' },
		{ "spin-us", required_argument, NULL, 'p' },
		{ "sleep-us", required_argument, NULL, 's' },
		{ "truth", required_argument, NULL, 't' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "remap", no_argument, NULL, 'r' },
		{ "fork-first", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	bool remapped = false, fork_first = false;
	pthread_mutexattr_t attr;
	bool wait_signal = false;
	pid_t kids[MAX_CHILDREN];
	char body[1024];
	int opt, failed, len;
	struct board *b;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': children = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'p': spin_us = atoi(optarg); break;
		case 's': sleep_us_hold = atoi(optarg); break;
		case 't': truth_dir = optarg; break;
		case 'w': wait_signal = true; break;
		case 'r': remapped = true; break;
		case 'f': fork_first = true; break;
		default: return 2;
		}
	}
	if (children < 1 || children > MAX_CHILDREN || iters < 1)
		return 2;
	if (remapped) {
		memfd = memfd_create("pshared", MFD_CLOEXEC);
		if (memfd < 0 || ftruncate(memfd, sizeof(*b)))
			return 1;
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED,
			 memfd, 0);
	} else {
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (b == MAP_FAILED)
		return 1;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&b->lock, &attr);
	if (wait_signal && !fork_first)
		wait_for_go();
	if (fork_children(kids, children, child, b))
		return 1;
	/* --fork-first: the children exist before the profiler attaches
	   (they wait for the parent's first hold). */
	if (wait_signal && fork_first)
		wait_for_go();
	wait_started(b->pid, children);
	for (int i = 1; i <= iters; i++)
		for (int c = 0; c < children; c++) {
			parent_hold(b, c, i);
			wait_until(&b->done[c], i);
		}
	failed = reap_children(kids, children);
	len = snprintf(body, sizeof(body),
		       "{\"pid\": %d, \"lock\": \"0x%llx\", \"offset\": %zu, "
		       "\"holds\": %" PRIu64
		       ", \"holder_cpu_ns\": %" PRIu64
		       ", \"holder_run_delay_ns\": %" PRIu64
		       ", \"holder_wall_ns\": %" PRIu64
		       ", \"turn_cpu_ns\": %" PRIu64
		       ", \"turn_run_delay_ns\": %" PRIu64
		       ", \"turn_wall_ns\": %" PRIu64 ", \"children\": [",
		       (int)getpid(), (unsigned long long)(uintptr_t)&b->lock,
		       offsetof(struct board, lock), holds,
		       held.cpu_ns, held.run_delay_ns, held.wall_ns,
		       held_all.cpu_ns, held_all.run_delay_ns, held_all.wall_ns);
	for (int c = 0; c < children && len < (int)sizeof(body) - 16; c++)
		len += snprintf(body + len, sizeof(body) - (size_t)len, "%s%d",
				c ? ", " : "", (int)kids[c]);
	snprintf(body + len, sizeof(body) - (size_t)len, "]}\n");
	write_truth(truth_dir, "parent.json", body);
	return failed;
}
