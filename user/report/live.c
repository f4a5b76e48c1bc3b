// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen, in QSP's manner: what was chosen, and why.
 *
 * Drawing.  ncurses, on stdout (newterm, not initscr, so keys can come
 * from /dev/tty when stdin is not a terminal).  Every refresh erases the
 * virtual screen, writes it whole and calls doupdate(): ncurses sends only
 * the cells that changed, so nothing flickers, and it owns the terminal's
 * modes, the alternate screen and their exact restoration by endwin().
 * Rejected: clear() per refresh (a full repaint: visible flicker at 0.1 s
 * intervals) and hand-written escape sequences (terminfo knows better).
 *
 * Keys.  cbreak(), not raw(): Ctrl-C still makes SIGINT, which main
 * reads from its signalfd like any other stop.  getch() runs with
 * nodelay inside main's one poll loop, on the terminal's descriptor, next
 * to the signalfd, the pidfd and the timers.  Rejected: an input thread
 * (ncurses is not thread-safe, and the loop would need a second wakeup
 * path), and a getch() timeout as the loop's clock (it would tie report
 * timing to key reads).
 *
 * Resizes.  ncurses installs its own SIGWINCH handler and queues
 * KEY_RESIZE with the new size already applied; SIGWINCH interrupts
 * main's poll (EINTR), and main calls live__handle_input on every pass of
 * its loop, which reads it.  Rejected: SIGWINCH through the signalfd
 * (ncurses would never see it; the size would have to be read and applied
 * by hand).
 *
 * Data.  Each refresh gets the change since the refresh before (main
 * reads the probes then, and every second in between so the rows of
 * exited threads leave the kernel's map: the deltas of those reads add
 * up).  The screen keeps it and the deltas summed since attach or the
 * last reset (snapshot__merge).  Summing the windows
 * keeps "Max" exact across a reset (QSP's sync-profile reset); a
 * difference against the snapshot at the reset would give its counts but
 * only the last window's maximum.  Pausing stops the refresh timer rather
 * than discarding reads, so the window after a resume spans the pause and
 * no call's maximum falls between two reads.
 *
 * Rows.  The view keeps every row (up to LIVE_MAX_ROWS), sorted; the
 * table shows a window of them and scrolls (PgUp/PgDn a page, the
 * selection moving beyond the rows shown), and only the rows on screen
 * are named.  Columns, their widths and what gives way on a narrow
 * screen come from columns.c, as the table's do.  The lock rows come
 * first (report.c); the line before the first event row takes a row's
 * place when it is on screen, and l shows one class alone.
 *
 * Stacks.  Up/Down highlight a row; g (or Enter) splits the screen: the
 * table above, the selected row's stacks below, the same lines -g prints
 * under the table's rows (callgraph.c), scrolled with PgUp/PgDn.  The
 * selection follows its row (type, call site, thread, and object when not
 * coalesced) across refreshes and re-sorts, as top's does, rather than
 * staying on a line whose row changes under it.  H shows the selected
 * row's histogram of waits in the same place instead (the lines --hist
 * prints); w (--why) the roots of its chains, then of every row (the
 * table's "Where the chains end" sections, rootpane.c); one pane at a
 * time.  --why's charges come as totals since attach with each refresh
 * (live__set_why); the view is their difference from the read before
 * (deltas) or from the read at the last reset (totals), as the rows'.
 *
 * Cost.  report__build keeps only the rows that fit on the screen, and
 * only those are named: a refresh symbolizes at most the window's height
 * of rows (cached lookups), whatever the map holds.
 *
 * Diagnostics written while the screen is up would scribble over it:
 * when stderr is a terminal it is pointed at a memfd and replayed after
 * endwin(), in order.  The locale is set for LC_CTYPE only (UTF-8 names
 * on screen); numbers keep their '.' in the final report.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "array.h"
#include "callgraph.h"
#include "columns.h"
#include "format.h"
#include "locktype.h"
#include "names.h"
#include "order.h"
#include "text.h"
#include "utf8.h"
#include "hist.h"
#include "live.h"
#include "log.h"
#include "rootpane.h"
#include "rowstacks.h"
#include "statepanel.h"
#include "why.h"

/* Summary lines, a blank line, titles and rule, the key line. */
#define HEADER_LINES	3
#define CHROME_LINES	(HEADER_LINES + 1 + 2 + 1)

#define LINE_MAX_BYTES	4096
/* The roots pane over every row covers the first this many rows (each
   row is a pass over the charges). */
#define ROOTS_ALL_ROWS	200

static const double interval_ladder[] = {
	0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
};

struct live {
	struct live_state state;
	pid_t pid;
	char cmdline[256];
	size_t processes;	/* several: followed since attach, 0: one */
	long lock_cycles;	/* --lock-order: cycles so far (0: none, or off) */
	size_t running;		/* of which still running */
	const char *mode;
	enum callsite_style callsite;
	struct symbolizer *symbolizer;
	const struct stacktab *stacktab;
	uint64_t attach_ns;
	char updated_at[16];		/* the last refresh, HH:MM:SS local */

	struct snapshot *delta;		/* the last window: since the refresh
					   before */
	struct snapshot *totals;	/* deltas summed since attach or reset */
	uint64_t prev_ns;		/* when prev was read */
	uint64_t delta_ns;		/* length of delta's window */
	uint64_t since_ns;		/* when totals began */
	bool was_reset;
	uint64_t dropped;
	struct format_drops drops;
	unsigned int map_size;
	double events_per_s;
	unsigned int threads;

	struct report_rows rows;	/* every row of the view, in order */
	struct report_settings settings;	/* what built them */
	/* The rows on screen: win_n from win_top; win_events: the first
	   event row (rows.count: none), a line before it when shown. */
	size_t win_top, win_n, win_events;
	/* The rows on screen, named: rows.rows[named_top ..] (names_n). */
	struct row_names *names;
	size_t named_top, names_n;
	bool names_valid;
	struct report_row selected;	/* the highlighted row's identity */
	bool has_selected;
	struct rowstacks stacks;	/* its stacks, named */

	struct threadstates *states;	/* --states, not owned */
	struct states_report states_delta[2];	/* the last window: by
						   thread, by name */
	struct states_report states_totals;	/* since attach or reset */
	int panel_lines;		/* the thread-state panel's, with
					   its blank line */

	/* --why: reads since attach (now, the one before, the one at the
	   last reset: NULL before any), and the view's difference. */
	struct why *why_now, *why_last, *why_base, *why_view;
	struct rootpane roots;		/* the roots pane's lines */

	SCREEN *screen;
	FILE *in;
	bool own_in;
	int saved_stderr;		/* the terminal, while stderr is held */
	int held_stderr;		/* a memfd */
};

/* ---- pure parts --------------------------------------------------------- */

bool live__applies(const struct options *opts, bool stdout_is_tty)
{
	return opts->interval_s > 0 && !opts->batch &&
	       opts->format == FORMAT_TABLE && !opts->output && stdout_is_tty;
}

double live__step_interval(double interval_s, int direction)
{
	const size_t n = ARRAY_SIZE(interval_ladder);

	if (direction > 0) {
		for (size_t i = 0; i < n; i++)
			if (interval_ladder[i] > interval_s * (1 + 1e-9))
				return interval_ladder[i];
	} else if (direction < 0) {
		for (size_t i = n; i-- > 0;)
			if (interval_ladder[i] < interval_s * (1 - 1e-9))
				return interval_ladder[i];
	}
	return interval_s;
}

int live__key(struct live_state *st, int key)
{
	double interval;

	if (key == 'q' || key == 'Q')
		return LIVE_QUIT;
	if (st->help) {
		/* Any other key closes the help. */
		st->help = false;
		return LIVE_REDRAW;
	}
	switch (key) {
	case 's':
		st->sort = (enum sort_key)((st->sort + 1) % (SORT_COUNT + 1));
		return LIVE_REBUILD;
	case 'c':
		st->coalesce = !st->coalesce;
		return LIVE_REBUILD;
	case 't':
		st->per_thread = !st->per_thread;
		return LIVE_REBUILD;
	case 'd':
		st->cumulative = !st->cumulative;
		return LIVE_REBUILD;
	case 'l':
		st->classes = (enum report_classes)((st->classes + 1) %
						    REPORT_CLASSES__COUNT);
		return LIVE_REBUILD;
	case 'r':
		st->reset = true;
		return LIVE_REFRESH;
	case 'p':
		st->paused = !st->paused;
		/* Resuming shows what happened during the pause at once. */
		return LIVE_RETIME | LIVE_REDRAW | (st->paused ? 0 : LIVE_REFRESH);
	case '+':
	case '=':
	case '-':
		interval = live__step_interval(st->interval_s,
					       key == '-' ? -1 : 1);
		if (interval == st->interval_s)
			return 0;
		st->interval_s = interval;
		return LIVE_RETIME | LIVE_REDRAW;
	case 'G':
		if (!st->states)
			return 0;
		st->group = !st->group;
		return LIVE_REBUILD;
	case '?':
	case 'h':
		st->help = true;
		return LIVE_REDRAW;
	case 'g':
	case '\n':
	case '\r':
	case KEY_ENTER:
		st->stacks = !st->stacks;
		st->hist = st->roots = false;
		st->selecting = true;
		st->pane_top = 0;
		return LIVE_REBUILD;	/* the table's height changes */
	case 'H':
		st->hist = !st->hist;
		st->stacks = st->roots = false;
		st->selecting = true;
		return LIVE_REBUILD;
	case 'w':
		/* The selected row's roots, every row's, closed. */
		if (!st->why)
			return 0;
		st->roots_all = st->roots && !st->roots_all;
		st->roots = st->roots_all || !st->roots;
		st->stacks = st->hist = false;
		st->selecting = true;
		st->pane_top = 0;
		return LIVE_REBUILD;
	case KEY_UP:
	case KEY_DOWN:
	case KEY_HOME:
	case KEY_END:
		/* Up/Down's first press shows the selection; Home and End
		   go at once. */
		if (key == KEY_HOME || key == KEY_END)
			st->selected = key == KEY_HOME ? 0 : INT_MAX;
		else if (st->selecting)
			st->selected = key == KEY_UP ? st->selected - 1
						     : st->selected + 1;
		st->selecting = true;
		if (st->selected < 0)
			st->selected = 0;
		st->pane_top = 0;
		return LIVE_REDRAW;
	case KEY_PPAGE:
	case KEY_NPAGE:
		if (!st->stacks && !st->roots) {
			/* The table: a page of rows, the selection with it. */
			int page = st->page > 0 ? st->page : 1;

			st->selected = (st->selecting ? st->selected : st->top) +
				       (key == KEY_NPAGE ? page : -page);
			if (st->selected < 0)
				st->selected = 0;
			st->top += key == KEY_NPAGE ? page : -page;
			if (st->top < 0)
				st->top = 0;
			st->selecting = true;
			return LIVE_REDRAW;
		}
		st->pane_top += key == KEY_NPAGE ? LIVE_PANE_PAGE
						 : -LIVE_PANE_PAGE;
		if (st->pane_top < 0)
			st->pane_top = 0;
		return LIVE_REDRAW;
	default:
		return 0;
	}
}

void live__split(int lines, bool pane, int *table_rows, int *pane_lines)
{
	int avail = live__table_rows(lines);

	*table_rows = avail;
	*pane_lines = 0;
	/* Room for two rows, and the pane's title and two lines. */
	if (!pane || avail < 5)
		return;
	*table_rows = avail * 2 / 5;
	if (*table_rows < 1)
		*table_rows = 1;
	*pane_lines = avail - *table_rows;
}

int live__table_rows(int lines)
{
	return lines > CHROME_LINES ? lines - CHROME_LINES : 0;
}

/* ---- data --------------------------------------------------------------- */

/*
 * Threads seen so far: the distinct threads of a snapshot's rows, and
 * those whose rows were merged when they exited (tid 0).
 */
/* The wall-clock time now, as top's header gives it: HH:MM:SS. */
static void live__clock(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

static unsigned int count_threads(const struct snapshot *snap)
{
	size_t n = snapshot__count(snap);
	const struct snapshot_entry *e = snapshot__entries(snap);
	unsigned int distinct = (unsigned int)snapshot__threads_exited(snap);
	uint32_t *tids;

	if (!n)
		return distinct;
	tids = malloc(n * sizeof(*tids));
	if (!tids)
		return distinct;
	for (size_t i = 0; i < n; i++)
		tids[i] = e[i].key.tid;
	qsort(tids, n, sizeof(*tids), order__u32_at);
	for (size_t i = 0; i < n; i++)
		distinct += tids[i] && (!i || tids[i] != tids[i - 1]);
	free(tids);
	return distinct;
}

/* Calls that ended in a snapshot: acquisitions and failures. */
static uint64_t count_events(const struct snapshot *snap)
{
	const struct snapshot_entry *e = snapshot__entries(snap);
	uint64_t events = 0;

	for (size_t i = 0; i < snapshot__count(snap); i++)
		events += e[i].count + e[i].failed;
	return events;
}

/* ---- the screen --------------------------------------------------------- */

/* One line at y, cut to the window's width. */
static void put_line(int y, const char *text, attr_t attr)
{
	if (y < 0 || y >= LINES)
		return;
	move(y, 0);
	attron(attr);
	addnstr(text, (int)utf8__bytes_for_cols(text, COLS));
	attroff(attr);
}

/* A line in reverse video across the whole width. */
static void put_bar(int y, const char *text)
{
	int w = text__width(text);

	if (y < 0 || y >= LINES)
		return;
	attron(A_REVERSE);
	mvaddnstr(y, 0, text, (int)utf8__bytes_for_cols(text, COLS));
	for (int x = w; x < COLS; x++)
		mvaddch(y, x, ' ');
	attroff(A_REVERSE);
}

/* Whether a pane (stacks, histogram, roots) shares the screen. */
static bool live__pane_open(const struct live_state *st)
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
	put_line(0, line, A_BOLD);
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
	put_line(1, line, A_NORMAL);
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
	put_line(2, line, A_NORMAL);
	/* The blank line under the header says it when events were lost. */
	if (l->dropped) {
		char drops[LINE_MAX_BYTES];

		format__drops_text(&l->drops, l->map_size, drops, sizeof(drops));
		put_bar(3, drops);
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
		"Any key closes this help.",
	};

	int y = HEADER_LINES + 1;

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
		put_line(y++, line, i ? A_NORMAL : A_BOLD);
	}
}

