/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPU time of a process's threads, from /proc/PID/task/TID/schedstat:
 * on CPU, and runnable but waiting for one, summed over the windows it is
 * told of, thread by thread.
 */
#ifndef SYNCPROF_TASKCPU_H
#define SYNCPROF_TASKCPU_H

#include <stdint.h>
#include <sys/types.h>

struct taskcpu;

int taskcpu__new(pid_t pid, struct taskcpu **out);
void taskcpu__free(struct taskcpu *t);
/* Reads every thread now: a window begins. */
int taskcpu__begin(struct taskcpu *t);
/* Reads them again: what each did since begin is added to its sums. */
int taskcpu__end(struct taskcpu *t);
/*
 * Over the windows so far, window_ns of them in all: the CPUs the
 * threads used, and the CPUs they could have used had every thread that
 * ran (min_share of the time or more) stayed runnable: their fair share
 * of the CPUs the process may run on, beside the machine's other
 * runnable tasks; at most one CPU per thread.  capacity: that share,
 * then its low and high ends (the spread of the others' count).
 */
void taskcpu__usage(const struct taskcpu *t, uint64_t window_ns,
		    double min_share, double *used, double capacity[3]);

#endif
