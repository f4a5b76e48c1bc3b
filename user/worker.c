// SPDX-License-Identifier: GPL-2.0
/*
 * The frame every thread of syncprof's own shares: its lock, a condition
 * on CLOCK_MONOTONIC (the clock of the deadlines, which a wall clock step
 * would move), the stop flag, and the signals blocked before it starts so
 * that a SIGINT or SIGCHLD reaches the loop, never a worker.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "worker.h"

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	worker_step_fn step;
	void *arg;
	char name[16];		/* the kernel keeps 15 bytes */
};

static void *worker__main(void *arg)
{
	struct worker *w = arg;

	/* Named before its first step, from the thread itself. */
	pthread_setname_np(pthread_self(), w->name);
	pthread_mutex_lock(&w->lock);
	while (!w->stopping)
		w->step(w, w->arg);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void worker__destroy(struct worker *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

int worker__start(const char *name, worker_step_fn step, void *arg,
		  struct worker **out)
{
	struct worker *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->step = step;
	w->arg = arg;
	snprintf(w->name, sizeof(w->name), "%s", name);
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&w->thread, NULL, worker__main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		worker__destroy(w);
		return err;
	}
	*out = w;
	return 0;
}

void worker__stop(struct worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	worker__destroy(w);
}

void worker__lock(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
}

void worker__unlock(struct worker *w)
{
	pthread_mutex_unlock(&w->lock);
}

void worker__wake(struct worker *w)
{
	pthread_cond_signal(&w->cond);
}

bool worker__wait(struct worker *w, uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000ull),
		.tv_nsec = (long)(deadline_ns % 1000000000ull),
	};

	if (w->stopping)
		return true;
	if (deadline_ns == WORKER_FOREVER)
		pthread_cond_wait(&w->cond, &w->lock);
	else
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	return w->stopping;
}

bool worker__stopping(const struct worker *w)
{
	return w->stopping;
}
