// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the many-process tests: a parent and two children it
 * forks after the start handshake contend on one PTHREAD_PROCESS_SHARED
 * mutex in shared anonymous memory.  The parent is the holder: it takes
 * the mutex, tells one child (an atomic flag in the shared page, polled
 * with nanosleep), waits until that child sits in the futex call, keeps
 * the mutex --hold-us more and unlocks; so every measured acquisition of
 * a child blocks exactly once, and the parent never blocks.  Each child
 * times its pthread_mutex_lock calls with clock_gettime and writes its
 * own truth to DIR/child-N.json; the parent writes DIR/parent.json.
 *
 *   procs [--iters N] [--hold-us N] [--truth DIR] [--wait-signal]
 *         [--spawn] [--exec PROGRAM [ARG...]]
 *
 * --exec: a third child forks and execs PROGRAM ARG... (after the other
 * two are done), and the parent waits for it; with --spawn it is made by
 * posix_spawn instead (glibc: clone(CLONE_VM | CLONE_VFORK), then exec).
 */
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/holdkit.h"
#include "lib/targetkit.h"

#define CHILDREN 2

struct shared {
	pthread_mutex_t lock;
	atomic_int held[CHILDREN];	/* iteration the parent holds for */
	atomic_int done[CHILDREN];	/* iteration the child finished */
	atomic_int pid[CHILDREN];	/* the child, once started */
};

extern char **environ;

static struct shared *sh;
static int iters = 20, hold_us = 3000;
static const char *truth_dir;

/* The measured call, not a tail call: its call site is this line. */
__attribute__((noinline)) static uint64_t child_wait(void)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&sh->lock); /* CALLSITE:procs_child */
	return now_ns() - t0;
}

static void child(int c, void *arg)
{
	uint64_t wait_ns = 0, count = 0;
	char body[256], name[32];

	(void)arg;
	atomic_store(&sh->pid[c], (int)getpid());
	for (int i = 1; i <= iters; i++) {
		wait_until(&sh->held[c], i);
		wait_ns += child_wait();
		count++;
		pthread_mutex_unlock(&sh->lock);
		atomic_store(&sh->done[c], i);
	}
	snprintf(body, sizeof(body),
		 "{\"pid\": %d, \"count\": %llu, \"wait_ns\": %llu}\n",
		 (int)getpid(), (unsigned long long)count,
		 (unsigned long long)wait_ns);
	snprintf(name, sizeof(name), "child-%d.json", c);
	write_truth(truth_dir, name, body);
	_exit(0);
}

static void hold_for(int c, int i)
{
	pthread_mutex_lock(&sh->lock); /* CALLSITE:procs_parent */
	atomic_store(&sh->held[c], i);
	wait_task_in_futex(atomic_load(&sh->pid[c]));
	sleep_us(hold_us);
	pthread_mutex_unlock(&sh->lock);
	wait_until(&sh->done[c], i);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "truth", required_argument, NULL, 't' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "exec", no_argument, NULL, 'e' },
		{ "spawn", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_mutexattr_t attr;
	bool wait_signal = false, exec_child = false, spawn = false;
	pid_t kids[CHILDREN + 1];
	char body[256];
	int opt, failed;

	while (!exec_child &&
	       (opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n': iters = atoi(optarg); break;
		case 'h': hold_us = atoi(optarg); break;
		case 't': truth_dir = optarg; break;
		case 'w': wait_signal = true; break;
		case 'e': exec_child = true; break;
		case 's': spawn = true; break;
		default: return 2;
		}
	}
	if (exec_child && optind >= argc)
		return 2;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->lock, &attr);
	if (wait_signal)
		wait_for_go();
	/* Forked now: after the profiler attached. */
	if (fork_children(kids, CHILDREN, child, NULL))
		return 1;
	wait_started(sh->pid, CHILDREN);
	for (int i = 1; i <= iters; i++)
		for (int c = 0; c < CHILDREN; c++)
			hold_for(c, i);
	failed = reap_children(kids, CHILDREN);
	if (exec_child && spawn) {
		if (posix_spawn(&kids[CHILDREN], argv[optind], NULL, NULL,
				argv + optind, environ))
			return 1;
		failed |= reap_children(&kids[CHILDREN], 1);
	} else if (exec_child) {
		kids[CHILDREN] = fork();
		if (!kids[CHILDREN]) {
			execv(argv[optind], argv + optind);
			_exit(127);
		}
		failed |= reap_children(&kids[CHILDREN], 1);
	}
	snprintf(body, sizeof(body),
		 "{\"pid\": %d, \"children\": [%d, %d], \"exec_child\": %d, "
		 "\"object\": \"0x%llx\"}\n", (int)getpid(), (int)kids[0],
		 (int)kids[1], exec_child ? (int)kids[CHILDREN] : 0,
		 (unsigned long long)(uintptr_t)&sh->lock);
	write_truth(truth_dir, "parent.json", body);
	return failed;
}
