// SPDX-License-Identifier: GPL-2.0
/*
 * blockedtime: this process's own threads, sampled from /proc: a sleep
 * is blocked time, a spin is not, and a thread that exits keeps what
 * its last sample said.  In a virtual machine the host may run something
 * else while the spin is on its CPU (steal time): schedstat counts that
 * neither as CPU time nor as a wait for a CPU, so it is blocked time to
 * blockedtime; the spin is pinned to one CPU and that CPU's steal from
 * /proc/stat over the spin is allowed for.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "blockedtime.h"
#include "clock.h"

#define UNUSED __attribute__((unused))
#define MS 1000000ull

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts))
		;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The unit of /proc/stat's times, in ns. */
static uint64_t clock_tick_ns(void)
{
	return 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* CPU cpu's steal time from /proc/stat, in ns (whole clock ticks). */
static uint64_t cpu_steal_ns(int cpu)
{
	uint64_t tick = clock_tick_ns();
	unsigned long long v[8];
	char line[512], name[32];
	uint64_t steal = 0;
	FILE *f = fopen("/proc/stat", "r");

	assert_non_null(f);
	snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, strlen(name)))
			continue;
		assert_int_equal(sscanf(line + strlen(name),
					"%llu %llu %llu %llu %llu %llu %llu %llu",
					&v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
					&v[6], &v[7]), 8);
		steal = (uint64_t)v[7] * tick;
		break;
	}
	fclose(f);
	return steal;
}

/*
 * This thread's CPU time and wait for a CPU (its schedstat).  A sample
 * stands for the instant given to it, but reads /proc after it: what the
 * reading thread ran or waited for a CPU in between counts as busy time
 * before the instant, and the blocked time it leaves is short by that
 * (beside busy loops, a wait for a CPU of milliseconds).
 */
static uint64_t own_busy_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu %llu", &run, &wait), 2);
	fclose(f);
	return (uint64_t)(run + wait);
}

/*
 * One round of samples of this process, as the session takes them;
 * returns this thread's busy time between the round's instant and its
 * reads.
 */
static uint64_t round_of(struct blockedtime *b)
{
	uint64_t now, late;

	blockedtime__round_begin(b);
	now = clock__monotonic_ns();
	late = own_busy_ns();
	assert_int_equal(blockedtime__sample(b, getpid(), now), 0);
	late = own_busy_ns() - late;
	blockedtime__round_end(b);
	return late;
}

static void test_a_sleep_is_blocked_a_spin_is_not(void **state UNUSED)
{
	struct blockedtime *b;
	uint64_t t0, t1, slept, after_spin, spin_end, stolen, late;
	cpu_set_t was, one;
	int cpu;

	assert_int_equal(blockedtime__new(&b), 0);
	assert_int_equal(blockedtime__blocked_ns(b), 0);
	t0 = clock__monotonic_ns();
	assert_int_equal(blockedtime__sample(b, getpid(), t0), 0);
	sleep_ns(50 * MS);
	t1 = clock__monotonic_ns();
	late = own_busy_ns();
	assert_int_equal(blockedtime__sample(b, getpid(), t1), 0);
	late = own_busy_ns() - late;
	slept = blockedtime__blocked_ns(b);
	/* At least the sleep (less the CPU its calls took, and the sample's
	   lateness), at most the wall time between the samples. */
	assert_in_range(slept + late, 40 * MS, UINT64_MAX);
	assert_true(slept <= t1 - t0);
	/* 30 ms of CPU: running or waiting for a CPU, never blocked, but
	   for what the host stole from its CPU meanwhile. */
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	cpu = sched_getcpu();
	assert_true(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	stolen = cpu_steal_ns(cpu);
	spin_end = thread_cpu_ns() + 30 * MS;
	while (thread_cpu_ns() < spin_end)
		;
	t1 = clock__monotonic_ns();
	late = own_busy_ns();
	assert_int_equal(blockedtime__sample(b, getpid(), t1), 0);
	late = own_busy_ns() - late;
	/* Whole ticks both times: the interval is short by less than one. */
	stolen = cpu_steal_ns(cpu) - stolen + clock_tick_ns();
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	after_spin = blockedtime__blocked_ns(b);
	/* The kernel adds a running thread's CPU time at its ticks and
	   switches: each sample may lag its thread's by a tick or two. */
	assert_in_range(after_spin + late, slept > 10 * MS ? slept - 10 * MS : 0,
			slept + late + 15 * MS + stolen - 1);
	blockedtime__free(b);
}

static void *napper(void *arg)
{
	sleep_ns(*(uint64_t *)arg);
	return NULL;
}

static void test_an_exited_thread_keeps_its_last_sample(void **state UNUSED)
{
	uint64_t nap = 80 * MS, before, after, late;
	struct blockedtime *b;
	pthread_t t;

	assert_int_equal(blockedtime__new(&b), 0);
	assert_int_equal(pthread_create(&t, NULL, napper, &nap), 0);
	round_of(b);
	sleep_ns(40 * MS);
	late = round_of(b);
	before = blockedtime__blocked_ns(b);
	/* Both threads slept about 40 ms since the first round (main's
	   short by the round's lateness). */
	assert_in_range(before + late, 60 * MS, UINT64_MAX);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* The napper is gone: the round drops it, its 40 ms stay; main's
	   join adds to it. */
	round_of(b);
	after = blockedtime__blocked_ns(b);
	assert_true(after + 10 * MS >= before);
	round_of(b);
	assert_true(blockedtime__blocked_ns(b) + 10 * MS >= after);
	blockedtime__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_sleep_is_blocked_a_spin_is_not),
		cmocka_unit_test(test_an_exited_thread_keeps_its_last_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
