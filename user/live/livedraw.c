// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen's drawing: the header, the table and the key line
 * (the panes under the table: livepanes.c; the design: live.c).
 *
 * Drawing.  ncurses, on stdout (newterm, not initscr, so keys can come
 * from /dev/tty when stdin is not a terminal).  Every refresh erases the
 * virtual screen, writes it whole and calls doupdate(): ncurses sends only
 * the cells that changed, so nothing flickers, and it owns the terminal's
 * modes, the alternate screen and their exact restoration by endwin().
 * Rejected: clear() per refresh (a full repaint: visible flicker at 0.1 s
 * intervals) and hand-written escape sequences (terminfo knows better).
 *
 * Rows.  The view keeps every row (up to LIVE_MAX_ROWS), sorted; the
 * table shows a window of them and scrolls (PgUp/PgDn a page, the
 * selection moving beyond the rows shown), and only the rows on screen
 * are named.  Columns, their widths and what gives way on a narrow
 * screen come from columns.c, as the table's do.  The lock rows come
 * first (report.c); the line before the first event row takes a row's
 * place when it is on screen, and l shows one class alone.
 *
 * Cost.  report__build keeps only the rows that fit on the screen, and
 * only those are named: a refresh symbolizes at most the window's height
 * of rows (cached lookups), whatever the map holds.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "columns.h"
#include "format.h"
#include "liveimpl.h"
#include "linereader.h"
#include "locktype.h"
#include "names.h"
#include "options.h"
#include "statepanel.h"
#include "text.h"
#include "utf8.h"

/* Whether a pane (stacks, histogram, roots) shares the screen. */
bool live__pane_open(const struct live_state *st)
{
	return st->stacks || st->hist || st->roots;
}

/*
 * Table rows the window holds: beside the pane (stacks or histogram) if one
 * is open, below the thread-state panel if there is one.
 */
static int live__fit(const struct live *l)
{
	int table, pane;

	live__split(LINES, live__pane_open(&l->state), &table, &pane);
	table -= l->panel_lines;
	return table > 0 ? table : 0;
}

static void live__draw_header(struct live *l)
{
	const struct live_state *st = &l->state;
	char line[LINE_MAX_BYTES], scrolled[32];
	double window_s;

	if (l->processes)
		snprintf(line, sizeof(line), "syncprof  PID %d  %s  processes "
			 "%zu (%zu running)", (int)l->pid, l->cmdline,
			 l->processes, l->running);
	else
		snprintf(line, sizeof(line), "syncprof  PID %d  %s", (int)l->pid,
			 l->cmdline);
	live__put_line(0, line, A_BOLD);
	/* --lock-order: a cycle is a possible deadlock; the report names it. */
	if (l->lock_cycles > 0) {
		char mark[64];
		int x;

		snprintf(mark, sizeof(mark), "LOCK ORDER: %ld cycle%s",
			 l->lock_cycles, l->lock_cycles == 1 ? "" : "s");
		x = COLS - text__width(mark);
		if (x > text__width(line) + 1) {
			attron(A_REVERSE | A_BOLD);
			mvaddstr(0, x, mark);
			attroff(A_REVERSE | A_BOLD);
		}
	}
	snprintf(line, sizeof(line),
		 "elapsed %.1f s  mode %s  interval %g s  threads %u  "
		 "events/s %.0f  dropped %" PRIu64 "  at %s",
		 (double)(l->prev_ns - l->attach_ns) * 1e-9, l->mode,
		 st->interval_s, l->threads, l->events_per_s, l->dropped,
		 l->updated_at);
	text__fit_fields(line, COLS);
	live__put_line(1, line, A_NORMAL);
	window_s = (double)(st->cumulative ? l->prev_ns - l->since_ns
					   : l->delta_ns) * 1e-9;
	snprintf(scrolled, sizeof(scrolled), " from row %d", st->top + 1);
	snprintf(line, sizeof(line),
		 "sort %s  show %s  coalesce %s  per-thread %s  %s %.2f s%s  "
		 "rows %zu/%zu%s", options__sort_name(st->sort),
		 report__classes_name(st->classes),
		 st->coalesce ? "on" : "off", st->per_thread ? "on" : "off",
		 st->cumulative ? "totals" : "deltas", window_s,
		 !st->cumulative ? "" : l->was_reset ? " since reset"
						     : " since attach",
		 l->win_n, l->rows.count, st->top ? scrolled : "");
	live__put_line(2, line, A_NORMAL);
	/* The blank line under the header says it when events were lost. */
	if (l->dropped) {
		char drops[LINE_MAX_BYTES];

		format__drops_text(&l->drops, l->map_size, drops, sizeof(drops));
		live__put_bar(3, drops);
	} else if (l->findings[0]) {
		/* What to fix first, in the window's blank line. */
		live__put_line(3, l->findings, A_BOLD);
	}
	if (st->paused) {
		int x = text__width(line) + 2;

		if (x + 6 <= COLS) {
			attron(A_REVERSE | A_BOLD);
			mvaddstr(2, x, "PAUSED");
			attroff(A_REVERSE | A_BOLD);
		}
	}
}

