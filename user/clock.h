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

#endif
