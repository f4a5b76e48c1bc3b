// SPDX-License-Identifier: GPL-2.0
/*
 * threadrun.c against this process's own threads: a thread that spins
 * times its own CPU (CLOCK_THREAD_CPUTIME_ID); its schedstat run time
 * between two samples must agree, and a thread that exits between them
 * is still counted, up to its last poll.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "threadrun.h"

struct spinner {
	_Atomic int tid;
	_Atomic int go, done, leave;
	uint64_t cpu_ns;	/* its CPU time over the spin */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *spin(void *arg)
{
	struct spinner *s = arg;
	uint64_t t0;

	atomic_store(&s->tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&s->go))
		usleep(1000);
	t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < 50000000u)	/* 50 ms of CPU */
		;
	s->cpu_ns = thread_cpu_ns() - t0;
	atomic_store(&s->done, 1);
	while (!atomic_load(&s->leave))
		usleep(1000);
	return NULL;
}

static const struct findings_thread *find(const struct findings_thread *t,
					  size_t n, int tid)
{
	for (size_t i = 0; i < n; i++)
		if ((int)t[i].tid == tid)
			return &t[i];
	return NULL;
}

static void test_run_time_is_the_threads_own(void **state)
{
	struct spinner s = { 0 };
	struct threadrun *tr;
	struct findings_thread *t;
	const struct findings_thread *mine;
	pid_t self = getpid();
	size_t n, alive;
	pthread_t th;
	char task[64];

	(void)state;
	assert_int_equal(threadrun__new(&tr), 0);
	assert_int_equal(pthread_create(&th, NULL, spin, &s), 0);
	while (!atomic_load(&s.tid))
		usleep(1000);
	/* The first sample: the window starts. */
	assert_int_equal(threadrun__sample(tr, &self, 1, 1000000000u, &t, &n,
					   &alive), 0);
	assert_non_null(find(t, n, atomic_load(&s.tid)));
	free(t);
	atomic_store(&s.go, 1);
	while (!atomic_load(&s.done))
		usleep(1000);
	/* A poll while it lives, then it exits before the sample. */
	assert_int_equal(threadrun__poll(tr, &self, 1), 0);
	atomic_store(&s.leave, 1);
	pthread_join(th, NULL);
	/*
	 * pthread_join returns when the kernel clears the thread's id, before
	 * it has reaped the thread: until then its /proc task is still there.
	 */
	snprintf(task, sizeof(task), "/proc/self/task/%d", atomic_load(&s.tid));
	for (int i = 0; i < 10000 && !access(task, F_OK); i++)
		usleep(1000);
	assert_int_equal(threadrun__sample(tr, &self, 1, 1000000000u, &t, &n,
					   &alive), 0);
	mine = find(t, n, atomic_load(&s.tid));
	assert_non_null(mine);
	/* Its spin, and the few wakeups around it: within 10% above. */
	assert_true(mine->run_ns >= s.cpu_ns * 95 / 100);
	assert_true(mine->run_ns <= s.cpu_ns * 110 / 100 + 5000000u);
	/* The spinner counted, but not alive: it exited. */
	assert_int_equal(alive, n - 1);
	free(t);
	threadrun__free(tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_time_is_the_threads_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
