/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long each thread of the target ran and waited for a CPU, by its
 * schedstat (/proc/PID/task/TID/schedstat), between two samples: what
 * the findings weigh each thread's waits by (findings.h).  Read in user
 * space at each report, no probe: a few files per thread.
 */
#ifndef SYNCPROF_THREADRUN_H
#define SYNCPROF_THREADRUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "findings.h"

struct threadrun;

int threadrun__new(struct threadrun **out);
void threadrun__free(struct threadrun *tr);
/*
 * Reads every thread of the processes now, and keeps each one's last
 * reading: a thread that exits before the next sample is counted up to
 * its last poll.
 */
int threadrun__poll(struct threadrun *tr, const pid_t *pids, size_t n_pids);
/*
 * Polls, then: every thread of the processes now; *out (freed with free(),
 * NULL for none) gets each thread's run and run-queue time since the
 * last sample (a thread born since: since it began) and how long of the
 * window_ns it lived.  *alive: the threads read.
 */
int threadrun__sample(struct threadrun *tr, const pid_t *pids, size_t n_pids,
		      uint64_t window_ns, struct findings_thread **out,
		      size_t *n, size_t *alive);

#endif
