// SPDX-License-Identifier: GPL-2.0
/* lib/holdkit.h's helpers, one copy for the targets that link it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "holdkit.h"
#include "targetkit.h"

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* run_delay and the slices run (fields 2 and 3 of schedstat). */
static void schedstat_read(uint64_t *delay, uint64_t *slices)
{
	unsigned long long run = 0, d = 0, n = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu %llu", &run, &d, &n) != 3)
			d = n = 0;
		fclose(f);
	}
	*delay = d;
	*slices = n;
}

uint64_t run_delay_ns(void)
{
	uint64_t delay, slices;

	schedstat_read(&delay, &slices);
	return delay;
}

void compute_us(int us)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)us * 1000;
	volatile uint64_t x = 0;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
}

/*
 * The three clocks at one instant: read again while the thread was
 * switched out between the reads (the slices it has run moved on), which
 * would put that wait for a CPU in the wall time and not in run_delay, or
 * the other way round: beside busy loops one such wait is milliseconds.
 */
static void clocks_now(struct stretch *now)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t before, after, delay;

		schedstat_read(&now->delay, &before);
		now->cpu = thread_cpu_ns();
		now->wall = now_ns();
		schedstat_read(&delay, &after);
		if (after == before && delay == now->delay)
			return;
	}
}

void stretch_begin(struct stretch *s)
{
	clocks_now(s);
}

void stretch_end(const struct stretch *s, struct clocks *sum)
{
	struct stretch end;

	clocks_now(&end);
	sum->cpu_ns += end.cpu - s->cpu;
	sum->run_delay_ns += end.delay - s->delay;
	sum->wall_ns += end.wall - s->wall;
}

void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(50);
}

void wait_started(atomic_int *pids, int n)
{
	for (int c = 0; c < n; c++)
		while (!atomic_load(&pids[c]))
			sleep_us(50);
}

void wait_task_in_futex(pid_t pid)
{
	for (int spent = 0; spent < 2000000 && !task_in_futex(pid, pid);
	     spent += 20)
		sleep_us(20);
}

int fork_children(pid_t *kids, int n, void (*child)(int c, void *arg),
		  void *arg)
{
	for (int c = 0; c < n; c++) {
		kids[c] = fork();
		if (kids[c] < 0)
			return -1;
		if (!kids[c]) {
			child(c, arg);
			_exit(127);
		}
	}
	return 0;
}

int reap_children(const pid_t *kids, int n)
{
	int failed = 0, status;

	for (int c = 0; c < n; c++) {
		if (waitpid(kids[c], &status, 0) < 0)
			return 1;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	return failed;
}

void write_truth(const char *dir, const char *name, const char *body)
{
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(body, f);
	fclose(f);
}
