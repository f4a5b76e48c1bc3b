/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's /debug/pprof/block and /mutex, made on the loop that reads
 * the probes (their frames are named by the loop's symbolizer): Go's
 * protocol, gzipped profile.proto, everything since start, or the change
 * over a window (profile__start when it opens, profile__make with that
 * start when it ends).  The bytes and the starts are plain memory, owned
 * by whoever holds them: the server keeps them on its own threads.
 */
#ifndef SYNCPROF_PROFILE_H
#define SYNCPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "whycharges.h"

struct procset_entry;

/* The run as a profile sees it, just read (the loop's, valid until its next read). */
struct profile_view {
	const struct snapshot *waits;	/* totals since start */
	const struct snapshot *blame;	/* --blame's totals since start */
	const struct why *why;		/* --why's totals since start, or NULL:
					   /debug/pprof/block is split by the
					   roots of its chains, as -f pprof */
	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	uint64_t now_ns;
	pid_t pid;			/* the first target */
	const char *comm;
	const char *scope;		/* what the run follows (the header;
					   session__scope) */
	const char *mode;
	const struct procset_entry *processes;	/* NULL: pid alone */
	size_t n_processes;
};

/* The totals when a window opened. */
struct profile_start;

/* mutex: /debug/pprof/mutex (the releasers'), else /block.  0 or -errno. */
int profile__start(const struct profile_view *v, bool mutex,
		   struct profile_start **out);
void profile__start_free(struct profile_start *start);
/*
 * The profile now (start NULL: since syncprof started), gzipped, in
 * *data (malloc'd) and *len.  0 or -errno.
 */
int profile__make(struct symbolizer *sym, const struct stacktab *stacks,
		  const struct profile_view *v, bool mutex,
		  const struct profile_start *start, char **data, size_t *len);

#endif