/* Whether b is row a, as the selection follows it across rebuilds. */
static bool same_row(const struct report_row *a, const struct report_row *b,
		     bool coalesce)
{
	return a->type == b->type && a->callsite == b->callsite &&
	       a->tid == b->tid && a->owner_tid == b->owner_tid &&
	       (coalesce || a->object == b->object);
}

/*
 * The stack pane: a title bar naming the selected row, then its stacks
 * as -g prints them, from the scrolled-to line; lines: its height.
 */
static int live__draw_pane(struct live *l, int y, int lines, const char *object,
			   const char *callsite, const char *root,
			   size_t root_len)
{
	struct live_state *st = &l->state;
	const struct report_row *row;
	char line[LINE_MAX_BYTES], *text = NULL, *at, *nl;
	size_t len = 0;
	int total = 0, shown, err;
	FILE *f;

	if (!l->rows.count || !l->symbolizer) {
		put_bar(y, "Stacks: no row");
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
	put_bar(y++, line);
	at = text;
	for (int i = 0; *at && i < st->pane_top + shown; i++) {
		nl = strchr(at, '\n');
		if (nl)
			*nl = '\0';
		if (i >= st->pane_top)
			put_line(y++, at, A_NORMAL);
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
	put_line(p->y++, line, A_NORMAL);
}

/*
 * The histogram pane: a title bar naming the selected row, then its
 * histogram of waits as --hist draws it; lines: its height.
 */
static void live__draw_hist(struct live *l, int y, int lines,
			    const char *object, const char *callsite)
{
	struct hist_pane p = { y + 1, y + lines };
	const struct report_row *row;
	char line[LINE_MAX_BYTES];

	if (!l->rows.count) {
		put_bar(y, "Waits (ns): no row");
		return;
	}
	row = &l->rows.rows[l->state.selected];
	snprintf(line, sizeof(line), "Waits (ns) of %s %s %s: %" PRIu64
		 "  (Up/Down row  H close)", locktype__name(row->type),
		 object, callsite, hist__total(row->hist));
	put_bar(y, line);
	if (!hist__lines(row->hist, hist_pane_line, &p))
		hist_pane_line("no wait ended in this view", &p);
}

/*
 * The roots pane: a title bar naming the selected row (or "every row"),
 * then rootpane.c's lines, scrolled with PgUp/PgDn; lines: its height.
 */
static int live__draw_roots(struct live *l, int y, int lines,
			    const char *object, const char *callsite)
{
	struct live_state *st = &l->state;
	const struct report_row *row;
	struct report_rows covered = l->rows;
	char line[LINE_MAX_BYTES], what[2 * TEXT_MAX + 64];
	int shown = lines - 1, head, total, err;

	if (!l->rows.count || !l->why_view) {
		put_bar(y, "Where the chains end: no row");
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
	put_bar(y++, line);
	for (int i = 0; i < head + total && i < head + st->pane_top + shown;
	     i++) {
		const struct rootpane_line *rl = &l->roots.lines[i];

		if (i < head || i >= head + st->pane_top)
			put_line(y++, rl->text, rl->bold ? A_BOLD : A_NORMAL);
	}
	return 0;
}

/*
 * Thread column: "TID name" while the thread lives (its comm, read now),
 * the TID alone after, "exited" for the rows fold.c merged.
 */
static void live__thread_text(const struct live *l, int64_t tid, char *buf,
			      size_t len)
{
	char path[64], comm[32] = "", clean[64];
	FILE *f;

	if (!tid) {
		snprintf(buf, len, "exited");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%" PRId64 "/comm",
		 (int)l->pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
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

/* Whether two rows differ only by their holder (Owner tells them apart). */
static bool owners_apart(const struct report_rows *view)
{
	for (size_t i = 0; i < view->count; i++) {
		const struct report_row *a = &view->rows[i];

		for (size_t j = i + 1; j < view->count; j++) {
			const struct report_row *b = &view->rows[j];

			if (a->type == b->type && a->object == b->object &&
			    a->n_objects == b->n_objects &&
			    a->callsite == b->callsite && a->tid == b->tid &&
			    a->owner_tid != b->owner_tid)
				return true;
		}
	}
	return false;
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
	want.owner_apart = want.owner && owners_apart(&view);
	/* A narrow screen cuts no further than the rows stay apart. */
	want.object_apart = columns__apart(texts, n, false, COLUMNS_OBJECT_MIN,
					   COLUMNS_OBJECT_CAP);
	want.site_apart = columns__apart(texts + n, n, true, 1,
					 COLUMNS_SITE_CAP);
	free(texts);
	columns__layout(&want, COLS, &lay);
	columns__title(&lay, line, sizeof(line));
	put_line(y++, line, A_BOLD);
	memset(line, '-', (size_t)(lay.width < COLS ? lay.width : COLS));
	line[lay.width < COLS ? lay.width : COLS] = '\0';
	put_line(y++, line, A_NORMAL);
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
			put_line(y++, line, A_BOLD);
		}
		columns__row(&lay, &view.rows[i], object[i], callsite[i],
			     want.thread ? thread[i] : NULL, line, sizeof(line));
		put_line(y++, line, l->has_selected && (int)i == sel
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
static const struct states_report *live__states_view(const struct live *l)
{
	if (l->state.cumulative)
		return &l->states_totals;
	return &l->states_delta[l->state.group];
}

/* The key line: the class shown in brackets among its choices. */
static void live__draw_keys(const struct live *l)
{
	char classes[64] = "", line[LINE_MAX_BYTES];

	for (int c = 0; c < REPORT_CLASSES__COUNT; c++) {
		const char *name = report__classes_name((enum report_classes)c);
		size_t at = strlen(classes);

		snprintf(classes + at, sizeof(classes) - at,
			 (int)l->state.classes == c ? "%s[%s]" : "%s%s",
			 c ? "/" : "", name);
	}
	if (l->state.paused)
		snprintf(line, sizeof(line), "PAUSED: p resume  q quit  ? help");
	else
		snprintf(line, sizeof(line), "q quit  ? help  %sl %s  s sort  "
			 "c coalesce  t threads  d deltas/totals  r reset  "
			 "p pause  +/- interval  g stacks  %s",
			 l->state.why ? "w roots  " : "", classes,
			 l->states ? "G group" : "H hist");
	put_bar(LINES - 1, line);
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

/* Builds the rows that fit from the view the settings ask for, and draws. */
static int live__rebuild(struct live *l)
{
	const struct snapshot *view = l->state.cumulative ? l->totals : l->delta;
	int table, pane, err = 0;

	if (l->states && l->state.cumulative) {
		threadstates__free_report(&l->states_totals);
		err = threadstates__report(l->states, STATES_SINCE_ORIGIN,
					   l->state.group, &l->states_totals);
		if (err)
			return err;
	}
	/* The thread-state panel takes its lines from the table's. */
	live__split(LINES, live__pane_open(&l->state), &table, &pane);
	l->panel_lines = l->states && l->screen
		? statepanel__lines(table, live__states_view(l)->count) : 0;
	/* Every row, to scroll through; only those shown are named. */
	const struct report_settings settings = {
		.coalesce = l->state.coalesce,
		.per_thread = l->state.per_thread,
		.sort = l->state.sort,
		.top = LIVE_MAX_ROWS,
		.classes = l->state.classes,
	};

	report__free(&l->rows);
	free(l->names);
	l->names = NULL;
	l->names_valid = false;
	l->settings = settings;
	if (view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), &settings, &l->rows);
	if (!err && l->why_now) {
		why__free(l->why_view);
		l->why_view = NULL;
		err = why__delta(l->why_now, l->state.cumulative ? l->why_base
							   : l->why_last,
				 &l->why_view);
	}
	if (err) {
		report__free(&l->rows);
		return err;
	}
	/* The selected row, wherever the new order put it. */
	for (size_t i = 0; l->has_selected && i < l->rows.count; i++) {
		if (same_row(&l->rows.rows[i], &l->selected,
			     l->state.coalesce)) {
			l->state.selected = (int)i;
			break;
		}
	}
	return live__draw(l);
}

/*
 * The thread states of the window that ends at this refresh, by thread
 * and by name; the next window starts here.  reset: the totals too.
 */
static int live__update_states(struct live *l, bool reset)
{
	int err = 0;

	if (reset)
		threadstates__reset(l->states);
	for (int group = 0; group < 2 && !err; group++) {
		threadstates__free_report(&l->states_delta[group]);
		err = threadstates__report(l->states, STATES_SINCE_MARK, group,
					   &l->states_delta[group]);
	}
	threadstates__mark(l->states);
	return err;
}

/* --why at a reset: the totals and the next window start from now. */
static int live__reset_why(struct live *l)
{
	struct why *base = NULL, *last = NULL;
	int err = why__delta(l->why_now, NULL, &base);

	if (!err)
		err = why__delta(l->why_now, NULL, &last);
	if (err) {
		why__free(base);
		return err;
	}
	why__free(l->why_base);
	why__free(l->why_last);
	l->why_base = base;
	l->why_last = last;
	return 0;
}

void live__set_why(struct live *l, struct why *read)
{
	why__free(l->why_last);
	l->why_last = l->why_now;
	l->why_now = read;
}

int live__update(struct live *l, const struct snapshot *snap,
		 struct snapshot *delta, uint64_t now_ns,
		 const struct format_drops *drops)
{
	struct snapshot *totals = NULL;
	uint64_t window = now_ns - l->prev_ns;
	bool reset = l->state.reset;
	int err;

	if (!delta) {
		err = snapshot__new(&delta);
		if (err)
			return err;
	}
	l->events_per_s = window ? (double)count_events(delta) /
				   ((double)window * 1e-9) : 0.0;
	if (reset) {
		/* QSP's sync-profile reset: everything starts again from now. */
		snapshot__free(delta);
		delta = NULL;
		err = snapshot__new(&delta);
		if (!err)
			err = snapshot__new(&totals);
		l->since_ns = now_ns;
		l->was_reset = true;
		l->state.reset = false;
	} else {
		err = snapshot__merge(l->totals, delta, &totals);
	}
	if (!err && l->states)
		err = live__update_states(l, reset);
	if (!err && reset && l->why_now)
		err = live__reset_why(l);
	if (err) {
		snapshot__free(totals);
		snapshot__free(delta);
		return err;
	}
	l->threads = count_threads(snap);
	snapshot__free(l->delta);
	snapshot__free(l->totals);
	l->delta = delta;
	l->totals = totals;
	l->delta_ns = window;
	l->prev_ns = now_ns;
	live__clock(l->updated_at, sizeof(l->updated_at));
	l->drops = *drops;
	l->dropped = format__drops_total(drops);
	return live__rebuild(l);
}

int live__handle_input(struct live *l)
{
	int ch, actions = 0, err = 0;

	if (!l->screen)
		return 0;
	while (!(actions & LIVE_QUIT) && (ch = getch()) != ERR) {
		if (ch == KEY_RESIZE) {
			actions |= LIVE_REBUILD;
		} else if (ch == ('L' & 0x1f)) {
			clearok(curscr, TRUE);
			actions |= LIVE_REDRAW;
		} else {
			actions |= live__key(&l->state, ch);
		}
	}
	if (actions & LIVE_QUIT)
		return LIVE_QUIT;
	if (actions & LIVE_REBUILD)
		err = live__rebuild(l);
	else if (actions & LIVE_REDRAW)
		err = live__draw(l);
	if (err)
		return err;
	return actions & (LIVE_REFRESH | LIVE_RETIME);
}

void live__set_processes(struct live *l, size_t followed, size_t running)
{
	l->processes = followed;
	l->running = running;
}

void live__set_lock_cycles(struct live *l, long cycles)
{
	l->lock_cycles = cycles;
}

int live__input_fd(const struct live *l)
{
	return l->screen ? fileno(l->in) : -1;
}

double live__interval(const struct live *l)
{
	return l->state.paused ? 0.0 : l->state.interval_s;
}

bool live__stacks_shown(const struct live *l)
{
	return l->state.stacks;
}

bool live__group_threads(const struct live *l)
{
	return l->state.group;
}

const struct snapshot *live__totals(const struct live *l,
				    struct report_settings *settings,
				    uint64_t *since_ns)
{
	settings->coalesce = l->state.coalesce;
	settings->per_thread = l->state.per_thread;
	settings->sort = l->state.sort;
	*since_ns = l->since_ns;
	return l->totals;
}

/* ---- the terminal ------------------------------------------------------- */

/* Points a terminal stderr at a memfd while the screen is up. */
static void live__hold_stderr(struct live *l)
{
	int fd;

	if (!isatty(STDERR_FILENO))
		return;
	fd = memfd_create("syncprof-stderr", MFD_CLOEXEC);
	if (fd < 0)
		return;		/* diagnostics then scribble; not fatal */
	fflush(stderr);
	l->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (l->saved_stderr < 0 || dup2(fd, STDERR_FILENO) < 0) {
		if (l->saved_stderr >= 0)
			close(l->saved_stderr);
		l->saved_stderr = -1;
		close(fd);
		return;
	}
	l->held_stderr = fd;
}

/* Gives stderr back and writes what was held to it. */
static void live__release_stderr(struct live *l)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	if (l->held_stderr < 0)
		return;
	fflush(stderr);
	dup2(l->saved_stderr, STDERR_FILENO);
	close(l->saved_stderr);
	l->saved_stderr = -1;
	while ((n = pread(l->held_stderr, buf, sizeof(buf), off)) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(STDERR_FILENO, buf + done,
					  (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			done += w;
		}
		off += n;
	}
	close(l->held_stderr);
	l->held_stderr = -1;
}

int live__new(const struct live_config *cfg, struct live **out)
{
	struct live *l = calloc(1, sizeof(*l));
	int err;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->state = (struct live_state){
		.sort = cfg->sort,
		.coalesce = cfg->coalesce,
		.per_thread = cfg->per_thread,
		.cumulative = cfg->cumulative,
		.interval_s = cfg->interval_s,
		.stacks = cfg->stacks,
		.selecting = cfg->stacks,
		.states = cfg->states != NULL,
		.group = cfg->group_threads,
		.why = cfg->why,
	};
	l->states = cfg->states;
	l->pid = cfg->pid;
	text__sanitize(cfg->cmdline ? cfg->cmdline : "", l->cmdline,
			 sizeof(l->cmdline));
	l->mode = cfg->mode;
	l->callsite = cfg->callsite;
	l->symbolizer = cfg->symbolizer;
	l->stacktab = cfg->stacktab;
	l->attach_ns = l->prev_ns = l->since_ns = cfg->attach_ns;
	live__clock(l->updated_at, sizeof(l->updated_at));
	l->map_size = cfg->map_size;
	l->saved_stderr = l->held_stderr = -1;

	if (isatty(STDIN_FILENO)) {
		l->in = stdin;
	} else {
		int fd = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);

		l->in = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!l->in) {
			err = -errno;
			if (fd >= 0)
				close(fd);
			pr_info("no terminal to read keys from: %s",
				strerror(-err));
			free(l);
			return err;
		}
		l->own_in = true;
	}
	setlocale(LC_CTYPE, "");
	fflush(stdout);
	l->screen = newterm(NULL, stdout, l->in);
	if (!l->screen) {
		pr_info("terminal type '%s' unknown to terminfo",
			getenv("TERM") ? getenv("TERM") : "");
		live__free(l);
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);	/* a lone Esc must not stall the loop for 1 s */
	curs_set(0);
	if (l->states)
		statepanel__init_colors();
	live__hold_stderr(l);
	err = live__rebuild(l);
	if (err) {
		live__free(l);
		return err;
	}
	*out = l;
	return 0;
}

void live__end(struct live *l)
{
	if (!l || !l->screen)
		return;
	endwin();
	delscreen(l->screen);
	l->screen = NULL;
	fflush(stdout);
	live__release_stderr(l);
}

void live__free(struct live *l)
{
	if (!l)
		return;
	live__end(l);
	if (l->own_in && l->in)
		fclose(l->in);
	report__free(&l->rows);
	free(l->names);
	rowstacks__release(&l->stacks);
	snapshot__free(l->delta);
	snapshot__free(l->totals);
	for (int group = 0; group < 2; group++)
		threadstates__free_report(&l->states_delta[group]);
	threadstates__free_report(&l->states_totals);
	why__free(l->why_now);
	why__free(l->why_last);
	why__free(l->why_base);
	why__free(l->why_view);
	rootpane__release(&l->roots);
	free(l);
}
