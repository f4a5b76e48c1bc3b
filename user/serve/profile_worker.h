/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profiles' own thread: it encodes and gzips the jobs the loop has
 * named (profile.h), in the order they came, apart from /metrics' worker
 * so that a large profile holds no scrape of /metrics.
 */
#ifndef SYNCPROF_PROFILE_WORKER_H
#define SYNCPROF_PROFILE_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "outbox.h"
#include "profile.h"

/* The thread's name. */
#define PROFILE_WORKER_NAME	"syncprof-pprof"

struct profile_worker;

/* Starts the thread; done_fd (an eventfd) is written when a page is done. */
int profile_worker__new(int done_fd, struct profile_worker **out);
void profile_worker__free(struct profile_worker *w);
/* A named job to encode for request id (taken).  0, or -ENOMEM: not queued. */
int profile_worker__add(struct profile_worker *w, unsigned long id,
			struct profile_job *job);
/* A page done, if any: true and *page (the caller's). */
bool profile_worker__take(struct profile_worker *w, struct outbox_page *page);

#endif
