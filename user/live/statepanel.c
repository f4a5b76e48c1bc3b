// SPDX-License-Identifier: GPL-2.0
/*
 * The thread-state panel.  Text first (pure, tested), then colour: each
 * bar cell is drawn with its state's character and the colour pair of
 * that character, so the bar reads on a monochrome terminal and in a
 * screen capture too.  Colours as htop's meters use them: green for
 * work, yellow for the CPU wait, red for the lock wait, blue for sleep.
 */
#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "utf8.h"
#include "stateformat.h"
#include "statepanel.h"

#define TID_W		7
#define NAME_MIN	4
#define NAME_CAP	24
#define BAR_MIN		10
#define SHARE_W		5	/* "100.0" */
#define SEP		2
#define LINE_MAX_BYTES	4096

const char statepanel_chars[STATES__COUNT] = {
	[STATES_RUNNING] = '|',
	[STATES_RUNNABLE] = '+',
	[STATES_LOCK] = '#',
	[STATES_SLEEP] = '.',
	[STATES_STOLEN] = '~',
};

static const short bar_colors[STATES__COUNT] = {
	[STATES_RUNNING] = COLOR_GREEN,
	[STATES_RUNNABLE] = COLOR_YELLOW,
	[STATES_LOCK] = COLOR_RED,
	[STATES_SLEEP] = COLOR_BLUE,
	[STATES_STOLEN] = COLOR_MAGENTA,
};

/* Colour pairs 1..STATES__COUNT (pair 0 is the terminal's own). */
#define PAIR_BASE	1

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void statepanel__layout(int cols, int name_need, struct statepanel_layout *out)
{
	int name_w = clamp(name_need, NAME_MIN, NAME_CAP);
	int fixed = TID_W + SEP + name_w + SEP + 2 + STATES__COUNT * (1 + SHARE_W);

	out->name_w = name_w;
	out->bar_x = TID_W + SEP + name_w + SEP + 1;
	out->bar_w = cols - fixed > BAR_MIN ? cols - fixed : BAR_MIN;
	out->width = fixed + out->bar_w;
}

int statepanel__lines(int available, size_t n)
{
	int rows = available / 2 - 2;	/* half, less the title and blank */

	if (rows < 1)
		rows = 1;
	if ((size_t)rows > n)
		rows = (int)n;
	if (available < 3)
		return 0;
	return 1 + (n ? rows : 1) + 1;
}

void statepanel__title_text(const struct statepanel_layout *lay, char *buf,
			    size_t len)
{
	static const char legend[] =
		"| running  + runnable  # lock wait  . sleep  ~ stolen";
	static const char brief[] = "|run +rdy #lock .sleep ~stl";
	const char *bar = lay->bar_w + 2 >= (int)sizeof(legend) ? legend : brief;
	char *pos = buf, *end = buf + len;

	if (!len)
		return;
	buf[0] = '\0';
	text__append(&pos, end, "%*s  %-*s  %-*.*s", TID_W, "TID", lay->name_w, "Name",
	       lay->bar_w + 2, lay->bar_w + 2, bar);
	text__append(&pos, end, " %*s %*s %*s %*s %*s", SHARE_W, "Run%",
		     SHARE_W, "Rdy%", SHARE_W, "Lock%", SHARE_W, "Slp%",
		     SHARE_W, "Stl%");
}

static double share(uint64_t ns, uint64_t window_ns)
{
	return window_ns ? 100.0 * (double)ns / (double)window_ns : 0.0;
}

