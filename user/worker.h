/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread of syncprof's own and the one lock and condition its queue is
 * kept under.  The owner's step runs with the lock held, over and over
 * until the worker stops; it waits there for work, and drops the lock
 * around the work itself.
 */
#ifndef SYNCPROF_WORKER_H
#define SYNCPROF_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#define WORKER_FOREVER	UINT64_MAX

struct worker;

/* One turn of the thread's loop: called with the lock held. */
typedef void (*worker_step_fn)(struct worker *w, void *arg);

/*
 * Starts a thread named name (top -H, /proc/PID/task/TID/comm) that runs
 * step(w, arg) while not stopped, every signal blocked (the loop takes
 * them).  *out is set once the thread runs: a step uses its own w.
 * 0 or -errno.
 */
int worker__start(const char *name, worker_step_fn step, void *arg,
		  struct worker **out);
/* Stops the thread (its step returns first), joins it and frees w. */
void worker__stop(struct worker *w);

void worker__lock(struct worker *w);
void worker__unlock(struct worker *w);
/* Wakes the thread's wait (lock held or not). */
void worker__wake(struct worker *w);
/*
 * With the lock held: waits until woken, stopped, or CLOCK_MONOTONIC
 * reaches deadline_ns (WORKER_FOREVER: none).  True once stopped.
 */
bool worker__wait(struct worker *w, uint64_t deadline_ns);
/* With the lock held: whether worker__stop was called. */
bool worker__stopping(const struct worker *w);

#endif
