// SPDX-License-Identifier: GPL-2.0
/*
 * The profiles of --serve, by the code that writes -f pprof: report__build
 * with /metrics' grouping, the symbolizer's names, pprof.c's encoder.  A
 * window's start is a copy of the totals keyed as a profile groups them
 * (no thread, no holder), so its difference with the totals at its end
 * is the window's.
 *
 * A job owns copies of all it reads: the rows (report__build's are
 * copies), --why's charges, the processes' names, the header's texts, and
 * the names profnames.c keeps; so it is named on the loop in slices, and
 * encoded and gzipped on another thread, while the loop reads on.  What
 * the loop pays per profile is the grouping into rows, and the names'
 * lookups (cached by the symbolizer after a program's first);
 * the encoding and the compression, most of a warm profile's cost, are
 * not the loop's.  Rejected: naming on the other thread (libdwfl is not
 * thread-safe, and the symbolizer's caches are the loop's), and one
 * profile kept up to date from each read's change, as /metrics is (the
 * stacks of every row named at every read, wanted or not).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "feed.h"
#include "pprof.h"
#include "procset.h"
#include "profile.h"
#include "profnames.h"
#include "report.h"

struct profile_start {
	struct snapshot *totals;	/* by process */
	struct why *why;		/* --why's, then */
	uint64_t ns;
};

/* A copy of snap keyed as a profile groups it: no thread, no holder. */
static void profile__no_thread(void *ctx, struct sp_key *key)
{
	key->tid = 0;
	key->owner_tid = 0;
}

static int profile__by_process(const struct snapshot *snap,
			       struct snapshot **out)
{
	int err = snapshot__merge(snap, NULL, out);

	if (!err)
		snapshot__rekey(*out, profile__no_thread, NULL);
	return err;
}

struct profile_job {
	struct why *why;		/* --why's, for /block; or NULL */
	struct report_rows rows;
	struct profnames *names;
	size_t named;			/* rows named so far */
	/* The header and the labels */
	pid_t pid;
	char *comm, *scope, *mode;
	uint64_t start_ns, end_ns;
	struct procset_entry *processes;	/* comm: ours */
	size_t n_processes;
};

/* pprof's "process" label. */
static const char *profile__process_name(const void *ctx, pid_t pid)
{
	const struct profile_job *job = ctx;

	for (size_t i = 0; i < job->n_processes; i++)
		if (job->processes[i].pid == pid)
			return job->processes[i].comm;
	return NULL;
}

int profile__start(const struct profile_view *v, bool mutex,
		   struct profile_start **out)
{
	const struct snapshot *snap = mutex ? v->blame : v->waits;
	struct profile_start *start = calloc(1, sizeof(*start));
	int err = 0;

	*out = NULL;
	if (!start)
		return -ENOMEM;
	start->ns = v->now_ns;
	if (snap)
		err = profile__by_process(snap, &start->totals);
	/* --why splits the waiters' profile: its rows are the why map's. */
	if (!err && !mutex && v->why)
		err = why__delta(v->why, NULL, &start->why);
	if (err) {
		profile__start_free(start);
		return err;
	}
	*out = start;
	return 0;
}

void profile__start_free(struct profile_start *start)
{
	if (!start)
		return;
	snapshot__free(start->totals);
	why__free(start->why);
	free(start);
}

/* s copied; *err -ENOMEM on failure (NULL stays NULL). */
static char *profile__strdup(const char *s, int *err)
{
	char *copy = s ? strdup(s) : NULL;

	if (s && !copy)
		*err = -ENOMEM;
	return copy;
}

static int profile__copy_view(struct profile_job *job,
			      const struct profile_view *v)
{
	int err = 0;

	job->pid = v->pid;
	job->comm = profile__strdup(v->comm, &err);
	job->scope = profile__strdup(v->scope, &err);
	job->mode = profile__strdup(v->mode, &err);
	job->end_ns = v->now_ns;
	if (!v->n_processes)
		return err;
	job->processes = calloc(v->n_processes, sizeof(*job->processes));
	if (!job->processes)
		return -ENOMEM;
	job->n_processes = v->n_processes;
	for (size_t i = 0; i < v->n_processes; i++) {
		job->processes[i] = v->processes[i];
		job->processes[i].comm = profile__strdup(v->processes[i].comm,
							 &err);
	}
	return err;
}