void statepanel__row_text(const struct statepanel_layout *lay,
			  const struct states_row *r, uint64_t window_ns,
			  char *buf, size_t len)
{
	char name[STATES_COMM_LEN * 4 + 32];
	int cells[STATES__COUNT], used = 0, w;
	char *pos = buf, *end = buf + len;

	if (!len)
		return;
	buf[0] = '\0';
	if (r->tid == STATES_NO_TID)
		text__append(&pos, end, "%*s  ", TID_W, "-");
	else
		text__append(&pos, end, "%*" PRId64 "  ", TID_W, r->tid);
	stateformat__name(r, name, sizeof(name));
	w = text__width(name);
	if (w > lay->name_w)
		text__append(&pos, end, "%.*s~", (int)utf8__bytes_for_cols(name, lay->name_w - 1),
		       name);
	else
		text__append(&pos, end, "%s%*s", name, lay->name_w - w, "");
	text__append(&pos, end, "  [");
	stateformat__bar(r, window_ns, lay->bar_w, cells);
	for (int k = 0; k < STATES__COUNT; k++)
		for (int i = 0; i < cells[k]; i++, used++)
			text__append(&pos, end, "%c", statepanel_chars[k]);
	text__append(&pos, end, "%*s]", lay->bar_w - used, "");
	for (int k = 0; k < STATES__COUNT; k++)
		text__append(&pos, end, " %*.1f", SHARE_W,
		       share(r->ns[k], stateformat__capacity(r, window_ns)));
}

void statepanel__init_colors(void)
{
	if (!has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	for (int k = 0; k < STATES__COUNT; k++)
		init_pair((short)(PAIR_BASE + k), bar_colors[k], -1);
}

/* The colour of a bar character, or 0. */
static int char_pair(char c)
{
	for (int k = 0; k < STATES__COUNT; k++)
		if (statepanel_chars[k] == c)
			return PAIR_BASE + k;
	return 0;
}

/* Writes the first COLS columns of text at line y; the bar's cells from
 * bar_x to bar_x + bar_w in their colours. */
static void draw_line(int y, const char *text, int bar_x, int bar_w, attr_t attr)
{
	int x = 0;

	move(y, 0);
	for (const char *p = text; *p && x < COLS; x++) {
		size_t n = utf8__bytes_for_cols(p, 1);
		bool in_bar = x >= bar_x && x < bar_x + bar_w;
		int pair = in_bar && has_colors() ? char_pair(*p) : 0;

		if (pair)
			attron(COLOR_PAIR(pair) | A_BOLD);
		else
			attron(attr);
		addnstr(p, (int)n);
		if (pair)
			attroff(COLOR_PAIR(pair) | A_BOLD);
		else
			attroff(attr);
		p += n;
	}
}

void statepanel__draw(int y, int lines, const struct states_report *rep)
{
	uint64_t window = rep->end_ns - rep->start_ns;
	struct statepanel_layout lay;
	char line[LINE_MAX_BYTES], name[STATES_COMM_LEN * 4 + 32];
	int name_need = 0, rows = lines - 1;

	if (lines < 2)
		return;
	for (size_t i = 0; i < rep->count; i++) {
		int w;

		stateformat__name(&rep->rows[i], name, sizeof(name));
		w = text__width(name);
		if (w > name_need)
			name_need = w;
	}
	statepanel__layout(COLS, name_need, &lay);
	statepanel__title_text(&lay, line, sizeof(line));
	draw_line(y++, line, lay.bar_x - 1, lay.bar_w + 2, A_BOLD);
	if (!rep->count) {
		draw_line(y, "    (no thread in this window)", 0, 0, A_NORMAL);
		return;
	}
	for (int i = 0; i < rows && (size_t)i < rep->count; i++) {
		if (i == rows - 1 && rep->count > (size_t)rows) {
			snprintf(line, sizeof(line), "%*s  ... %zu more (G: one "
				 "line per name)", TID_W, "",
				 rep->count - (size_t)i);
			draw_line(y++, line, 0, 0, A_NORMAL);
			break;
		}
		statepanel__row_text(&lay, &rep->rows[i], window, line,
				     sizeof(line));
		draw_line(y++, line, lay.bar_x, lay.bar_w, A_NORMAL);
	}
}
