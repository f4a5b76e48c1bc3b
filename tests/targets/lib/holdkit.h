/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the targets that time their holders share (convoy, pshared,
 * procs): the holder's own clocks over a stretch it held (CPU time,
 * time waiting for a CPU, wall time), CPU burned by the thread's clock,
 * and the many-process targets' forks, flags in shared memory and truth
 * files.  Linked into those targets by the Makefile (lib/holdkit.c).
 */
#ifndef SYNCPROF_HOLDKIT_H
#define SYNCPROF_HOLDKIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* CLOCK_THREAD_CPUTIME_ID in ns. */
uint64_t thread_cpu_ns(void);
/* The second field of /proc/thread-self/schedstat: run_delay in ns. */
uint64_t run_delay_ns(void);
/* Spins until the thread's CPU clock moved on by us. */
void compute_us(int us);

/* A holder's clocks, summed over its stretches. */
struct clocks {
	uint64_t cpu_ns, run_delay_ns, wall_ns;
};
/* One stretch: its start, then its length added to a sum. */
struct stretch {
	uint64_t cpu, delay, wall;
};
void stretch_begin(struct stretch *s);
void stretch_end(const struct stretch *s, struct clocks *sum);

/* Waits until *flag is value (polled every 50 us). */
void wait_until(atomic_int *flag, int value);
/* Waits until each of pids[0..n) is set (a child started). */
void wait_started(atomic_int *pids, int n);
/* Waits until process pid's main thread sits in a futex (2 s at most). */
void wait_task_in_futex(pid_t pid);
/*
 * Forks n children, kids[c] running child(c, arg), which must not
 * return; 0, or -1 when a fork failed.
 */
int fork_children(pid_t *kids, int n, void (*child)(int c, void *arg),
		  void *arg);
/* Waits for the children: 1 when one failed, else 0. */
int reap_children(const pid_t *kids, int n);
/* DIR/name holds body (dir NULL: no truth asked for); exits 1 on error. */
void write_truth(const char *dir, const char *name, const char *body);

#endif