static void live__draw_help(const struct live *l)
{
	static const char *const text[] = {
		"Keys",
		"  s       sort by total, mean, max, count (cycles)",
		"  c       coalesce the objects of a call site: on / off",
		"  t       one row per thread: on / off",
		"  d       deltas (since the last refresh) / totals (since attach or reset)",
		"  l       show all rows / lock waits only / event waits only (cycles)",
		"  r       reset: totals and deltas start again from now",
		"  p       pause / resume",
		"  + -     refresh interval longer / shorter",
		"  Up Down select a row (Home, End: the first, the last); the",
		"          table scrolls to keep it shown",
		"  g Enter the selected row's stacks: show / hide",
		"  PgUp PgDn  a page of rows; with the stacks shown, scroll them",
		"  G       thread states: one bar per thread / per thread name",
		"  H       the selected row's histogram of waits: show / hide",
		"  w       where the chains of the selected row, then of every",
		"          row, end (--why): show / hide",
		"  Ctrl-L  repaint",
		"  q       quit (Ctrl-C too), printing the final report",
		"",
		"? again: what the columns say. Any other key closes this help.",
	};

	int y = HEADER_LINES + 1;

	if (l->state.help_columns) {
		char line[LINE_MAX_BYTES];

		live__put_line(y++, "Columns", A_BOLD);
		for (int c = 0; c < COL__COUNT; c++) {
			columns__help_line(c, line, sizeof(line));
			live__put_line(y++, line, A_NORMAL);
		}
		columns__help_line(COLUMNS_SORT_MARK, line, sizeof(line));
		live__put_line(y++, line, A_NORMAL);
		live__put_line(++y, "Any key closes this help.", A_NORMAL);
		return;
	}

	for (size_t i = 0; i < ARRAY_SIZE(text); i++) {
		char line[LINE_MAX_BYTES];

		if (!l->states && !strncmp(text[i], "  G ", 4))
			continue;	/* no thread states to group */
		if (!l->state.why && (!strncmp(text[i], "  w ", 4) ||
				      strstr(text[i], "(--why)")))
			continue;
		if (!strncmp(text[i], "  l ", 4))
			snprintf(line, sizeof(line), "%s: now %s", text[i],
				 report__classes_name(l->state.classes));
		else
			snprintf(line, sizeof(line), "%s", text[i]);
		live__put_line(y++, line, i ? A_NORMAL : A_BOLD);
	}
}

/*
 * Thread column: "TID name" while the thread lives (its comm, read now),
 * the TID alone after, "exited" for the rows fold.c merged.
 */
