/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live screen's thread-state panel (--states): one bar per thread or
 * name, as htop draws its CPU bars, running, runnable, lock wait and sleep
 * each in a character and a colour of its own; the part of the bar left
 * blank is the part of the window the thread did not live.
 */
#ifndef SYNCPROF_STATEPANEL_H
#define SYNCPROF_STATEPANEL_H

#include <stddef.h>
#include <stdint.h>

#include "threadstates.h"

/* The bar's characters, by enum states_kind. */
extern const char statepanel_chars[STATES__COUNT];

struct statepanel_layout {
	int name_w;
	int bar_x;		/* column of the bar's first cell */
	int bar_w;		/* cells between the brackets */
	int width;		/* of one line */
};

/* Columns for a window `cols` wide and names up to name_need columns. */
void statepanel__layout(int cols, int name_need, struct statepanel_layout *out);
/*
 * Lines the panel takes out of `available` for n rows: a title, the rows
 * (at most half the lines, a last one saying how many more), a blank line.
 */
int statepanel__lines(int available, size_t n);
/* The title: column names and the legend of the bar. */
void statepanel__title_text(const struct statepanel_layout *lay, char *buf,
			    size_t len);
/* One row: TID, name, bar, shares of the window. */
void statepanel__row_text(const struct statepanel_layout *lay,
			  const struct states_row *r, uint64_t window_ns,
			  char *buf, size_t len);
/* ncurses colour pairs for the bar; call once the screen is up. */
void statepanel__init_colors(void);
/* Draws rep in `lines` lines from line y: the title, then the rows. */
void statepanel__draw(int y, int lines, const struct states_report *rep);

#endif
