/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live screen: --interval on a terminal.  A top-like ncurses view of
 * the rows the table prints, redrawn every interval, with keys that
 * re-sort, coalesce, split by thread, show locks or events only, switch
 * deltas and totals, reset,
 * pause and change the interval, select a row and show its stacks, its
 * histogram of waits or (--why) where the chains of its waits end.
 */
#ifndef SYNCPROF_LIVE_H
#define SYNCPROF_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"
#include "options.h"
#include "report.h"
#include "snapshot.h"
#include "symbolizer.h"
#include "threadstates.h"
#include "whyrows.h"

struct live;

struct live_config {
	pid_t pid;
	const char *cmdline;	/* the target's, for the header; NULL: none */
	const char *mode;	/* "full" */
	double interval_s;
	bool cumulative;	/* start with totals instead of deltas */
	enum sort_key sort;
	bool coalesce;
	bool per_thread;
	enum callsite_style callsite;
	bool stacks;		/* start with the stack pane open (-g) */
	struct symbolizer *symbolizer;	/* names rows; not owned */
	const struct stacktab *stacktab; /* the run's stacks; not owned */
	uint64_t attach_ns;	/* CLOCK_MONOTONIC, when counting began */
	/* --states: the accounting (not owned), read by the caller before
	 * each live__update; NULL without. */
	struct threadstates *states;
	bool group_threads;	/* one bar per thread name */
	unsigned int map_size;	/* --map-size, for what a drop says */
	bool why;		/* --why: the roots pane (key w) */
};

/* What a key asks of the screen (internal) and of its caller (main). */
enum live_action {
	LIVE_QUIT = 1 << 0,	/* end the screen, print the final report */
	LIVE_REFRESH = 1 << 1,	/* read a snapshot now: live__update */
	LIVE_RETIME = 1 << 2,	/* the refresh period changed: live__interval */
	LIVE_REBUILD = 1 << 3,	/* rows to rebuild from the data held */
	LIVE_REDRAW = 1 << 4,	/* the same rows, drawn again */
};

/*
 * Whether these options and this stdout get the live screen: --interval,
 * the table format, no --batch, no --output, stdout a terminal.
 */
bool live__applies(const struct options *opts, bool stdout_is_tty);
/*
 * Takes over the terminal: stdout for the screen, stdin (or /dev/tty when
 * stdin is not one) for keys.  While it is up, diagnostics written to a
 * terminal stderr are held and printed when it ends.
 */
int live__new(const struct live_config *cfg, struct live **out);
/*
 * Several processes: how many the header says are followed (since
 * attach) and still running; before live__update.
 */
void live__set_processes(struct live *l, size_t followed, size_t running);
/* --lock-order: the cycles found so far, marked in the header. */
void live__set_lock_cycles(struct live *l, long cycles);
/*
 * What to fix first: the window's first finding as one line, shown
 * under the header (NULL or "": none); before live__update.
 */
void live__set_findings(struct live *l, const char *line);
/*
 * --why: the charges read since attach, before each live__update; the
 * screen owns read from here.
 */
void live__set_why(struct live *l, struct why *read);
/* The descriptor to poll for keys. */
int live__input_fd(const struct live *l);
/*
 * A refresh at now_ns: snap, the totals since attach (for the threads
 * seen), and delta, what changed since the last refresh (live owns it
 * from here; NULL: nothing); updates the totals and redraws.  drops:
 * events lost since attach, shown in reverse video when any.
 */
int live__update(struct live *l, const struct snapshot *snap,
		 struct snapshot *delta, uint64_t now_ns,
		 const struct format_drops *drops);
/* Draws the screen as it stands; no flicker (only changes are sent). */
int live__draw(struct live *l);
/*
 * Reads the pending keys and a resize, acts on them, and returns the
 * LIVE_QUIT, LIVE_REFRESH and LIVE_RETIME bits its caller acts on; or a
 * negative errno.  Cheap when nothing is pending.
 */
int live__handle_input(struct live *l);
/* Seconds between refreshes; 0 while paused. */
double live__interval(const struct live *l);
/* --states: whether the screen groups threads by name (key G). */
bool live__group_threads(const struct live *l);
/*
 * What the final report shows: the totals since attach or the last reset
 * (NULL before the first update), *since_ns when they began, and the
 * screen's sort, coalescing and per-thread settings in *settings (top is
 * left as it was).
 */
const struct snapshot *live__totals(const struct live *l,
				    struct report_settings *settings,
				    uint64_t *since_ns);
/* Whether the stack pane is open: the final report then shows stacks. */
bool live__stacks_shown(const struct live *l);
/* Restores the terminal exactly, then prints the held diagnostics. */
void live__end(struct live *l);
/* Ends the screen if it is still up, and frees. */
void live__free(struct live *l);

/* ---- pure parts, for the tests --------------------------------------- */

/* What the keys change. */
struct live_state {
	enum sort_key sort;
	bool coalesce;
	bool per_thread;
	bool cumulative;
	bool paused;
	bool help;
	bool help_columns;	/* the help's second page: the columns */
	bool reset;		/* a reset waits for the next snapshot */
	double interval_s;
	bool stacks;		/* the stack pane is open */
	bool hist;		/* the histogram pane is open (not with stacks) */
	bool why;		/* --why: the roots pane can open */
	bool roots;		/* the roots pane is open (no other pane) */
	bool roots_all;		/* it covers every row, not the selected */
	bool selecting;		/* a row is highlighted: arrows were used,
				   or the pane is open */
	int selected;		/* the highlighted row, among all rows;
				   the drawing keeps it in range */
	int top;		/* the first row on screen (the table
				   scrolls to keep the selection shown) */
	int page;		/* rows on screen, for PgUp/PgDn */
	int pane_top;		/* first line of the pane shown */
	bool states;		/* --states: the thread-state panel is up */
	bool group;		/* the panel: one bar per thread name */
	enum report_classes classes;	/* the rows shown: all, locks, events */
};

/* Lines PgUp/PgDn scroll the stack pane by. */
#define LIVE_PANE_PAGE 10
/* Rows of a view the screen scrolls through (the largest first). */
#define LIVE_MAX_ROWS 10000

/*
 * Applies one key (a character, or curses' KEY_UP, KEY_DOWN, KEY_HOME,
 * KEY_END, KEY_PPAGE, KEY_NPAGE, KEY_ENTER; not KEY_RESIZE); LIVE_*
 * bits, 0: none.
 */
int live__key(struct live_state *st, int key);
/*
 * How a window of `lines` splits between the table's rows and the stack
 * pane (its title line included): the table gets 2/5 when the pane is
 * open and there is room for both, else everything.
 */
void live__split(int lines, bool pane, int *table_rows, int *pane_lines);
/* The next interval up (direction > 0) or down the 0.1 s .. 300 s ladder. */
double live__step_interval(double interval_s, int direction);

/* Table rows that fit in a window of `lines` (0 if none). */
int live__table_rows(int lines);

#endif
