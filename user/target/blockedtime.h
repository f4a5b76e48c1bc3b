/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long the followed processes' threads were blocked, whatever they
 * waited on: their wall time less their CPU time and their wait for a
 * CPU (/proc/PID/task/TID/schedstat), from the first sample of each to
 * its last.
 * Set beside the futex waits syncprof counted, it tells a program whose
 * waits are mostly elsewhere (poll, reads, sleeps), which --off-cpu
 * sees.  In a virtual machine, the time the host ran something else on
 * a thread's CPU (steal) is in neither of schedstat's numbers, so it
 * counts as blocked here: /proc keeps steal per CPU, not per thread
 * (--states counts it per thread, as stolen).
 */
#ifndef SYNCPROF_BLOCKEDTIME_H
#define SYNCPROF_BLOCKEDTIME_H

#include <stdint.h>
#include <sys/types.h>

struct blockedtime;

int blockedtime__new(struct blockedtime **out);
void blockedtime__free(struct blockedtime *b);
/*
 * Reads pid's threads at now_ns (CLOCK_MONOTONIC): a thread seen before
 * gets its blocked time since it was first seen, a new one is marked.
 * A thread that exits keeps what its last sample said (samples a second
 * apart: the end of its life is lost, an underestimate).
 */
int blockedtime__sample(struct blockedtime *b, pid_t pid, uint64_t now_ns);
/*
 * A round: samples of every process followed between begin and end;
 * end drops the threads no sample saw (ended), their time kept.
 */
void blockedtime__round_begin(struct blockedtime *b);
void blockedtime__round_end(struct blockedtime *b);
/* The blocked time of every thread sampled, by its last sample. */
uint64_t blockedtime__blocked_ns(const struct blockedtime *b);

#endif
