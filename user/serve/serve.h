/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve [HOST:]PORT: the run's waits over HTTP, for the engines a fleet
 * runs.  GET /metrics (Prometheus), /debug/pprof/block (the waiters'
 * stacks) and /debug/pprof/mutex (the releasers', --blame's), Go's
 * protocol: gzipped profile.proto, everything since start, or with
 * ?seconds=N the change over the next N seconds; / lists them.
 *
 * The server runs in the caller's poll loop (serve__fd, serve__dispatch):
 * a scrape reads the probes as a report does, between two of the loop's
 * other jobs, and never blocks the kernel side.
 */
#ifndef SYNCPROF_SERVE_H
#define SYNCPROF_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"
#include "snapshot.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "whyrows.h"

/* The run as a scrape sees it, just read (the caller's, valid until the next read). */
struct serve_view {
	const struct snapshot *waits;	/* totals since start */
	const struct snapshot *blame;	/* --blame's totals since start */
	const struct why *why;		/* --why's totals since start, or NULL:
					   /debug/pprof/block is split by the
					   roots of its chains, as -f pprof */
	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	uint64_t now_ns;
	pid_t pid;			/* the first target */
	const char *comm;
	const char *scope;		/* what the run follows (pprof's
					   header; session__scope) */
	const char *mode;
	const struct procset_entry *processes;	/* NULL: pid alone */
	size_t n_processes;
	size_t followed;		/* processes followed now */
	struct format_drops drops;
};

struct serve_config {
	const char *listen;		/* [HOST:]PORT */
	unsigned int max_series;	/* --max-series */
	bool coalesce;			/* a program's objects of one kind
					   share a series (--no-coalesce:
					   not) */
	struct symbolizer *symbolizer;	/* names rows and frames */
	const struct stacktab *stacks;	/* the run's stacks; NULL: none */
	/* Reads the probes now (through serve__add_delta) and fills *view. */
	int (*read)(void *ctx, struct serve_view *view);
	void *ctx;
};

struct serve;

/* Binds and listens; says where on stderr.  0 or -errno (said too). */
int serve__new(const struct serve_config *cfg, struct serve **out);
void serve__free(struct serve *s);
/* One fd to poll for input: requests, and the ends of ?seconds=N. */
int serve__fd(const struct serve *s);
/* Serves what is ready, without blocking.  0 or -errno. */
int serve__dispatch(struct serve *s);
/*
 * A read's change (rows keyed as the reports key them), added to the
 * counters of /metrics.  Every read of the probes must come here once.
 */
int serve__add_delta(struct serve *s, const struct snapshot *delta,
		     const struct procset_entry *processes,
		     size_t n_processes);
#endif
