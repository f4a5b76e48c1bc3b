// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen's two ways of putting a line (livedraw.c and
 * livepanes.c both draw with them; they call neither file).
 */
#include <curses.h>

#include "liveimpl.h"
#include "text.h"
#include "utf8.h"

/* One line at y, cut to the window's width. */
void live__put_line(int y, const char *text, attr_t attr)
{
	if (y < 0 || y >= LINES)
		return;
	move(y, 0);
	attron(attr);
	addnstr(text, (int)utf8__bytes_for_cols(text, COLS));
	attroff(attr);
}

/* A line in reverse video across the whole width. */
void live__put_bar(int y, const char *text)
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
