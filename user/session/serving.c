// SPDX-License-Identifier: GPL-2.0
/*
 * --serve in a session: the server (user/serve/serve.c) reads the probes
 * through session__read, as a report does, so /metrics, the profiles and
 * the reports share one aggregation; every read's change goes to the
 * metrics' counters (session__serve_delta, from session__read).
 */
#include <errno.h>
#include <stdlib.h>

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
	char scope[256];	/* the view's */
};

/* A scrape: the probes read now, processes named as they are now. */
static int session__serve_read(void *ctx, struct serve_view *v)
{
	struct session *s = ctx;
	struct serving *g = s->serving;
	int err;

	/* An exec's new name first. */
	if (session__space(s))
		session__take_events(s);
	err = session__read(s);
	if (!err && s->probes && s->opts->blame) {
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
	if (err)
		return err;
	session__scope(s, g->scope, sizeof(g->scope));
	*v = (struct serve_view){
		.waits = session__totals(s),
		.blame = g->blame,
		.why = g->why,
		.pid = target__pid(s->target),
		.comm = session__comm(s),
		.scope = g->scope,
		.mode = options__mode_name(s->opts->mode),
		.followed = session__alive(s),
	};
	session__read_span(s, &v->start_ns, &v->now_ns);
	v->processes = session__process_names(s, &v->n_processes);
	session__drops(s, &v->drops);
	return 0;
}

int session__serve_start(struct session *s)
{
	const struct serve_config cfg = {
		.listen = s->opts->serve,
		.max_series = s->opts->max_series,
		.coalesce = s->opts->coalesce,
		.symbolizer = s->symbolizer,
		.stacks = s->stacks,
		.read = session__serve_read,
		.ctx = s,
	};
	struct serving *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	s->serving = g;
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

int session__serve_dispatch(struct session *s)
{
	return serve__dispatch(s->serving->serve);
}

int session__serve_delta(struct session *s, const struct snapshot *delta)
{
	size_t n;
	const struct procset_entry *procs;

	if (!session__serving(s))
		return 0;
	procs = session__process_names(s, &n);
	return serve__add_delta(s->serving->serve, delta, procs, n);
}
