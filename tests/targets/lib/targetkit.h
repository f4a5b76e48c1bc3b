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
#include <stdlib.h>
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

/*
 * Until thread tid of this process sleeps in the futex system call
 * (/proc's syscall file starts with its number), or about a second: a
 * holder that lets go only then makes every measured call block, even
 * on a loaded machine.
 */
static inline void wait_blocked_in_futex(int tid)
{
	char path[64], line[32];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	for (int i = 0; i < 20000; i++) {
		FILE *f = fopen(path, "r");
		int nr = -1;

		if (f) {
			if (fgets(line, sizeof(line), f))
				nr = atoi(line);
			fclose(f);
		}
		if (nr == 202)	/* x86-64 futex */
			return;
		sleep_us(50);
	}
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
