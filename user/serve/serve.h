/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve [HOST:]PORT: the run's waits over HTTP, for the engines a fleet
 * runs.  GET /metrics (Prometheus), /debug/pprof/block (the waiters'
 * stacks) and /debug/pprof/mutex (the releasers', --blame's), Go's
 * protocol: gzipped profile.proto, everything since start, or with
 * ?seconds=N the change over the next N seconds; / lists them.
 *
 * The server runs on threads of its own; the loop that reads the probes
 * only hands it data.  The loop polls serve__fd: when it is readable,
 * serve__wants says what the server wants (a fresh read, profiles), and
 * the loop hands it over with serve__publish (every read's change, named:
 * feed.h) and serve__answer (the profiles' jobs, named: profile.h; the
 * server encodes them on a thread of its own).  Nothing here calls back
 * into the loop.
 */
#ifndef SYNCPROF_SERVE_H
#define SYNCPROF_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "feed.h"
#include "profile.h"
#include "request.h"

struct serve_config {
	const char *listen;		/* [HOST:]PORT */
	unsigned int max_series;	/* --max-series */
	/* Why /debug/pprof/mutex cannot be served (NULL: it can). */
	const char *no_mutex;
};

/* A profile the server waits for. */
struct serve_want {
	unsigned long id;
	bool mutex;			/* /debug/pprof/mutex, else /block */
	bool open;			/* a window opens: profile__start */
	struct profile_start *start;	/* a window ends (the loop's to free
					   after profile__make), or NULL */
};

struct serve;

/* Binds, listens and starts its threads; says where on stderr.  0 or -errno. */
int serve__new(const struct serve_config *cfg, struct serve **out);
void serve__free(struct serve *s);
/* Readable when the server wants something of the loop. */
int serve__fd(const struct serve *s);
/*
 * What the server wants now: *read, a read of the probes (then
 * serve__publish); *wants (malloc'd, *n of them), profiles (then
 * serve__answer each).  0 or -errno.
 */
int serve__wants(struct serve *s, bool *read, struct serve_want **wants,
		 size_t *n);
/*
 * Whether want id's client still waits (a profile in the making for one
 * that left is dropped: serve__answer with -ECANCELED).
 */
bool serve__wanted(struct serve *s, unsigned long id);
/* serve__fd readable again: the loop has more to do for the server. */
void serve__again(struct serve *s);
/* A read's change (taken), for /metrics.  Every read must come here once. */
void serve__publish(struct serve *s, struct feed *feed);
/*
 * The answer to want id: err (-errno, said to the client), or a profile's
 * job, named (taken: encoded off the loop), or a window's start (taken).
 */
void serve__answer(struct serve *s, unsigned long id, int err,
		   struct profile_job *job, struct profile_start *start);
#endif
