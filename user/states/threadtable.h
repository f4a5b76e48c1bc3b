/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's table of the target's threads (--states): filled from
 * /proc before the scheduler tracepoints attach and again after, read
 * consistently, and rid of the threads that died once they were read.
 */
#ifndef SYNCPROF_THREADTABLE_H
#define SYNCPROF_THREADTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "threadstates.h"

struct threadtable;

/* map_fd: the threads map (probes__threads_fd); not owned. */
int threadtable__new(int map_fd, pid_t pid, struct threadtable **out);
void threadtable__free(struct threadtable *tt);
/* Another process whose threads threadtable__sync seeds (several). */
int threadtable__add_pid(struct threadtable *tt, pid_t pid);
/*
 * Puts the threads /proc/PID/task lists and the table lacks into it, as
 * born at now_ns (CLOCK_MONOTONIC), running if /proc says R, else asleep;
 * takes out the ones put in earlier whose thread is gone before any
 * program saw it.  Call before attaching the tracepoints and after.
 */
int threadtable__sync(struct threadtable *tt, uint64_t now_ns);
/*
 * Copies every entry; *now_ns is the instant the copies stand for (taken
 * after the last).  The samples stay valid until the next read.  Entries
 * of dead threads are deleted once copied.
 */
int threadtable__read(struct threadtable *tt,
		      const struct thread_sample **samples, size_t *n,
		      uint64_t *now_ns);

/*
 * The state letter and name in a /proc/PID/task/TID/stat line ("TID
 * (comm) S ..."; comm may hold spaces and parentheses).  0 or -EINVAL.
 */
int threadtable__parse_stat(const char *line, char *state, char *comm,
			    size_t comm_len);

#endif
