// SPDX-License-Identifier: GPL-2.0
/*
 * The roots pane's text (see rootpane.h).  The rows are the table's
 * (why__state_rows: one per waiter row and root, the waiter's type and
 * object, the root's site), laid out once for every state so that the
 * columns line up under one title, with each state's heading between
 * them as the table's event line sits between its rows.  A pane is a
 * few rows: the layout sees every text, as the live table's does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "columns.h"
#include "names.h"
#include "rootpane.h"
#include "text.h"

/* One state's rows and their texts. */
struct rootpane_part {
	struct report_rows rows;
	struct row_names *names;
	char (*object)[TEXT_MAX];
	char (*site)[TEXT_MAX];
};

static int rootpane__add(struct rootpane *p, const char *text, bool bold)
{
	char *copy = strdup(text);

	if (!copy || array__grow(&p->lines, &p->cap, p->n + 1,
				 sizeof(*p->lines))) {
		free(copy);
		return -ENOMEM;
	}
	p->lines[p->n++] = (struct rootpane_line){ copy, bold };
	return 0;
}

void rootpane__release(struct rootpane *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->lines[i].text);
	free(p->lines);
	*p = (struct rootpane){ 0 };
}

/* "Holder during 0.227 s: running 27%  runnable 42% ...": of the waits. */
static int rootpane__holder(struct rootpane *p, const struct rootpane_input *in)
{
	uint64_t holder[SP_WHY__COUNT] = { 0 }, sum = 0;
	char line[TEXT_MAX], *pos = line, *end = line + sizeof(line);
	int err = 0;

	for (size_t i = 0; !err && i < in->rows->count; i++) {
		struct why_row w;

		err = why__row(in->why, &in->rows->rows[i], in->rows_by, &w);
		for (size_t k = 0; !err && k < SP_WHY__COUNT; k++)
			holder[k] += w.holder[k];
		why__row_free(&w);
	}
	if (err)
		return err;
	for (size_t k = 0; k < SP_WHY__COUNT; k++)
		sum += holder[k];
	text__append(&pos, end, "Holder during %.3f s:", (double)sum * 1e-9);
	for (uint32_t k = 0; k < SP_WHY__COUNT; k++)
		if (holder[k])
			text__append(&pos, end, "%s %s %.0f%%",
				     pos[-1] == ':' ? "" : " ",
				     why__state_name(k),
				     100.0 * (double)holder[k] / (double)sum);
	if (!sum)
		text__append(&pos, end, " none");
	return rootpane__add(p, line, false);
}

/* A state's rows, named, and their Object and Chain-ends-at texts. */
static int rootpane__part(struct rootpane_part *part,
			  const struct rootpane_input *in, uint32_t state,
			  struct columns_spec *want)
{
	size_t strip, n;
	int err = why__state_rows(in->why, in->rows, in->rows_by, state,
				  &part->rows);

	n = part->rows.count;
	if (err || !n)
		return err;
	err = names__rows(in->symbolizer, &part->rows, &part->names);
	if (err)
		return err;
	part->object = calloc(n, sizeof(*part->object));
	part->site = calloc(n, sizeof(*part->site));
	if (!part->object || !part->site)
		return -ENOMEM;
	strip = names__source_root(&part->rows, part->names);
	for (size_t i = 0; i < n; i++) {
		const struct report_row *r = &part->rows.rows[i];

		names__object_text(r, part->names[i].object_symbol,
				   part->object[i], sizeof(part->object[i]));
		if (r->callsite)
			names__callsite_text(&part->names[i].callsite,
					     r->callsite, in->callsite, strip,
					     part->site[i],
					     sizeof(part->site[i]));
		else
			snprintf(part->site[i], sizeof(part->site[i]),
				 "(not seen)");
		if (text__width(part->object[i]) > want->object_need)
			want->object_need = text__width(part->object[i]);
		if (text__width(part->site[i]) > want->site_need)
			want->site_need = text__width(part->site[i]);
	}
	return 0;
}

static void rootpane__part_free(struct rootpane_part *part)
{
	free(part->rows.rows);
	free(part->names);
	free(part->object);
	free(part->site);
}

/* The column titles, the rule, then each state's heading and rows. */
static int rootpane__rows(struct rootpane *p, struct rootpane_part *parts,
			  struct columns_spec *want, int cols)
{
	struct columns_layout lay;
	char line[4 * TEXT_MAX];
	int err, rule;

	columns__layout(want, cols, &lay);
	columns__title(&lay, line, sizeof(line));
	err = rootpane__add(p, line, true);
	rule = cols && lay.width > cols ? cols : lay.width;
	if (rule >= (int)sizeof(line))
		rule = (int)sizeof(line) - 1;
	memset(line, '-', (size_t)rule);
	line[rule] = '\0';
	if (!err)
		err = rootpane__add(p, line, false);
	p->n_head = p->n;
	for (uint32_t s = 0; !err && s < SP_WHY__COUNT; s++) {
		const struct rootpane_part *part = &parts[s];

		if (!part->rows.count)
			continue;
		snprintf(line, sizeof(line), "%s:", why__state_title(s));
		err = rootpane__add(p, line, true);
		for (size_t i = 0; !err && i < part->rows.count; i++) {
			columns__row(&lay, &part->rows.rows[i], part->object[i],
				     part->site[i], NULL, line, sizeof(line));
			err = rootpane__add(p, line, false);
		}
	}
	return err;
}

int rootpane__build(struct rootpane *p, const struct rootpane_input *in,
		    int cols)
{
	struct rootpane_part parts[SP_WHY__COUNT] = { 0 };
	struct columns_spec want = {
		.site_title = "Chain ends at", .sort = -1,
	};
	size_t n = 0;
	int err;

	for (size_t i = 0; i < p->n; i++)
		free(p->lines[i].text);
	p->n = 0;
	err = rootpane__holder(p, in);
	p->n_head = p->n;
	for (uint32_t s = 0; !err && s < SP_WHY__COUNT; s++) {
		err = rootpane__part(&parts[s], in, s, &want);
		n += parts[s].rows.count;
	}
	if (!err && !n)
		err = rootpane__add(p, "No chain ended in this view.", false);
	else if (!err)
		err = rootpane__rows(p, parts, &want, cols);
	for (uint32_t s = 0; s < SP_WHY__COUNT; s++)
		rootpane__part_free(&parts[s]);
	return err;
}
