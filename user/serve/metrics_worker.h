/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /metrics' own thread: it owns the counters (metrics.h), adds to them
 * each read's named change the loop publishes (feed.h), and renders a
 * scrape from them.  A scrape waits for a read it asked for at most
 * METRICS_WORKER_READ_WAIT_MS, and asks for none when the last one is
 * newer than METRICS_WORKER_FRESH_MS: the loop being busy makes the
 * answer older, never later.
 */
#ifndef SYNCPROF_METRICS_WORKER_H
#define SYNCPROF_METRICS_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "feed.h"
#include "outbox.h"

#define METRICS_WORKER_READ_WAIT_MS	50
#define METRICS_WORKER_FRESH_MS		100
/* The thread's name. */
#define METRICS_WORKER_NAME		"syncprof-scrape"

struct metrics_worker;

/* Starts the thread; done_fd (an eventfd) is written when a page is done. */
int metrics_worker__new(unsigned int max_series, int done_fd,
			struct metrics_worker **out);
void metrics_worker__free(struct metrics_worker *w);
/* The loop: a read's change (taken). */
void metrics_worker__feed(struct metrics_worker *w, struct feed *feed);
/*
 * A scrape, id: *read true when it wants a fresh read of the probes (the
 * caller asks the loop).  0, or -ENOMEM: not queued.
 */
int metrics_worker__want(struct metrics_worker *w, unsigned long id,
			 bool *read);
/* Its client left: no page. */
void metrics_worker__cancel(struct metrics_worker *w, unsigned long id);
/* A page done, if any: true and *page (the caller's). */
bool metrics_worker__take(struct metrics_worker *w, struct outbox_page *page);

#endif
