// SPDX-License-Identifier: GPL-2.0
/*
 * The C++20 library's own locks: std::shared_mutex (pthread rwlock
 * underneath), std::counting_semaphore (a futex wait inlined into the
 * program, in libstdc++'s __atomic_wait_address) and std::thread::join.
 *
 *   cxxrt [--iters N] [--hold-us N] [--truth FILE]
 *
 * Each iteration: a helper holds the shared_mutex exclusively while the
 * main thread blocks in lock_shared() (path "shared"), then holds it
 * shared while the main thread blocks in lock() (path "exclusive"); the
 * main thread blocks in acquire() until the helper releases the
 * semaphore 3 x --hold-us later (path "sem"); last, a thread that sleeps
 * --hold-us is joined (path "join"); then the main thread waits at a
 * std::barrier (path "barrier") and a pthread barrier (path "pbarrier")
 * for a thread that arrives later.  The main thread's clock around
 * each call is the truth: {"pid", "objects": {"smx", "sem"}, "paths":
 * {NAME: {"count", "wait_ns"}}}.  acquire() spins and yields before it
 * sleeps in the futex, and on a loaded machine each yield can give the
 * CPU away for a time slice: "sem" also has "blocked_ns", the part of
 * each call from when the helper saw the main thread in the futex, a
 * lower bound of its futex sleep (wait_ns is the upper); so has
 * "barrier", whose arrive_and_wait() spins and yields the same way.
 */
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <getopt.h>
#include <semaphore>
#include <shared_mutex>
#include <thread>

#include "lib/targetkit.h"

std::shared_mutex smx;
std::counting_semaphore<8> sem(0);
std::barrier<> bar(2);
pthread_barrier_t pbar;

static int iters = 20, hold_us = 3000;
static std::atomic<int> phase;
static std::atomic<int> main_tid;

enum { SHARED, EXCLUSIVE, SEM, JOIN, BARRIER, PBARRIER, PATHS };
static const char *const names[PATHS] = { "shared", "exclusive", "sem", "join",
					   "barrier", "pbarrier" };
static uint64_t wait_ns[PATHS], count[PATHS];
/* sem and barrier: when the other thread saw main sleep in the futex. */
static std::atomic<uint64_t> blocked_at[PATHS];
static uint64_t blocked_ns[PATHS];

static void wait_phase(int value)
{
	while (phase.load() < value)
		sleep_us(50);
}

static void helper()
{
	for (int i = 0; i < iters; i++) {
		smx.lock();
		phase.store(5 * i + 1);
		wait_blocked_in_futex(main_tid.load());
		sleep_us(hold_us);
		smx.unlock();
		wait_phase(5 * i + 2);
		smx.lock_shared();
		phase.store(5 * i + 3);
		wait_blocked_in_futex(main_tid.load());
		sleep_us(hold_us);
		smx.unlock_shared();
		wait_phase(5 * i + 4);
		wait_blocked_in_futex(main_tid.load());
		blocked_at[SEM].store(now_ns());
		/* Longer: acquire() spins and yields before it sleeps. */
		sleep_us(3 * hold_us);
		sem.release();
		wait_phase(5 * i + 5);
	}
}

static void sleeper()
{
	sleep_us(hold_us);
}

/* Arrives last at both barriers, once the main thread sleeps at each. */
static void arriver()
{
	for (int i = 0; i < iters; i++) {
		wait_blocked_in_futex(main_tid.load());
		blocked_at[BARRIER].store(now_ns());
		sleep_us(3 * hold_us);
		bar.arrive_and_wait();
		wait_blocked_in_futex(main_tid.load());
		sleep_us(hold_us);
		pthread_barrier_wait(&pbar);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, nullptr, 'n' },
		{ "hold-us", required_argument, nullptr, 'h' },
		{ "truth", required_argument, nullptr, 't' },
		{ nullptr, 0, nullptr, 0 },
	};
	const char *truth = nullptr;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
		if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'h')
			hold_us = atoi(optarg);
		else if (c == 't')
			truth = optarg;
		else
			return 2;
	}
	main_tid.store((int)gettid());
	std::thread thread(helper);
	for (int i = 0; i < iters; i++) {
		uint64_t t0;

		wait_phase(5 * i + 1);
		sleep_us(hold_us / 10);
		t0 = now_ns();
		smx.lock_shared(); /* CALLSITE:shared */
		wait_ns[SHARED] += now_ns() - t0;
		count[SHARED]++;
		smx.unlock_shared();
		phase.store(5 * i + 2);
		wait_phase(5 * i + 3);
		sleep_us(hold_us / 10);
		t0 = now_ns();
		smx.lock(); /* CALLSITE:exclusive */
		wait_ns[EXCLUSIVE] += now_ns() - t0;
		count[EXCLUSIVE]++;
		smx.unlock();
		phase.store(5 * i + 4);
		t0 = now_ns();
		sem.acquire(); /* CALLSITE:sem */
		wait_ns[SEM] += now_ns() - t0;
		blocked_ns[SEM] += now_ns() - std::max(t0, blocked_at[SEM].load());
		count[SEM]++;
		phase.store(5 * i + 5);
	}
	thread.join();
	for (int i = 0; i < iters; i++) {
		std::thread t(sleeper);
		uint64_t t0 = now_ns();

		t.join(); /* CALLSITE:join */
		wait_ns[JOIN] += now_ns() - t0;
		count[JOIN]++;
	}
	pthread_barrier_init(&pbar, nullptr, 2);
	std::thread other(arriver);
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = now_ns();

		bar.arrive_and_wait(); /* CALLSITE:barrier */
		wait_ns[BARRIER] += now_ns() - t0;
		blocked_ns[BARRIER] += now_ns() - std::max(t0, blocked_at[BARRIER].load());
		count[BARRIER]++;
		t0 = now_ns();
		pthread_barrier_wait(&pbar); /* CALLSITE:pbarrier */
		wait_ns[PBARRIER] += now_ns() - t0;
		count[PBARRIER]++;
	}
	other.join();
	if (!truth)
		return 0;
	FILE *f = fopen(truth, "w");
	if (!f)
		return 1;
	fprintf(f, "{\"pid\": %d, \"objects\": {\"smx\": \"%p\", \"sem\": \"%p\"}, "
		"\"paths\": {", (int)getpid(), (void *)&smx, (void *)&sem);
	for (int p = 0; p < PATHS; p++) {
		fprintf(f, "%s\"%s\": {\"count\": %llu, \"wait_ns\": %llu", p ? ", " : "",
			names[p], (unsigned long long)count[p],
			(unsigned long long)wait_ns[p]);
		if (p == SEM || p == BARRIER)
			fprintf(f, ", \"blocked_ns\": %llu",
				(unsigned long long)blocked_ns[p]);
		fprintf(f, "}");
	}
	fprintf(f, "}}\n");
	return fclose(f) ? 1 : 0;
}
