// SPDX-License-Identifier: GPL-2.0
/*
 * A queue under the worker's lock: the loop appends a named job (a list
 * append, nothing more on its side), the thread takes the oldest, encodes
 * it with no lock held, and puts its page in the outbox for the HTTP
 * thread.  A job whose client left is encoded all the same and its page
 * dropped by the HTTP thread: a job is never shared, so no cancel has to
 * reach into one being encoded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "outbox.h"
#include "profile_worker.h"
#include "worker.h"

struct profile_task {
	unsigned long id;
	struct profile_job *job;
};

struct profile_worker {
	struct worker *thread;
	struct outbox *outbox;
	/* Under the worker's lock: */
	struct profile_task *tasks;	/* oldest first */
	size_t n_tasks, tasks_cap;
};

static void profile_worker__step(struct worker *thread, void *arg)
{
	struct profile_worker *w = arg;
	struct outbox_page page = { 0 };
	struct profile_task task;

	if (!w->n_tasks) {
		worker__wait(thread, WORKER_FOREVER);
		return;
	}
	task = w->tasks[0];
	memmove(w->tasks, w->tasks + 1, --w->n_tasks * sizeof(*w->tasks));
	worker__unlock(thread);
	page.id = task.id;
	page.err = profile__job_encode(task.job, &page.data, &page.len);
	profile__job_free(task.job);
	outbox__put(w->outbox, page);
	worker__lock(thread);
}

int profile_worker__new(int done_fd, struct profile_worker **out)
{
	struct profile_worker *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	err = outbox__new(done_fd, &w->outbox);
	if (!err)
		err = worker__start(PROFILE_WORKER_NAME, profile_worker__step,
				    w, &w->thread);
	if (err) {
		profile_worker__free(w);
		return err;
	}
	*out = w;
	return 0;
}

void profile_worker__free(struct profile_worker *w)
{
	if (!w)
		return;
	worker__stop(w->thread);
	for (size_t i = 0; i < w->n_tasks; i++)
		profile__job_free(w->tasks[i].job);
	free(w->tasks);
	outbox__free(w->outbox);
	free(w);
}

int profile_worker__add(struct profile_worker *w, unsigned long id,
			struct profile_job *job)
{
	/* Room for its page first: an encoded job always finds its slot. */
	int err = outbox__reserve(w->outbox);

	if (err)
		return err;
	worker__lock(w->thread);
	err = array__grow(&w->tasks, &w->tasks_cap, w->n_tasks + 1,
			  sizeof(*w->tasks));
	if (!err) {
		w->tasks[w->n_tasks++] = (struct profile_task){ id, job };
		worker__wake(w->thread);
	}
	worker__unlock(w->thread);
	if (err)
		outbox__unreserve(w->outbox);
	return err;
}

bool profile_worker__take(struct profile_worker *w, struct outbox_page *page)
{
	return outbox__take(w->outbox, page);
}
