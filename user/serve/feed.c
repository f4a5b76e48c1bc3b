// SPDX-License-Identifier: GPL-2.0
/*
 * A read's change, named on the loop and carried to the server's worker
 * as plain strings and numbers.  The rows are built as the reports build
 * them (report__build with feed_rows_by: per process and object, never
 * coalesced there), so /metrics, the profiles and the reports count the
 * same waits; their labels are metricnames', so that rows of objects
 * that are instances of one thing add to one series.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "feed.h"
#include "locktype.h"
#include "metricnames.h"
#include "names.h"
#include "procset.h"
#include "report.h"
#include "text.h"

const struct report_settings feed_rows_by = {
	.coalesce = false,	/* a label per object */
	.per_process = true,	/* labels process and pid */
	.sort = SORT_TOTAL,
	.top = 0,
};

struct feed_row {
	char *process, *object, *callsite;
	const char *class;	/* locktype__class's, static */
	const char *type;	/* locktype__name's, static */
	uint64_t count, wait_ns, failed;
	uint64_t hist[SP_HIST_SLOTS];
};

struct feed {
	struct feed_row *rows;
	size_t n_rows, cap;
	struct feed_health health;
};

static const char *feed__comm(const struct procset_entry *procs, size_t n,
			      int64_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return procs[i].comm ? procs[i].comm : "?";
	return "?";
}

static int feed__add(struct feed *f, const struct report_row *r,
		     const char *comm, const struct row_names *names,
		     bool coalesce)
{
	char process[64], object[TEXT_MAX], site[TEXT_MAX];
	struct feed_row *row;
	int err = array__grow(&f->rows, &f->cap, f->n_rows + 1,
			      sizeof(*f->rows));

	if (err)
		return err;
	text__sanitize(comm, process, sizeof(process));
	metricnames__object(names->object_symbol, r->object, coalesce, object,
			    sizeof(object));
	metricnames__callsite(&names->callsite, r->callsite, site,
			      sizeof(site));
	row = &f->rows[f->n_rows];
	*row = (struct feed_row){
		.process = strdup(process),
		.object = strdup(object),
		.callsite = strdup(site),
		.class = locktype__class(r->type),
		.type = locktype__name(r->type),
		.count = r->count,
		.wait_ns = r->wait_ns,
		.failed = r->failed,
	};
	memcpy(row->hist, r->hist, sizeof(row->hist));
	f->n_rows++;
	if (!row->process || !row->object || !row->callsite)
		return -ENOMEM;
	return 0;
}

int feed__new(struct symbolizer *sym, const struct snapshot *delta,
	      const struct procset_entry *procs, size_t n_procs,
	      bool coalesce, const struct feed_health *health,
	      struct feed **out)
{
	struct report_rows rows = { 0 };
	struct row_names *names = NULL;
	struct feed *f = calloc(1, sizeof(*f));
	int err = 0;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->health = *health;
	if (delta && snapshot__count(delta)) {
		err = report__build(snapshot__entries(delta),
				    snapshot__count(delta), &feed_rows_by,
				    &rows);
		if (!err)
			err = names__rows(sym, &rows, &names);
		for (size_t i = 0; !err && i < rows.count; i++)
			err = feed__add(f, &rows.rows[i],
					feed__comm(procs, n_procs,
						   rows.rows[i].pid),
					&names[i], coalesce);
		free(names);
		report__free(&rows);
	}
	if (err) {
		feed__free(f);
		return err;
	}
	*out = f;
	return 0;
}

void feed__free(struct feed *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_rows; i++) {
		free(f->rows[i].process);
		free(f->rows[i].object);
		free(f->rows[i].callsite);
	}
	free(f->rows);
	free(f);
}

int feed__apply(const struct feed *f, struct metrics *m)
{
	int err = 0;

	for (size_t i = 0; !err && i < f->n_rows; i++) {
		const struct feed_row *r = &f->rows[i];
		const struct metrics_row row = {
			.process = r->process,
			.class = r->class,
			.type = r->type,
			.object = r->object,
			.callsite = r->callsite,
			.count = r->count,
			.wait_ns = r->wait_ns,
			.failed = r->failed,
			.hist = r->hist,
		};

		err = metrics__add(m, &row);
	}
	return err;
}

const struct feed_health *feed__health(const struct feed *f)
{
	return &f->health;
}
