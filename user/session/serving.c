// SPDX-License-Identifier: GPL-2.0
/*
 * --serve in a session.  The server (user/serve/) runs on threads of its
 * own and never calls back: the loop polls its fd, asks it what it wants
 * (serve__wants), reads the probes as a report does (session__read) and
 * hands the answers down: every read's change, named (a feed), and the
 * profiles it asked for, made here because the symbolizer is the loop's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "probes.h"
#include "serve.h"
#include "snapshot.h"
#include "target.h"
#include "whyrows.h"
#include "session.h"

/* The server, and the last reads of --blame's and --why's charges. */
struct serving {
	struct serve *serve;
	struct snapshot *blame;
	struct why *why;
	char scope[256];	/* the profiles' header (session__scope) */
};

int session__serve_start(struct session *s)
{
	const struct serve_config cfg = {
		.listen = s->opts->serve,
		.max_series = s->opts->max_series,
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
	symbolizer__cache_stats(&health.cache);
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

/* --blame's and --why's charges, read again for a profile. */
static int session__serve_charges(struct session *s)
{
	struct serving *g = s->serving;
	int err = 0;

	if (s->probes && s->opts->blame) {
		snapshot__free(g->blame);
		g->blame = NULL;
		err = probes__read_blame(s->probes, &g->blame);
		session__rekey_blame(s, g->blame);
	}
	if (!err && s->probes && s->opts->why) {
		why__free(g->why);
		g->why = NULL;
		err = probes__read_why(s->probes, &g->why);
		session__rekey_why(s, g->why);
	}
	return err;
}

static void session__serve_profile(struct session *s,
				   const struct profile_view *v,
				   struct serve_want *want)
{
	struct profile_start *start = NULL;
	char *data = NULL;
	size_t len = 0;
	int err;

	if (want->open)
		err = profile__start(v, want->mutex, &start);
	else
		err = profile__make(s->symbolizer, s->stacks, v, want->mutex,
				    want->start, &data, &len);
	profile__start_free(want->start);
	want->start = NULL;
	serve__answer(s->serving->serve, want->id, err, data, len, start);
}

int session__serve_dispatch(struct session *s)
{
	struct serving *g = s->serving;
	struct serve_want *wants = NULL;
	struct profile_view v;
	bool read = false;
	size_t n = 0;
	int err = serve__wants(g->serve, &read, &wants, &n);

	if (err || (!read && !n))
		return err;
	/* An exec's new name first. */
	if (session__space(s))
		session__take_events(s);
	err = session__read(s);
	if (!err)
		err = session__serve_publish(s);
	if (!err && n)
		err = session__serve_charges(s);
	/* Said to the clients that asked; the run goes on. */
	if (err)
		pr_warn("--serve: cannot read the probes: %s", strerror(-err));
	session__scope(s, g->scope, sizeof(g->scope));
	v = (struct profile_view){
		.waits = session__totals(s),
		.blame = g->blame,
		.why = g->why,
		.pid = target__pid(s->target),
		.comm = session__comm(s),
		.scope = g->scope,
		.mode = options__mode_name(s->opts->mode),
	};
	session__read_span(s, &v.start_ns, &v.now_ns);
	v.processes = session__process_names(s, &v.n_processes);
	for (size_t i = 0; i < n; i++) {
		if (err) {
			profile__start_free(wants[i].start);
			serve__answer(g->serve, wants[i].id, err, NULL, 0, NULL);
		} else {
			session__serve_profile(s, &v, &wants[i]);
		}
	}
	free(wants);
	return 0;
}
