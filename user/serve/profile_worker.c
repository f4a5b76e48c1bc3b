// SPDX-License-Identifier: GPL-2.0
/*
 * A queue under one lock: the loop appends a named job (a list append,
 * nothing more on its side), the thread takes the oldest, encodes it
 * with no lock held, and appends its page for the HTTP thread, which it
 * wakes through done_fd.  A job whose client left is encoded all the
 * same and its page dropped by the HTTP thread: a job is never shared,
 * so no cancel has to reach into one being encoded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "profile_worker.h"

struct profile_task {
	unsigned long id;
	struct profile_job *job;
};

struct profile_worker {
	int done_fd;
	pthread_t thread;
	bool started;

	pthread_mutex_t lock;	/* all below */
	pthread_cond_t cond;
	bool stopping;
	struct profile_task *tasks;	/* oldest first */
	size_t n_tasks, tasks_cap;
	struct profile_page *done;
	size_t n_done, done_cap;
};

static void *profile_worker__main(void *arg)
{
	struct profile_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct profile_task task;
		struct profile_page page = { 0 };
		uint64_t one = 1;

		if (!w->n_tasks) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		task = w->tasks[0];
		memmove(w->tasks, w->tasks + 1,
			--w->n_tasks * sizeof(*w->tasks));
		pthread_mutex_unlock(&w->lock);
		page.id = task.id;
		page.err = profile__job_encode(task.job, &page.data, &page.len);
		profile__job_free(task.job);
		pthread_mutex_lock(&w->lock);
		/* Its room was made when it was queued. */
		w->done[w->n_done++] = page;
		pthread_mutex_unlock(&w->lock);
		if (write(w->done_fd, &one, sizeof(one)) < 0)
			pr_debug("--serve: eventfd: %s", strerror(errno));
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int profile_worker__new(int done_fd, struct profile_worker **out)
{
	struct profile_worker *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->done_fd = done_fd;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	err = -pthread_create(&w->thread, NULL, profile_worker__main, w);
	if (err) {
		profile_worker__free(w);
		return err;
	}
	w->started = true;
	/* Named for top -H and /proc/PID/task/TID/comm. */
	pthread_setname_np(w->thread, PROFILE_WORKER_NAME);
	*out = w;
	return 0;
}

void profile_worker__free(struct profile_worker *w)
{
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	for (size_t i = 0; i < w->n_tasks; i++)
		profile__job_free(w->tasks[i].job);
	for (size_t i = 0; i < w->n_done; i++)
		free(w->done[i].data);
	free(w->tasks);
	free(w->done);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

int profile_worker__add(struct profile_worker *w, unsigned long id,
			struct profile_job *job)
{
	int err;

	pthread_mutex_lock(&w->lock);
	/* Room for its page too: an encoded job always finds its slot. */
	err = array__grow(&w->tasks, &w->tasks_cap, w->n_tasks + 1,
			  sizeof(*w->tasks));
	if (!err)
		err = array__grow(&w->done, &w->done_cap,
				  w->n_done + w->n_tasks + 2, sizeof(*w->done));
	if (!err) {
		w->tasks[w->n_tasks++] = (struct profile_task){ id, job };
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

bool profile_worker__take(struct profile_worker *w, struct profile_page *page)
{
	bool any;

	pthread_mutex_lock(&w->lock);
	any = w->n_done > 0;
	if (any)
		*page = w->done[--w->n_done];
	pthread_mutex_unlock(&w->lock);
	return any;
}
