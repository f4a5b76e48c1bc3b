/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the live screen's files (live.c, livekeys.c, liveput.c,
 * livedraw.c, livepanes.c): the state they share (struct live) and the
 * functions one of them defines for the others.  Everything else uses live.h.
 */
#ifndef SYNCPROF_LIVEIMPL_H
#define SYNCPROF_LIVEIMPL_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "format.h"
#include "live.h"
#include "names.h"
#include "report.h"
#include "rootpane.h"
#include "rowstacks.h"
#include "snapshot.h"
#include "threadstates.h"
#include "whyrows.h"

/* Summary lines, a blank line, titles and rule, the key line. */
#define HEADER_LINES	3
#define CHROME_LINES	(HEADER_LINES + 1 + 2 + 1)

#define LINE_MAX_BYTES	4096
/* The roots pane over every row covers the first this many rows (each
   row is a pass over the charges). */
#define ROOTS_ALL_ROWS	200

struct live {
	struct live_state state;
	pid_t pid;
	char cmdline[256];
	size_t processes;	/* several: followed since attach, 0: one */
	long lock_cycles;	/* --lock-order: cycles so far (0: none, or off) */
	char findings[512];	/* the first finding's line ("": none) */
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

/* ---- liveput.c ----------------------------------------------------------- */

/* One line at y, cut to the window's width. */
void live__put_line(int y, const char *text, attr_t attr);
/* A line in reverse video across the whole width. */
void live__put_bar(int y, const char *text);

/* ---- livedraw.c ---------------------------------------------------------- */

/* Whether a pane (stacks, histogram, roots) shares the screen. */
bool live__pane_open(const struct live_state *st);
/* The thread states the panel shows: the last window's or the totals. */
const struct states_report *live__states_view(const struct live *l);

/* ---- livepanes.c --------------------------------------------------------- */

/*
 * The stack pane at y, lines high: a title bar naming the selected row
 * (object, callsite: its texts in the table), then its stacks as -g
 * prints them (root: the source root the table strips, root_len bytes).
 */
int live__draw_pane(struct live *l, int y, int lines, const char *object,
		    const char *callsite, const char *root, size_t root_len);
/* The histogram pane: the selected row's waits as --hist draws them. */
void live__draw_hist(struct live *l, int y, int lines, const char *object,
		     const char *callsite);
/* The roots pane: where the chains of the selected row (or every row) end. */
int live__draw_roots(struct live *l, int y, int lines, const char *object,
		     const char *callsite);

#endif
