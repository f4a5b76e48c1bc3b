// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen's keys and geometry, pure: what each key changes in
 * struct live_state and asks of the screen (LIVE_* bits), the refresh
 * intervals' ladder, and how the window splits between the table and a
 * pane.  No curses call here but its key codes, so the unit tests
 * (tests/unit/test_live.c) press keys without a terminal.
 */
#include <curses.h>
#include <limits.h>

#include "array.h"
#include "liveimpl.h"

static const double interval_ladder[] = {
	0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
};

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
		/* ? again turns to the columns; any other key closes it. */
		st->help_columns = !st->help_columns && (key == '?' || key == 'h');
		st->help = st->help_columns;
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