int profile__job_new(const struct profile_view *v, bool mutex,
		     const struct profile_start *start,
		     struct profile_job **out)
{
	const struct snapshot *snap = mutex ? v->blame : v->waits;
	const struct why *why = mutex ? NULL : v->why;
	struct profile_job *job = calloc(1, sizeof(*job));
	struct snapshot *now = NULL, *delta = NULL;
	int err = 0;

	*out = NULL;
	if (!job)
		return -ENOMEM;
	job->start_ns = start ? start->ns : v->start_ns;
	if (start && snap) {
		err = profile__by_process(snap, &now);
		if (!err)
			err = snapshot__delta(now, start->totals, &delta);
		snap = delta;
	}
	/* A window's charges are its change; else a copy of the totals. */
	if (!err && why)
		err = why__delta(why, start ? start->why : NULL, &job->why);
	if (!err)
		err = profile__copy_view(job, v);
	/* The rows are copies: the loop's snapshot is not kept. */
	if (!err && snap)
		err = report__build(snapshot__entries(snap),
				    snapshot__count(snap), &feed_rows_by,
				    &job->rows);
	if (!err)
		err = profnames__new(job->rows.count, &job->names);
	snapshot__free(delta);
	snapshot__free(now);
	if (err) {
		profile__job_free(job);
		return err;
	}
	*out = job;
	return 0;
}

void profile__job_free(struct profile_job *job)
{
	if (!job)
		return;
	profnames__free(job->names);
	report__free(&job->rows);
	why__free(job->why);
	for (size_t i = 0; i < job->n_processes; i++)
		free((char *)job->processes[i].comm);
	free(job->processes);
	free(job->comm);
	free(job->scope);
	free(job->mode);
	free(job);
}

int profile__job_name(struct profile_job *job, struct symbolizer *sym,
		      const struct stacktab *stacks, uint64_t budget_ns)
{
	uint64_t end = clock__monotonic_ns() + budget_ns;

	while (job->named < job->rows.count) {
		int err = profnames__name(job->names, job->named, sym, stacks,
					  &job->rows.rows[job->named],
					  job->why, &feed_rows_by);

		if (err)
			return err;
		job->named++;
		if (budget_ns && clock__monotonic_ns() >= end)
			break;
	}
	return job->named == job->rows.count;
}

static int profile__encode(const struct profile_job *job, FILE *out)
{
	const struct row_names *names = profnames__names(job->names);
	struct pprof_window window = {
		.pid = job->pid,
		.comm = job->comm,
		.scope = job->scope,
		.process_name = profile__process_name,
		.process_ctx = job,
		.mode = job->mode,
		.start_ns = job->start_ns,
		.end_ns = job->end_ns,
		.symbolized = true,
		/* The rows' grouping: a row finds its charges by it. */
		.why = job->why,
		.why_rows_by = &feed_rows_by,
	};
	struct pprof *p = NULL;
	int err;

	if (job->why) {
		window.source_root_len = names__source_root(&job->rows, names);
		window.source_root = names__source_root_text(&job->rows, names,
							     window.source_root_len);
	}
	err = pprof__new(&window, &p);
	for (size_t i = 0; !err && i < job->rows.count; i++)
		err = pprof__add_from(p, profnames__source(job->names),
				      &job->rows.rows[i], names[i].object_symbol,
				      profnames__stacks(job->names, i));
	if (!err)
		err = pprof__finish(p, out);
	pprof__free(p);
	return err;
}

int profile__job_encode(const struct profile_job *job, char **data,
			size_t *len)
{
	FILE *out;
	int err = 0;

	*data = NULL;
	*len = 0;
	if (job->named < job->rows.count)
		return -EINVAL;
	out = open_memstream(data, len);
	if (!out)
		return -ENOMEM;
	err = profile__encode(job, out);
	if (fclose(out) && !err)
		err = -ENOMEM;
	if (err) {
		free(*data);
		*data = NULL;
		*len = 0;
	}
	return err;
}

size_t profile__job_rows(const struct profile_job *job)
{
	return job->rows.count;
}

size_t profile__job_bytes(const struct profile_job *job)
{
	return profnames__bytes(job->names);
}
