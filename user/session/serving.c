// SPDX-License-Identifier: GPL-2.0
/*
 * --serve in a session.  The server (user/serve/) runs on threads of its
 * own and never calls back: the loop polls its fd, asks it what it wants
 * (serve__wants), reads the probes as a report does (session__read) and
 * hands the answers down: every read's change, named (a feed), and the
 * profiles it asked for, named here because the symbolizer is the loop's.
 *
 * A profile is made over several turns of the loop: the turn that takes
 * the request reads the probes; the next reads the charges it needs
 * (--blame's, --why's); the next groups the rows (profile__job_new);
 * then the rows are named SERVING_SLICE_MS at a time.  Between turns
 * the loop goes back to its events (serve__again makes the server's fd
 * readable, so poll returns at once); the named job goes to the server,
 * which encodes it on its own thread.  A slice ends between rows: a row
 * whose program is named for the first time (its DWARF read) takes as
 * long as that takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "duty.h"
#include "log.h"
#include "options.h"
#include "probes.h"
#include "serve.h"
#include "snapshot.h"
#include "target.h"
#include "whyrows.h"
#include "session.h"

/* The loop's time for profiles' names per turn, in ms. */
#define SERVING_SLICE_MS	5

/* A profile being made: grouped (job), then named. */
struct serving_job {
	unsigned long id;
	bool mutex;
	bool charged;			/* its charges read again */
	struct profile_start *start;	/* a window's, until grouped */
	struct profile_job *job;	/* NULL: not grouped yet */
};

/* The server, and the last reads of --blame's and --why's charges. */
struct serving {
	struct serve *serve;
	struct snapshot *blame;
	struct why *why;
	char scope[256];	/* the profiles' header (session__scope) */
	struct serving_job *jobs;	/* oldest first */
	size_t n_jobs, jobs_cap;
	/* The loop's CPU on the server's wants (syncprof_serve_loop_*) */
	uint64_t read_ns, profile_ns;
};

int session__serve_start(struct session *s)
{
	const struct serve_config cfg = {
		.listen = s->opts->serve,
		.max_series = s->opts->max_series,
		.no_mutex = s->opts->blame ? NULL :
			    "the releasers' profile needs every release, which "
			    "--duty's switches cut: leave --duty out for it",
	};
	struct serving *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	s->serving = g;
	session__keep_changes(s);
	return serve__new(&cfg, &g->serve);
}

void session__serve_free(struct session *s)
{
	struct serving *g = s->serving;

	if (!g)
		return;
	for (size_t i = 0; i < g->n_jobs; i++) {
		profile__start_free(g->jobs[i].start);
		profile__job_free(g->jobs[i].job);
	}
	free(g->jobs);
	serve__free(g->serve);
	snapshot__free(g->blame);
	why__free(g->why);
	free(g);
	s->serving = NULL;
}

bool session__serving(const struct session *s)
{
	return s->serving && s->serving->serve;
}

int session__serve_fd(const struct session *s)
{
	return session__serving(s) ? serve__fd(s->serving->serve) : -1;
}

int session__serve_publish(struct session *s)
{
	struct snapshot *changes;
	const struct procset_entry *procs;
	struct feed_health health = { .followed = session__alive(s) };
	struct feed *feed = NULL;
	size_t n;
	int err;

	if (!session__serving(s))
		return 0;
	health.loop_read_ns = s->serving->read_ns;
	health.loop_profile_ns = s->serving->profile_ns;
	if (s->duty) {
		struct duty_times t;

		duty__times(s->duty, clock__monotonic_ns(), &t);
		health.duty_pct = t.pct;
		health.duty_window_ns = t.on_ns;
		health.duty_ns = t.on_ns + t.off_ns;
		health.duty_cut = t.cut;
	}
	symbolizer__cache_stats(&health.cache);
	if (s->probes) {
		health.kernel_rows = probes__rows_read(s->probes);
		health.kernel_stacks = probes__stacks_drained(s->probes);
	}
	if (s->probes)
		probes__exited_rows(s->probes, &health.exited_rows,
				    &health.exited_rows_forgotten,
				    &health.exited_rows_merged);
	if (s->probes) {
		struct probes_blame_kept kept;

		probes__blame_kept(s->probes, &kept);
		health.blame_rows_kept = kept.rows;
		health.blame_rows_merged = kept.merged;
		health.blame_rows_own = kept.own;
		health.blame_rows_own_max = kept.own_max;
		health.blame_rows_folded = kept.folded;
	}
	changes = session__take_changes(s);
	procs = session__process_names(s, &n);
	session__drops(s, &health.drops);
	err = feed__new(s->symbolizer, changes, procs, n, s->opts->coalesce,
			&health, &feed);
	snapshot__free(changes);
	if (!err)
		serve__publish(s->serving->serve, feed);
	return err;
}

/*
 * --blame's charges, read again for the releasers' profiles (mutex), and
 * --why's for the waiters' (block): each read of a large host's map
 * costs the loop milliseconds, so only when a want needs it.
 */
static int session__serve_charges(struct session *s, bool mutex, bool block)
{
	struct serving *g = s->serving;
	int err = 0;

	if (mutex && s->probes && s->opts->blame) {
		snapshot__free(g->blame);
		g->blame = NULL;
		err = probes__read_blame(s->probes, &g->blame);
		/* The releases' stacks, by the releasers' processes. */
		if (!err)
			err = probes__read_stacks(s->probes, g->blame,
						  s->stacks);
		session__rekey_blame(s, g->blame);
	}
	if (!err && block && s->probes && s->opts->why) {
		why__free(g->why);
		g->why = NULL;
		err = probes__read_why(s->probes, &g->why);
		session__rekey_why(s, g->why);
	}
	return err;
}

