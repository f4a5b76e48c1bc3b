/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's /debug/pprof/block and /mutex: Go's protocol, gzipped
 * profile.proto, everything since start, or the change over a window
 * (profile__start when it opens, a job with that start when it ends).
 * Their frames are named by the loop's symbolizer, the rest is done off
 * the loop (profile_job below).  The jobs, the bytes and the starts are
 * plain memory, owned by whoever holds them: the server keeps them on
 * its own threads.
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
 * A profile in the making, in three steps, so that the loop that reads
 * the probes spends little on it and never much at once:
 * - profile__job_new, on the loop: the figures now (start NULL: since
 *   syncprof started, else the window's change), grouped into rows and
 *   copied: nothing in the job is the loop's;
 * - profile__job_name, on the loop, again until it says done: the rows
 *   named by the loop's symbolizer, copied (profnames.h), a slice of
 *   rows at a time;
 * - profile__job_encode, on any thread: profile.proto, gzipped.
 */
struct profile_job;

/* mutex: /debug/pprof/mutex (the releasers'), else /block.  0 or -errno. */
int profile__job_new(const struct profile_view *v, bool mutex,
		     const struct profile_start *start,
		     struct profile_job **out);
void profile__job_free(struct profile_job *job);
/*
 * Names rows until budget_ns have passed (at least one row; 0: all of
 * them): 1 when every row is named, 0 when some are left, or -errno.
 */
int profile__job_name(struct profile_job *job, struct symbolizer *sym,
		      const struct stacktab *stacks, uint64_t budget_ns);
/*
 * The named job's profile, gzipped, in *data (malloc'd) and *len; any
 * thread.  0 or -errno.
 */
int profile__job_encode(const struct profile_job *job, char **data,
			size_t *len);
/* Its rows, and the bytes its copies hold. */
size_t profile__job_rows(const struct profile_job *job);
size_t profile__job_bytes(const struct profile_job *job);

#endif
