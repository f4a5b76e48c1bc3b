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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
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

/* Thread tid of process pid's /proc syscall line: number, arguments. */
static inline bool task_syscall(pid_t pid, pid_t tid, char *buf, int len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	return true;
}

/*
 * Whether thread tid of process pid sits in a futex system call.  A
 * waiter still on its way (a loaded machine can keep it off the CPU for
 * milliseconds) has not blocked yet, and contended mode would rightly
 * not count it.
 */
/* futex2's wait (Linux 6.7), which glibc 2.36's headers do not name. */
#define TARGET_SYS_futex_wait 455

static inline bool task_in_futex(pid_t pid, pid_t tid)
{
	char buf[32] = "";

	return task_syscall(pid, tid, buf, sizeof(buf)) &&
	       (atoi(buf) == SYS_futex || atoi(buf) == TARGET_SYS_futex_wait);
}

/*
 * Whether thread tid of this process sits in a futex system call on a
 * word inside [lo, lo + len): /proc's syscall file gives the number and
 * then the arguments, the first the futex word's address.
 */
static inline bool thread_in_futex_within(pid_t tid, const void *lo,
					  size_t len)
{
	char buf[128] = "";
	unsigned long long nr = 0, uaddr = 0;

	if (!task_syscall(getpid(), tid, buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llx", &nr, &uaddr) != 2 ||
	    (nr != SYS_futex && nr != TARGET_SYS_futex_wait))
		return false;
	return uaddr >= (uintptr_t)lo && uaddr < (uintptr_t)lo + len;
}

/* The same as task_in_futex, for a thread of this process. */
static inline bool thread_in_futex(pid_t tid)
{
	return task_in_futex(getpid(), tid);
}

/*
 * A holder's wait for its waiter to block (a second at most): a holder
 * that lets go only then makes every measured call block.
 */
static inline void wait_blocked_in_futex(int tid)
{
	for (int spent = 0; spent < 1000000 && !thread_in_futex((pid_t)tid);
	     spent += 100)
		sleep_us(100);
}

/* The same, for a block on a futex word inside [lo, lo + len). */
static inline void wait_blocked_in_futex_within(int tid, const void *lo,
						size_t len)
{
	for (int spent = 0; spent < 1000000 &&
	     !thread_in_futex_within((pid_t)tid, lo, len); spent += 100)
		sleep_us(100);
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

/*
 * --wait-end: the work done and its truth written, print "done PID" and
 * exit only on SIGUSR1: a test acts (stops the profiler, signals it)
 * while the target surely lives, with its work surely counted.
 */
static inline void wait_for_end(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("done %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
}

#endif
