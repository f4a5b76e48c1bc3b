// SPDX-License-Identifier: GPL-2.0
/*
 * A target for --off-cpu: threads that block outside futexes, at known
 * lines, for times they measure themselves.
 *
 *   poller   epoll_wait on an eventfd (type poll); its helper writes the
 *            eventfd --hold-us after the poller sits in epoll_wait
 *   reader   read on a pipe (type io); its helper writes a byte the same
 *            way
 *   sleeper  clock_nanosleep for --hold-us (type sleep)
 *   locker   pthread_mutex_lock on a mutex its helper holds --hold-us
 *            after it blocked: a futex wait, a lock row, never off-CPU
 *
 * Each measured call sits between two clock_gettime(CLOCK_MONOTONIC)
 * reads; the sums and counts go to --truth FILE as JSON.  The helpers
 * poll /proc's syscall file with nanosleep until their waiter blocks, so
 * every measured call blocks exactly once.
 *
 *   offcpu [--iters N] [--hold-us N] [--truth FILE]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/targetkit.h"

static struct {
	int iters;
	int hold_us;
} cfg = { .iters = 20, .hold_us = 20000 };

struct measure {
	uint64_t count;
	uint64_t wait_ns;
};

static struct measure poll_m, read_m, sleep_m, lock_m;
static int efd, epfd, pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int tids[4];	/* poller, reader, sleeper, locker */
static atomic_int turn[4];	/* the iteration each waiter is in */

static long in_syscall(pid_t tid)
{
	char path[64], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return atol(buf);
}

/* The helper's wait until waiter w, in iteration i, blocks in nr. */
static void wait_blocked(int w, int i, long nr)
{
	while (atomic_load(&turn[w]) != i || !atomic_load(&tids[w]))
		sleep_us(100);
	for (int spent = 0; spent < 2000000 && in_syscall(tids[w]) != nr;
	     spent += 100)
		sleep_us(100);
}

static void add(struct measure *m, uint64_t t0)
{
	m->count++;
	m->wait_ns += now_ns() - t0;
}

static void *poller(void *arg)
{
	struct epoll_event ev;
	uint64_t value;

	atomic_store(&tids[0], (int)syscall(SYS_gettid));
	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t t0;
		int n;

		atomic_store(&turn[0], i);
		t0 = now_ns();
		do
			n = epoll_wait(epfd, &ev, 1, -1); /* CALLSITE:epoll_wait */
		while (n < 0 && errno == EINTR);
		add(&poll_m, t0);
		if (read(efd, &value, sizeof(value)) != sizeof(value))
			exit(2);
	}
	return arg;
}

static void *reader(void *arg)
{
	char byte;

	atomic_store(&tids[1], (int)syscall(SYS_gettid));
	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t t0;

		atomic_store(&turn[1], i);
		t0 = now_ns();
		if (read(pipefd[0], &byte, 1) != 1) /* CALLSITE:pipe_read */
			exit(2);
		add(&read_m, t0);
	}
	return arg;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { cfg.hold_us / 1000000,
			       (long)(cfg.hold_us % 1000000) * 1000 };

	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t t0 = now_ns();

		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL); /* CALLSITE:nanosleep */
		add(&sleep_m, t0);
	}
	return arg;
}

static void *locker(void *arg)
{
	atomic_store(&tids[3], (int)syscall(SYS_gettid));
	for (int i = 1; i <= cfg.iters; i++) {
		uint64_t t0;

		/* The helper takes the lock before this turn begins. */
		while (atomic_load(&turn[3]) != -i)
			sleep_us(100);
		atomic_store(&turn[3], i);
		t0 = now_ns();
		pthread_mutex_lock(&lock); /* CALLSITE:mutex_lock */
		add(&lock_m, t0);
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

static void *helper(void *arg)
{
	uint64_t one = 1;

	for (int i = 1; i <= cfg.iters; i++) {
		wait_blocked(0, i, SYS_epoll_wait);
		sleep_us(cfg.hold_us);
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			exit(2);
	}
	return arg;
}

static void *pipe_helper(void *arg)
{
	for (int i = 1; i <= cfg.iters; i++) {
		wait_blocked(1, i, SYS_read);
		sleep_us(cfg.hold_us);
		if (write(pipefd[1], "x", 1) != 1)
			exit(2);
	}
	return arg;
}

static void *lock_helper(void *arg)
{
	for (int i = 1; i <= cfg.iters; i++) {
		pthread_mutex_lock(&lock);
		atomic_store(&turn[3], -i);
		wait_blocked(3, i, SYS_futex);
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&lock);
		while (atomic_load(&turn[3]) == i && lock_m.count < (uint64_t)i)
			sleep_us(100);
	}
	return arg;
}

static void put(FILE *f, const char *name, const struct measure *m,
		const char *sep)
{
	fprintf(f, "\"%s\": {\"count\": %llu, \"wait_ns\": %llu}%s", name,
		(unsigned long long)m->count, (unsigned long long)m->wait_ns, sep);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "truth", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	void *(*fns[])(void *) = { poller, reader, sleeper, locker, helper,
				   pipe_helper, lock_helper };
	pthread_t threads[sizeof(fns) / sizeof(fns[0])];
	struct epoll_event ev = { .events = EPOLLIN };
	const char *truth = NULL;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'i')
			cfg.iters = atoi(optarg);
		else if (c == 'h')
			cfg.hold_us = atoi(optarg);
		else if (c == 't')
			truth = optarg;
		else
			return 2;
	}
	efd = eventfd(0, EFD_CLOEXEC);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (efd < 0 || epfd < 0 || pipe(pipefd) ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev)) {
		perror("offcpu");
		return 1;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		pthread_create(&threads[i], NULL, fns[i], NULL);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		pthread_join(threads[i], NULL);
	f = truth ? fopen(truth, "w") : stdout;
	if (!f)
		return 1;
	fputc('{', f);
	put(f, "poll", &poll_m, ", ");
	put(f, "io", &read_m, ", ");
	put(f, "sleep", &sleep_m, ", ");
	put(f, "mutex", &lock_m, "");
	fputs("}\n", f);
	return f == stdout ? 0 : fclose(f) != 0;
}
