// SPDX-License-Identifier: GPL-2.0
/*
 * One model of the report's columns for the table and the live screen.
 *
 * Chosen: a column is an id with a title, an alignment and a width; a
 * section (waits, releases, waits now) says which it has; a layout says
 * which are shown and how wide, and one writer prints titles and rows
 * from it.  The table asks for no width limit and gets QSP's layout byte
 * for byte, with Max and Failed after it (and Hold, Thread, Owner as
 * asked); the live screen asks for its window's width and gets the same
 * columns in the same order, with what gives way decided here.
 *
 * What gives way, in order (columns__layout): long names before places,
 * optional columns before the call site.  An object or a function name
 * (a demangled C++ name runs to hundreds of columns) is cut before the
 * file:line that says where the wait is; the file's directories go before
 * its name and line.  Rejected: the live screen's own widths, as before
 * (they drifted from the table's: no Owner, Thread before Max, the call
 * site cut first at 70 columns); cutting every text in proportion (a
 * 9-column call site says nothing).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "columns.h"
#include "locktype.h"
#include "text.h"
#include "utf8.h"

#define SEP 2

static const struct {
	const char *title;
	int width;		/* fixed; 0: from the texts */
	bool left;		/* left-aligned (else right) */
} cols_def[COL__COUNT] = {
	[COL_TYPE] = { "Type", 9, true },
	[COL_OBJECT] = { "Object", 0, false },
	[COL_SITE] = { "Call site", 0, true },
	[COL_WAIT] = { "Wait Time (s)", 13, false },
	[COL_COUNT] = { "Count", 12, false },
	[COL_AVG] = { "Average (us)", 12, false },
	[COL_MAX] = { "Max (us)", 12, false },
	[COL_FAILED] = { "Failed", 10, false },
	[COL_HOLD] = { "Hold Time (s)", 13, false },
	[COL_HOLD_AVG] = { "Average Hold (us)", 17, false },
	[COL_THREAD] = { "Thread", 0, false },
	[COL_OWNER] = { "Owner", 8, false },
	[COL_PROCESS] = { "Process", 8, false },
};

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

static void sum_width(struct columns_layout *lay)
{
	lay->width = 0;
	for (int c = 0; c < COL__COUNT; c++)
		if (lay->shown[c])
			lay->width += (lay->width ? SEP : 0) + lay->w[c];
}

/* Narrows column c to at most w (never below its floor) until it fits. */
static bool narrow(struct columns_layout *lay, int cols, enum column_id c,
		   int w)
{
	if (lay->shown[c] && lay->w[c] > w) {
		int over = lay->width - cols;

		lay->w[c] = max_int(w, lay->w[c] - over);
		sum_width(lay);
	}
	return lay->width <= cols;
}

static bool drop(struct columns_layout *lay, int cols, enum column_id c)
{
	lay->shown[c] = false;
	sum_width(lay);
	return lay->width <= cols;
}

void columns__layout(const struct columns_spec *spec, int cols,
		     struct columns_layout *out)
{
	const char *site_title = spec->site_title ? spec->site_title : "Call site";
	int site_min = text__width(site_title);
	struct columns_layout *lay = out;

	*lay = (struct columns_layout){ .site_title = site_title,
					.sort = spec->sort };
	for (int c = 0; c < COL__COUNT; c++) {
		lay->shown[c] = c <= COL_AVG;
		lay->w[c] = cols_def[c].width;
	}
	lay->shown[COL_MAX] = spec->max;
	lay->shown[COL_FAILED] = spec->failed;
	lay->shown[COL_HOLD] = lay->shown[COL_HOLD_AVG] = spec->hold;
	lay->shown[COL_THREAD] = spec->thread;
	lay->shown[COL_OWNER] = spec->thread && spec->owner;
	lay->shown[COL_PROCESS] = spec->process;
	lay->w[COL_OBJECT] = max_int(spec->object_need, COLUMNS_OBJECT_MIN);
	lay->w[COL_SITE] = max_int(spec->site_need, site_min);
	lay->w[COL_THREAD] = max_int(spec->thread_need, COLUMNS_THREAD_MIN);
	sum_width(lay);
	if (cols <= 0 || lay->width <= cols)
		return;
	/* Long names first, then optional columns, then places. */
	if (narrow(lay, cols, COL_OBJECT, COLUMNS_OBJECT_CAP) ||
	    narrow(lay, cols, COL_SITE, max_int(COLUMNS_SITE_CAP, site_min)) ||
	    narrow(lay, cols, COL_THREAD, COLUMNS_THREAD_CAP) ||
	    drop(lay, cols, COL_FAILED) || drop(lay, cols, COL_MAX) ||
	    narrow(lay, cols, COL_OBJECT, COLUMNS_OBJECT_MIN) ||
	    narrow(lay, cols, COL_SITE, site_min) ||
	    drop(lay, cols, COL_OWNER))
		return;
	narrow(lay, cols, COL_THREAD, COLUMNS_THREAD_MIN);
}

enum column_id columns__sort_column(enum sort_key key)
{
	switch (key) {
	case SORT_MEAN:
		return COL_AVG;
	case SORT_MAX:
		return COL_MAX;
	case SORT_COUNT:
		return COL_COUNT;
	default:
		return COL_WAIT;
	}
}

/* s without its first columns, so that `cols` are left. */
static const char *last_cols(const char *s, int cols)
{
	int skip = text__width(s) - cols;

	return skip > 0 ? s + utf8__bytes_for_cols(s, skip) : s;
}

/* Whether the len bytes at s end in ":LINE" (a file:line). */
static bool ends_in_line(const char *s, size_t len)
{
	size_t i = len;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	return i < len && i > 1 && s[i - 1] == ':';
}

