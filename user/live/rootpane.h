/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live screen's roots pane (--why, key w): for the selected row or
 * for every row of the view, what the holders did during the waits, and
 * where the chains end, by the last holder's state, as the table's
 * "Where the chains end" sections print them, in the one column model
 * and the screen's width.  Text only: livepanes.c draws the lines.
 */
#ifndef SYNCPROF_ROOTPANE_H
#define SYNCPROF_ROOTPANE_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "report.h"
#include "symbolizer.h"
#include "whyrows.h"

/* What the pane shows. */
struct rootpane_input {
	const struct why *why;			/* the view's charges */
	const struct report_settings *rows_by;	/* how rows were built */
	const struct report_rows *rows;		/* the rows it covers */
	struct symbolizer *symbolizer;		/* names root sites */
	enum callsite_style callsite;
};

/* One line of the pane. */
struct rootpane_line {
	char *text;
	bool bold;		/* titles and the states' headings */
};

struct rootpane {
	struct rootpane_line *lines;
	size_t n, cap;
	size_t n_head;		/* the first lines (holder, titles, rule),
				   kept on screen while the rest scrolls */
};

/*
 * The pane's lines for a screen cols wide (0: no limit), into p (what it
 * held before is dropped): the holder's split, the column titles and
 * rule, then per state of the last holder a heading and its roots'
 * rows; "no chain ended..." when there are none.  0 or -ENOMEM.
 */
int rootpane__build(struct rootpane *p, const struct rootpane_input *in,
		    int cols);
void rootpane__release(struct rootpane *p);

#endif
