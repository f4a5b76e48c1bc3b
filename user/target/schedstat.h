/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One thread's /proc/PID/task/TID/schedstat: its CPU time, its wait for a
 * CPU and its time slices, as the kernel's scheduler counts them (in ns,
 * unlike /proc/PID/stat's ticks).
 */
#ifndef SYNCPROF_SCHEDSTAT_H
#define SYNCPROF_SCHEDSTAT_H

#include <stdint.h>
#include <sys/types.h>

struct schedstat {
	uint64_t run_ns;	/* on a CPU */
	uint64_t wait_ns;	/* runnable, waiting for a CPU */
	uint64_t slices;	/* times it went on a CPU */
};

/* 0, or -errno (-ENOENT: the thread is gone; -EINVAL: not understood). */
int schedstat__read(pid_t pid, pid_t tid, struct schedstat *out);

#endif
