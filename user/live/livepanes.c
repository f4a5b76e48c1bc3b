// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen's pane under the table, one at a time: the selected
 * row's stacks as -g prints them (callgraph.c), its histogram of waits
 * as --hist draws it, or (--why) where the chains of its waits, then of
 * every row, end (rootpane.c).  Each is a title bar and lines scrolled
 * from st->pane_top; why the selection follows its row: live.c.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "hist.h"
#include "liveimpl.h"
#include "locktype.h"
#include "rootpane.h"
#include "rowstacks.h"
#include "text.h"

/*
 * The stack pane: a title bar naming the selected row, then its stacks
 * as -g prints them, from the scrolled-to line; lines: its height.
 */
int live__draw_pane(struct live *l, int y, int lines, const char *object,
		    const char *callsite, const char *root, size_t root_len)
{
	struct live_state *st = &l->state;
	const struct report_row *row;
	char line[LINE_MAX_BYTES], *text = NULL, *at, *nl;
	size_t len = 0;
	int total = 0, shown, err;
	FILE *f;

	if (!l->rows.count || !l->symbolizer) {
		live__put_bar(y, "Stacks: no row");
		return 0;
	}
	row = &l->rows.rows[st->selected];
	err = rowstacks__name(&l->stacks, l->symbolizer, l->stacktab, row);
	if (err)
		return err;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	callgraph__print(f, row, &l->stacks, root, root_len);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	for (at = text; *at; at++)
		total += *at == '\n';
	shown = lines - 1;
	if (st->pane_top > total - shown)
		st->pane_top = total - shown > 0 ? total - shown : 0;
	snprintf(line, sizeof(line), "Stacks of %s %s %s: %zu stack%s, "
		 "lines %d-%d of %d  (Up/Down row  PgUp/PgDn scroll  g close)",
		 locktype__name(row->type), object, callsite,
		 l->stacks.n_stacks, l->stacks.n_stacks == 1 ? "" : "s",
		 total ? st->pane_top + 1 : 0,
		 st->pane_top + shown < total ? st->pane_top + shown : total,
		 total);
	live__put_bar(y++, line);
	at = text;
	for (int i = 0; *at && i < st->pane_top + shown; i++) {
		nl = strchr(at, '\n');
		if (nl)
			*nl = '\0';
		if (i >= st->pane_top)
			live__put_line(y++, at, A_NORMAL);
		at = nl ? nl + 1 : at + strlen(at);
	}
	free(text);
	return 0;
}

/* The histogram pane's lines, drawn while they fit. */
struct hist_pane {
	int y;
	int end;
};

static void hist_pane_line(const char *text, void *arg)
{
	struct hist_pane *p = arg;
	char line[LINE_MAX_BYTES];

	if (p->y >= p->end)
		return;
	snprintf(line, sizeof(line), "  %s", text);
	live__put_line(p->y++, line, A_NORMAL);
}

/*
 * The histogram pane: a title bar naming the selected row, then its
 * histogram of waits as --hist draws it; lines: its height.
 */
void live__draw_hist(struct live *l, int y, int lines, const char *object,
		     const char *callsite)
{
	struct hist_pane p = { y + 1, y + lines };
	const struct report_row *row;
	char line[LINE_MAX_BYTES];

	if (!l->rows.count) {
		live__put_bar(y, "Waits (ns): no row");
		return;
	}
	row = &l->rows.rows[l->state.selected];
	snprintf(line, sizeof(line), "Waits (ns) of %s %s %s: %" PRIu64
		 "  (Up/Down row  H close)", locktype__name(row->type),
		 object, callsite, hist__total(row->hist));
	live__put_bar(y, line);
	if (!hist__lines(row->hist, hist_pane_line, &p))
		hist_pane_line("no wait ended in this view", &p);
}

/*
 * The roots pane: a title bar naming the selected row (or "every row"),
 * then rootpane.c's lines, scrolled with PgUp/PgDn; lines: its height.
 */
int live__draw_roots(struct live *l, int y, int lines, const char *object,
		     const char *callsite)
{
	struct live_state *st = &l->state;
	const struct report_row *row;
	struct report_rows covered = l->rows;
	char line[LINE_MAX_BYTES], what[2 * TEXT_MAX + 64];
	int shown = lines - 1, head, total, err;

	if (!l->rows.count || !l->why_view) {
		live__put_bar(y, "Where the chains end: no row");
		return 0;
	}
	row = &l->rows.rows[st->selected];
	if (st->roots_all) {
		if (covered.count > ROOTS_ALL_ROWS)
			covered.count = ROOTS_ALL_ROWS;
		if (covered.count < l->rows.count)
			snprintf(what, sizeof(what), "the first %zu rows",
				 covered.count);
		else
			snprintf(what, sizeof(what), "every row");
	} else {
		covered = (struct report_rows){ (struct report_row *)row, 1,
						1 };
		snprintf(what, sizeof(what), "%s %s %s",
			 locktype__name(row->type), object, callsite);
	}
	const struct rootpane_input in = {
		.why = l->why_view, .rows_by = &l->settings,
		.rows = &covered, .symbolizer = l->symbolizer,
		.callsite = l->callsite,
	};
	err = rootpane__build(&l->roots, &in, COLS);
	if (err)
		return err;
	/* The holder's line and the titles stay; the roots scroll. */
	head = (int)l->roots.n_head < shown ? (int)l->roots.n_head : shown;
	total = (int)l->roots.n - head;
	shown -= head;
	if (st->pane_top > total - shown)
		st->pane_top = total - shown > 0 ? total - shown : 0;
	snprintf(line, sizeof(line), "Roots of %s, lines %d-%d of %d  "
		 "(w %s  PgUp/PgDn)", what, total ? st->pane_top + 1 : 0,
		 st->pane_top + shown < total ? st->pane_top + shown : total,
		 total, st->roots_all ? "close" : "every row");
	live__put_bar(y++, line);
	for (int i = 0; i < head + total && i < head + st->pane_top + shown;
	     i++) {
		const struct rootpane_line *rl = &l->roots.lines[i];

		if (i < head || i >= head + st->pane_top)
			live__put_line(y++, rl->text, rl->bold ? A_BOLD : A_NORMAL);
	}
	return 0;
}