/* The run as the profiles see it now, from the loop's last read. */
static void session__serve_view(struct session *s, struct profile_view *v)
{
	struct serving *g = s->serving;

	session__scope(s, g->scope, sizeof(g->scope));
	*v = (struct profile_view){
		.waits = session__totals(s),
		.blame = g->blame,
		.why = g->why,
		.pid = target__pid(s->target),
		.comm = session__comm(s),
		.scope = g->scope,
		.mode = options__mode_name(s->opts->mode),
	};
	session__read_span(s, &v->start_ns, &v->now_ns);
	v->processes = session__process_names(s, &v->n_processes);
}

/* A window's start now, or a profile to make from the next turn. */
static void session__serve_profile(struct session *s,
				   const struct profile_view *v,
				   struct serve_want *want)
{
	struct serving *g = s->serving;
	struct profile_start *start = NULL;
	int err;

	if (want->open)
		err = profile__start(v, want->mutex, &start);
	else
		err = array__grow(&g->jobs, &g->jobs_cap, g->n_jobs + 1,
				  sizeof(*g->jobs));
	if (!err && !want->open) {
		g->jobs[g->n_jobs++] = (struct serving_job){
			.id = want->id, .mutex = want->mutex,
			.start = want->start,
		};
		want->start = NULL;
		return;
	}
	profile__start_free(want->start);
	want->start = NULL;
	serve__answer(g->serve, want->id, err, NULL, start);
}

/* j's rows grouped from the loop's last read: 0 or -errno. */
static int session__serve_group(struct session *s, struct serving_job *j)
{
	struct profile_view v;
	int err;

	session__serve_view(s, &v);
	err = profile__job_new(&v, j->mutex, j->start, &j->job);
	profile__start_free(j->start);
	j->start = NULL;
	return err;
}

/*
 * j's next step: its charges (a turn of their own), its grouping, names
 * until end.  1: named, 0: more at the next turn, or -errno.
 */
static int session__serve_step(struct session *s, struct serving_job *j,
			       uint64_t end)
{
	uint64_t now;
	int err;

	if (!serve__wanted(s->serving->serve, j->id))
		return -ECANCELED;
	if (!j->charged) {
		j->charged = true;
		err = session__serve_charges(s, j->mutex, !j->mutex);
		return err ? err : 0;
	}
	if (!j->job) {
		err = session__serve_group(s, j);
		if (err)
			return err;
	}
	now = clock__monotonic_ns();
	if (now >= end)
		return 0;
	return profile__job_name(j->job, s->symbolizer, s->stacks, end - now);
}

/*
 * One slice, from start (this turn's read counts in it): the oldest jobs
 * first, each grouped, then named, then handed to the server; the
 * server's fd readable again while any is left.  A turn that read the
 * probes (read) leaves the rest to the next: the read, the charges, the
 * grouping and each slice of names are turns of their own.
 */
static void session__serve_name(struct session *s, uint64_t start, bool read)
{
	struct serving *g = s->serving;
	uint64_t end = start + SERVING_SLICE_MS * 1000000ull;

	while (g->n_jobs) {
		struct serving_job *j = &g->jobs[0];
		uint64_t now = clock__monotonic_ns();
		int done;

		if (now >= end || (read && !j->job))
			break;
		done = session__serve_step(s, j, end);
		if (!done)
			break;
		if (done < 0) {
			profile__start_free(j->start);
			profile__job_free(j->job);
			j->job = NULL;
		}
		serve__answer(g->serve, j->id, done < 0 ? done : 0, j->job,
			      NULL);
		memmove(g->jobs, g->jobs + 1, --g->n_jobs * sizeof(*g->jobs));
	}
	if (g->n_jobs)
		serve__again(g->serve);
}

/* A read for the server, and the answers to its wants. */
static int session__serve_wants(struct session *s, struct serve_want *wants,
				size_t n, uint64_t *read_ns)
{
	struct serving *g = s->serving;
	uint64_t cpu = clock__thread_cpu_ns();
	struct profile_view v;
	int err;

	/* An exec's new name first. */
	if (session__space(s))
		session__take_events(s);
	err = session__read(s);
	if (!err)
		err = session__serve_publish(s);
	/* Counted apart: what a scrape of /metrics costs the loop too. */
	*read_ns = clock__thread_cpu_ns() - cpu;
	g->read_ns += *read_ns;
	if (!n)
		return 0;
	/* A window opens with the charges now; a profile reads its own. */
	for (size_t i = 0; !err && i < n; i++)
		if (wants[i].open)
			err = session__serve_charges(s, wants[i].mutex,
						     !wants[i].mutex);
	/* Said to the clients that asked; the run goes on. */
	if (err)
		pr_warn("--serve: cannot read the probes: %s", strerror(-err));
	session__serve_view(s, &v);
	for (size_t i = 0; i < n; i++) {
		if (err) {
			profile__start_free(wants[i].start);
			serve__answer(g->serve, wants[i].id, err, NULL, NULL);
		} else {
			session__serve_profile(s, &v, &wants[i]);
		}
	}
	return 0;
}

int session__serve_dispatch(struct session *s)
{
	struct serving *g = s->serving;
	struct serve_want *wants = NULL;
	uint64_t start = clock__monotonic_ns();
	uint64_t cpu = clock__thread_cpu_ns(), read_ns = 0;
	bool read = false;
	size_t n = 0;
	int err = serve__wants(g->serve, &read, &wants, &n);

	if (!err && (read || n))
		err = session__serve_wants(s, wants, n, &read_ns);
	free(wants);
	if (!err)
		session__serve_name(s, start, read || n);
	g->profile_ns += clock__thread_cpu_ns() - cpu - read_ns;
	return err;
}