static void live__thread_text(const struct live *l, int64_t tid, char *buf,
			      size_t len)
{
	char path[64], comm[32] = "", clean[64];

	if (!tid) {
		snprintf(buf, len, "exited");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%" PRId64 "/comm",
		 (int)l->pid, tid);
	if (linereader__small(path, comm, sizeof(comm)) < 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	text__sanitize(comm, clean, sizeof(clean));
	if (clean[0])
		snprintf(buf, len, "%" PRId64 " %s", tid, clean);
	else
		snprintf(buf, len, "%" PRId64, tid);
}

/*
 * The first row shown: the selection stays on screen (the table scrolls
 * to it), and the last page is full.
 */
static size_t live__scroll(struct live_state *st, size_t total, size_t fit)
{
	size_t top = st->top > 0 ? (size_t)st->top : 0;

	if (st->selected >= (int)total)
		st->selected = total ? (int)total - 1 : 0;
	if (st->selecting && (size_t)st->selected < top)
		top = (size_t)st->selected;
	if (st->selecting && fit && (size_t)st->selected >= top + fit)
		top = (size_t)st->selected - fit + 1;
	if (top + fit > total)
		top = total > fit ? total - fit : 0;
	st->top = (int)top;
	return top;
}

static int live__draw_table(struct live *l)
{
	struct live_state *st = &l->state;
	size_t top = l->win_top, n = l->win_n, strip;
	struct report_rows view;
	int table_rows, pane_lines, err = 0;
	char (*object)[TEXT_MAX] = NULL;
	char (*callsite)[TEXT_MAX] = NULL;
	char (*thread)[TEXT_MAX] = NULL;
	const char **texts = NULL;
	int y = HEADER_LINES + 1 + l->panel_lines;
	struct columns_spec want = {
		.max = true, .failed = true, .thread = st->per_thread,
		.sort = (int)columns__sort_column(st->sort),
	};
	struct columns_layout lay;
	char line[LINE_MAX_BYTES];
	int sel, w;

	view = (struct report_rows){ .rows = l->rows.rows + top, .count = n,
				     .total = l->rows.total };
	/* Named as they come on screen: a refresh names a screenful. */
	if (!l->names_valid || l->named_top != top || l->names_n != n) {
		free(l->names);
		l->names = NULL;
		l->names_valid = false;
		err = names__rows(l->symbolizer, &view, &l->names);
		if (err)
			return err;
		l->named_top = top;
		l->names_n = n;
		l->names_valid = true;
	}
	strip = names__source_root(&view, l->names);
	if (n) {
		object = calloc(n, sizeof(*object));
		callsite = calloc(n, sizeof(*callsite));
		thread = calloc(n, sizeof(*thread));
		texts = calloc(2 * n, sizeof(*texts));
		if (!object || !callsite || !thread || !texts) {
			free(object);
			free(callsite);
			free(thread);
			free(texts);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct report_row *r = &view.rows[i];

		names__object_text(r, l->names[i].object_symbol, object[i],
				    sizeof(object[i]));
		names__callsite_text(&l->names[i].callsite, r->callsite,
				      l->callsite, strip, callsite[i],
				      sizeof(callsite[i]));
		/* Coalesced objects, "[   3]", can do without the padding. */
		w = r->n_objects > 1 ? snprintf(NULL, 0, "[%u]", r->n_objects)
				     : text__width(object[i]);
		if (w > want.object_need)
			want.object_need = w;
		if (text__width(callsite[i]) > want.site_need)
			want.site_need = text__width(callsite[i]);
		if (want.thread) {
			live__thread_text(l, r->tid, thread[i], sizeof(thread[i]));
			if (text__width(thread[i]) > want.thread_need)
				want.thread_need = text__width(thread[i]);
			want.owner |= r->owner_tid != REPORT_NO_TID;
		}
		texts[i] = object[i];
		texts[n + i] = callsite[i];
		/* Failed stays on a narrow screen when a row shown failed. */
		want.failed_seen |= r->failed != 0;
	}
	/* Futile, when any row (shown or not) has futile wakeups. */
	for (size_t i = 0; i < l->rows.count && !want.futile; i++)
		want.futile = l->rows.rows[i].futile != 0;
	want.owner_apart = want.owner && columns__owners_apart(&view);
	/* A narrow screen cuts no further than the rows stay apart. */
	want.object_apart = columns__apart(texts, n, false, COLUMNS_OBJECT_MIN,
					   COLUMNS_OBJECT_CAP);
	want.site_apart = columns__apart(texts + n, n, true, 1,
					 COLUMNS_SITE_CAP);
	free(texts);
	columns__layout(&want, COLS, &lay);
	columns__title(&lay, line, sizeof(line));
	live__put_line(y++, line, A_BOLD);
	memset(line, '-', (size_t)(lay.width < COLS ? lay.width : COLS));
	line[lay.width < COLS ? lay.width : COLS] = '\0';
	live__put_line(y++, line, A_NORMAL);
	l->has_selected = st->selecting && n;
	sel = st->selected - (int)top;
	if (l->has_selected) {
		/* Its identity only: the stacks go with the rows. */
		l->selected = l->rows.rows[st->selected];
		l->selected.stacks = NULL;
		l->selected.n_stacks = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (top + i == l->win_events) {
			columns__events_line(&lay, line, sizeof(line));
			live__put_line(y++, line, A_BOLD);
		}
		columns__row(&lay, &view.rows[i], object[i], callsite[i],
			     want.thread ? thread[i] : NULL, line, sizeof(line));
		live__put_line(y++, line, l->has_selected && (int)i == sel
				    ? A_REVERSE : A_NORMAL);
	}
	live__split(LINES, live__pane_open(st), &table_rows, &pane_lines);
	if (pane_lines && st->hist)
		live__draw_hist(l, HEADER_LINES + 3 + table_rows, pane_lines,
				n ? object[sel] : "", n ? callsite[sel] : "");
	else if (pane_lines && st->roots)
		err = live__draw_roots(l, HEADER_LINES + 3 + table_rows,
				       pane_lines, n ? object[sel] : "",
				       n ? callsite[sel] : "");
	else if (pane_lines)
		err = live__draw_pane(l, HEADER_LINES + 3 + table_rows,
				      pane_lines, n ? object[sel] : "",
				      n ? callsite[sel] : "",
				      names__source_root_text(&view, l->names,
							       strip),
				      strip);
	free(object);
	free(callsite);
	free(thread);
	return err;
}

/* The thread states the panel shows: the last window's or the totals. */
const struct states_report *live__states_view(const struct live *l)
{
	if (l->state.cumulative)
		return &l->states_totals;
	return &l->states_delta[l->state.group];
}

/*
 * The key line: the class shown in brackets among its choices.  A narrow
 * screen leaves keys out whole, never cut: the ones ? explains and the
 * table's own settings first, so q, ?, the panes (g, H, G, w) and s stay.
 */
static void live__draw_keys(const struct live *l)
{
	char classes[64] = "", line[LINE_MAX_BYTES];
	struct {
		const char *text;
		int gives_way;	/* order in which it goes; 0: stays */
	} keys[] = {
		{ "q quit", 0 }, { "? help", 0 },
		{ l->state.why ? "w roots" : NULL, 0 },
		{ classes, 6 }, { "s sort", 0 }, { "c coalesce", 3 },
		{ "t threads", 4 }, { "d deltas/totals", 5 },
		{ "r reset", 2 }, { "p pause", 7 }, { "+/- interval", 1 },
		{ "g stacks", 0 }, { l->states ? "G group" : "H hist", 0 },
	};
	size_t n = ARRAY_SIZE(keys);

	for (int c = 0; c < REPORT_CLASSES__COUNT; c++) {
		const char *name = report__classes_name((enum report_classes)c);
		size_t at = strlen(classes);

		snprintf(classes + at, sizeof(classes) - at,
			 (int)l->state.classes == c ? "%s[%s]" : "%s%s",
			 c ? "/" : "l ", name);
	}
	if (l->state.paused) {
		live__put_bar(LINES - 1, "PAUSED: p resume  q quit  ? help");
		return;
	}
	for (int drop = 1;; drop++) {
		char *pos = line, *end = line + sizeof(line);
		int left = 0;

		line[0] = '\0';
		for (size_t i = 0; i < n; i++) {
			if (!keys[i].text || (keys[i].gives_way &&
					      keys[i].gives_way < drop))
				continue;
			text__append(&pos, end, "%s%s", line[0] ? "  " : "",
				     keys[i].text);
			left += keys[i].gives_way >= drop;
		}
		if (text__width(line) <= COLS || !left)
			break;
	}
	live__put_bar(LINES - 1, line);
}

/*
 * The rows on screen: the scrolled window, a row shorter when the line
 * before the first event row is in it.
 */
static void live__window(struct live *l)
{
	struct live_state *st = &l->state;
	size_t fit = (size_t)live__fit(l), total = l->rows.count;
	size_t first = report__first_event(&l->rows);

	l->win_top = live__scroll(st, total, fit);
	if (fit > 1 && first < total && first >= l->win_top &&
	    first < l->win_top + fit) {
		fit--;
		l->win_top = live__scroll(st, total, fit);
	}
	st->page = fit ? (int)fit : 1;
	l->win_events = first;
	l->win_n = total - l->win_top < fit ? total - l->win_top : fit;
}

int live__draw(struct live *l)
{
	int err = 0;

	if (!l->screen)
		return 0;
	erase();
	/* Scrolled first: the header says from which row. */
	live__window(l);
	live__draw_header(l);
	if (l->state.help) {
		live__draw_help(l);
	} else {
		if (l->panel_lines)
			statepanel__draw(HEADER_LINES + 1, l->panel_lines - 1,
					 live__states_view(l));
		err = live__draw_table(l);
	}
	live__draw_keys(l);
	wnoutrefresh(stdscr);
	doupdate();
	return err;
}
