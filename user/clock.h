/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns(), so a
 * time read here compares with the BPF programs' timestamps.
 */
#ifndef SYNCPROF_CLOCK_H
#define SYNCPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CPU time the calling thread used (0: not known). */
static inline uint64_t clock__thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time (the programs' clock) by the wall clock. */
static inline uint64_t clock__wall_of(uint64_t mono_ns)
{
	struct timespec real;
	uint64_t mono_now = clock__monotonic_ns(), real_now;

	if (clock_gettime(CLOCK_REALTIME, &real))
		return 0;
	real_now = (uint64_t)real.tv_sec * 1000000000ull +
		   (uint64_t)real.tv_nsec;
	return real_now - (mono_now > mono_ns ? mono_now - mono_ns : 0);
}

#endif
