// SPDX-License-Identifier: GPL-2.0
/*
 * The profiles of --serve, by the code that writes -f pprof: report__build
 * with /metrics' grouping, the symbolizer's names, pprof.c's encoder.  A
 * window's start is a copy of the totals keyed as a profile groups them
 * (no thread, no holder), so its difference with the totals at its end
 * is the window's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "feed.h"
#include "pprof.h"
#include "procset.h"
#include "profile.h"
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

/* pprof's "process" label. */
static const char *profile__process_name(const void *ctx, pid_t pid)
{
	const struct profile_view *v = ctx;

	for (size_t i = 0; i < v->n_processes; i++)
		if (v->processes[i].pid == pid)
			return v->processes[i].comm;
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

static int profile__print(struct symbolizer *sym, const struct stacktab *stacks,
			  const struct profile_view *v,
			  const struct snapshot *view, const struct why *why,
			  uint64_t start_ns, FILE *out)
{
	struct report_rows rows = { 0 };
	struct row_names *names = NULL;
	int err = 0;

	if (view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), &feed_rows_by,
				    &rows);
	if (!err)
		err = names__rows(sym, &rows, &names);
	if (!err) {
		const struct pprof_window window = {
			.pid = v->pid,
			.comm = v->comm,
			.scope = v->scope,
			.process_name = profile__process_name,
			.process_ctx = v,
			.mode = v->mode,
			.start_ns = start_ns,
			.end_ns = v->now_ns,
			.symbolized = true,
			/* The rows' grouping: a row finds its charges by it. */
			.why = why,
			.why_rows_by = &feed_rows_by,
		};

		err = pprof__print(out, sym, stacks, &window, &rows, names);
	}
	free(names);
	report__free(&rows);
	return err;
}

int profile__make(struct symbolizer *sym, const struct stacktab *stacks,
		  const struct profile_view *v, bool mutex,
		  const struct profile_start *start, char **data, size_t *len)
{
	const struct snapshot *snap = mutex ? v->blame : v->waits;
	const struct why *why = mutex ? NULL : v->why;
	struct snapshot *now = NULL, *delta = NULL;
	const struct snapshot *view = snap;
	struct why *why_delta = NULL;
	FILE *out;
	int err = 0;

	*data = NULL;
	*len = 0;
	if (start && snap) {
		err = profile__by_process(snap, &now);
		if (!err)
			err = snapshot__delta(now, start->totals, &delta);
		view = delta;
	}
	if (!err && start && why) {
		err = why__delta(why, start->why, &why_delta);
		why = why_delta;
	}
	out = err ? NULL : open_memstream(data, len);
	if (!err && !out)
		err = -ENOMEM;
	if (!err)
		err = profile__print(sym, stacks, v, view, why,
				     start ? start->ns : v->start_ns, out);
	if (out && fclose(out) && !err)
		err = -ENOMEM;
	if (err) {
		free(*data);
		*data = NULL;
		*len = 0;
	}
	why__free(why_delta);
	snapshot__free(delta);
	snapshot__free(now);
	return err;
}
