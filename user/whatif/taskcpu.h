/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPU time of the threads of one process or several, from
 * /proc/PID/task/TID/schedstat,
 * and the machine's idle time, from /proc/stat, summed over the windows
 * it is told of.
 */
#ifndef SYNCPROF_TASKCPU_H
#define SYNCPROF_TASKCPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct taskcpu;

/* The threads of pids[0..n) (a copy of the list is kept). */
int taskcpu__new(const pid_t *pids, size_t n, struct taskcpu **out);
void taskcpu__free(struct taskcpu *t);
/* Reads every thread now: a window begins. */
int taskcpu__begin(struct taskcpu *t);
/* Reads them again: what each did since begin is added to its sums. */
int taskcpu__end(struct taskcpu *t);
/*
 * The last window's length, from the middle of begin's readings to the
 * middle of end's, and the sum over the windows: the time the CPU
 * figures below are per (a clock read apart from the readings counts
 * the reader's own delays: on a loaded machine, milliseconds).
 */
uint64_t taskcpu__last_ns(const struct taskcpu *t);
uint64_t taskcpu__sum_ns(const struct taskcpu *t);
/*
 * Over the windows so far, window_ns of them in all: the CPUs the
 * threads used, and the CPUs they could have used had every thread that
 * ran (min_share of the time or more) stayed runnable: what they used
 * and what the machine left idle, at most one CPU per thread and the
 * CPUs the processes may run on.
 */
void taskcpu__usage(const struct taskcpu *t, uint64_t window_ns,
		    double min_share, double *used, double *capacity);

/*
 * The same for the last window alone (between the last begin and end),
 * and the most the threads could use: a CPU each, within the CPUs the
 * process may run on.  Its capacity is also at least what the threads
 * runnable a good part of it would get runnable all of it, at the rate
 * of CPU per runnable time they got (a thread that sleeps less gets
 * more on a machine others keep busy).
 */
/*
 * The share of the machine's busy time in the windows that the host took
 * from its CPUs (a guest's steal; 0 on a machine of its own).
 */
double taskcpu__stolen(const struct taskcpu *t);

void taskcpu__window(const struct taskcpu *t, uint64_t window_ns,
		     double min_share, double *used, double *capacity,
		     double *most);

#endif