void columns__cut(const char *s, int w, bool site, char *buf, size_t len)
{
	int sw = text__width(s);
	const char *open;
	size_t n = strlen(s);

	if (!len)
		return;
	if (sw <= w || w <= 0) {
		snprintf(buf, len, "%s", w > 0 ? s : "");
		return;
	}
	if (site && n && s[n - 1] == ')' && (open = strstr(s, " (")) &&
	    ends_in_line(open + 2, n - (size_t)(open + 2 - s) - 1)) {
		/* "function (file:line)": the function gives way first. */
		const char *tail = open;	/* " (file:line)" */
		int tail_w = text__width(tail), fn_w = w - tail_w - 1;

		if (fn_w >= 1) {
			snprintf(buf, len, "%.*s~%s", (int)utf8__bytes_for_cols(s, fn_w),
				 s, tail);
			return;
		}
		char inner[512];

		snprintf(inner, sizeof(inner), "%.*s", (int)(n - (size_t)(open - s) - 3),
			 open + 2);
		columns__cut(inner, w, true, buf, len);
		return;
	}
	if (site && ends_in_line(s, n)) {
		/* The directories, then the file's name, before the line. */
		snprintf(buf, len, "~%s", last_cols(s, w - 1));
		return;
	}
	snprintf(buf, len, "%.*s~", (int)utf8__bytes_for_cols(s, w - 1), s);
}

/* s (already at most w columns) aligned in w columns. */
static void append_cell(char **pos, char *end, const char *s, int w, bool left)
{
	int pad = w - text__width(s);

	if (pad < 0)
		pad = 0;
	if (left)
		text__append(pos, end, "%s%*s", s, pad, "");
	else
		text__append(pos, end, "%*s%s", pad, "", s);
}

void columns__title(const struct columns_layout *lay, char *buf, size_t len)
{
	char *pos = buf, *end = buf + len;
	bool first = true;

	if (!len)
		return;
	buf[0] = '\0';
	for (int c = 0; c < COL__COUNT; c++) {
		const char *title = c == COL_SITE ? lay->site_title
						  : cols_def[c].title;
		char marked[64];
		int w = lay->w[c];

		if (!lay->shown[c])
			continue;
		if (c == lay->sort) {
			/* '*' before the title, in its padding or the gap. */
			snprintf(marked, sizeof(marked), "*%s", title);
			title = marked;
			if (text__width(title) > w && !first) {
				text__append(&pos, end, " ");
				append_cell(&pos, end, title, w + 1, cols_def[c].left);
				first = false;
				continue;
			}
		}
		if (!first)
			text__append(&pos, end, "%*s", SEP, "");
		first = false;
		if (c == COL_SITE || c == COL_OBJECT) {
			char cut[64];

			columns__cut(title, w, false, cut, sizeof(cut));
			append_cell(&pos, end, cut, w, cols_def[c].left);
		} else {
			append_cell(&pos, end, title, w, cols_def[c].left);
		}
	}
}

void columns__row(const struct columns_layout *lay, const struct report_row *r,
		  const char *object, const char *site, const char *thread,
		  char *buf, size_t len)
{
	char *pos = buf, *end = buf + len;
	char cell[TEXT_MAX];

	if (!len)
		return;
	buf[0] = '\0';
	for (int c = 0; c < COL__COUNT; c++) {
		int w = lay->w[c];

		if (!lay->shown[c])
			continue;
		if (c != COL_TYPE)
			text__append(&pos, end, "%*s", SEP, "");
		switch (c) {
		case COL_TYPE:
			text__append(&pos, end, "%-*s", w, locktype__name(r->type));
			break;
		case COL_OBJECT:
		case COL_SITE:
		case COL_THREAD:
			if (c == COL_THREAD && !thread) {
				if (!r->tid)
					snprintf(cell, sizeof(cell), "exited");
				else
					snprintf(cell, sizeof(cell), "%" PRId64,
						 r->tid);
			} else {
				columns__cut(c == COL_OBJECT ? object :
					     c == COL_SITE ? site : thread, w,
					     c == COL_SITE, cell, sizeof(cell));
			}
			append_cell(&pos, end, cell, w, cols_def[c].left);
			break;
		case COL_WAIT:
			text__append(&pos, end, "%*.5f", w, (double)r->wait_ns * 1e-9);
			break;
		case COL_COUNT:
			text__append(&pos, end, "%*" PRIu64, w, r->count);
			break;
		case COL_AVG:
			if (r->count)
				text__append(&pos, end, "%*.2f", w,
				       (double)report__counted_ns(r) /
				       (double)r->count * 1e-3);
			else
				text__append(&pos, end, "%*s", w, "-");
			break;
		case COL_MAX:
			text__append(&pos, end, "%*.2f", w, (double)r->max_ns * 1e-3);
			break;
		case COL_FAILED:
			text__append(&pos, end, "%*" PRIu64, w, r->failed);
			break;
		case COL_HOLD:
			text__append(&pos, end, "%*.5f", w, (double)r->hold_ns * 1e-9);
			break;
		case COL_HOLD_AVG:
			if (r->hold_count)
				text__append(&pos, end, "%*.2f", w, (double)r->hold_ns /
				       (double)r->hold_count * 1e-3);
			else
				text__append(&pos, end, "%*s", w, "-");
			break;
		case COL_PROCESS:
			text__append(&pos, end, "%*" PRId64, w, r->pid);
			break;
		case COL_OWNER:
			if (r->owner_tid != REPORT_NO_TID)
				text__append(&pos, end, "%*" PRId64, w, r->owner_tid);
			else
				text__append(&pos, end, "%*s", w, "-");
			break;
		}
	}
}
