/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test targets share: their own clock (the ground truth is
 * CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns), a sleep that survives
 * signals, and the start handshake a profiler attaches during.
 */
#ifndef SYNCPROF_TARGETKIT_H
#define SYNCPROF_TARGETKIT_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void sleep_us(int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* --wait-signal: print "ready PID", start on SIGUSR1. */
static inline void wait_for_go(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
}

#endif
