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
 * digits before the columns that tell rows apart.  An object or a
 * function name (a demangled C++ name runs to hundreds of columns) is cut
 * before the file:line that says where the wait is; the file's
 * directories go before its name and line.  Then the numbers: QSP's
 * 12-column fields with five decimals become six columns with a unit
 * ("1.23ms"), which at 80 columns is the room Thread and Failed need.
 * Thread (per-thread rows), Failed (when a row failed) and call sites cut
 * no further than they stay apart are what tells two rows apart, so they
 * go last.  Rejected: the live screen's own widths, as before (they
 * drifted from the table's); cutting every text in proportion (a
 * 9-column call site says nothing); dropping Thread at 80 columns, as
 * before (per-thread rows then read as identical).
 *
 * What a column says is here too, one line each, and every place that
 * explains the columns prints these lines: --help, the live screen's ?,
 * the legend under a table (the man page holds a copy the tests compare).
 * Rejected: a paragraph per column in each place (they said different
 * things, and --help said nothing of Futile); a legend under every table
 * (an interval report a second would repeat it): once a run.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
	const char *compact;	/* a number's title when compact */
} cols_def[COL__COUNT] = {
	[COL_TYPE] = { "Type", 9, true, NULL },
	[COL_OBJECT] = { "Object", 0, false, NULL },
	[COL_SITE] = { "Call site", 0, true, NULL },
	[COL_WAIT] = { "Wait Time (s)", 13, false, "Wait" },
	[COL_COUNT] = { "Count", 12, false, "Count" },
	[COL_AVG] = { "Average (us)", 12, false, "Avg" },
	[COL_MAX] = { "Max (us)", 12, false, "Max" },
	[COL_FAILED] = { "Failed", 10, false, "Failed" },
	[COL_FUTILE] = { "Futile", 10, false, "Futile" },
	[COL_HOLD] = { "Hold Time (s)", 13, false, "Hold" },
	[COL_HOLD_AVG] = { "Average Hold (us)", 17, false, "AvgHold" },
	[COL_THREAD] = { "Thread", 0, false, NULL },
	[COL_OWNER] = { "Owner", 8, false, NULL },
	[COL_PROCESS] = { "Process", 8, false, NULL },
};

static const char *col_title(const struct columns_layout *lay, int c)
{
	if (c == COL_SITE)
		return lay->site_title;
	return lay->compact && cols_def[c].compact ? cols_def[c].compact
						   : cols_def[c].title;
}

/*
 * What each column says, one line: --help, the man page, the live
 * screen's ? and the legend under a table read these (test_help.py holds
 * them to it).  Each fits an 80-column line after its titles
 * (COLUMNS_HELP_TITLE_W): at most COLUMNS_ABOUT_W columns.
 */
static const char *const cols_about[COL__COUNT] = {
	[COL_TYPE] = "kind of lock or wait: mutex, condvar, ... (--type)",
	[COL_OBJECT] = "the lock: variable, member or address; [N]: merged",
	[COL_SITE] = "where the program called the lock function",
	[COL_WAIT] = "time waited (contended: blocked in the kernel)",
	[COL_COUNT] = "acquisitions (contended: those that blocked)",
	[COL_AVG] = "wait per acquisition: counted waits / Count",
	[COL_MAX] = "the longest single wait",
	[COL_FAILED] = "waits ended without the lock: trylock, timeout",
	[COL_FUTILE] = "wakeups that only led to another wait",
	[COL_HOLD] = "--hold: time held, from acquisition to unlock",
	[COL_HOLD_AVG] = "--hold: Hold Time / the holds",
	[COL_THREAD] = "--per-thread: the waiting thread, TID and name",
	[COL_OWNER] = "--per-thread: the holder the thread waited for",
	[COL_PROCESS] = "--per-process: the waiting process's PID",
};

/* Columns whose title alone does not say: a legend the first time shown. */
static const bool cols_legend[COL__COUNT] = {
	[COL_FUTILE] = true, [COL_OWNER] = true,
};

static const char cols_mark_about[] =
	"before a title: the sort's column (s cycles it)";

const char *columns__title_of(enum column_id c)
{
	return c < COL__COUNT ? cols_def[c].title : "";
}

const char *columns__about(enum column_id c)
{
	return c < COL__COUNT ? cols_about[c] : "";
}

void columns__help_line(int c, char *buf, size_t len)
{
	const char *title = c == COLUMNS_SORT_MARK ? "*" : columns__title_of(c);
	const char *about = c == COLUMNS_SORT_MARK ? cols_mark_about
						   : columns__about(c);
	const char *compact = c >= 0 && c < COL__COUNT ? cols_def[c].compact
						       : NULL;
	char titles[64];

	/* A number's short title, as a narrow screen writes it, beside. */
	if (compact && strcmp(compact, title))
		snprintf(titles, sizeof(titles), "%s, %s", title, compact);
	else
		snprintf(titles, sizeof(titles), "%s", title);
	snprintf(buf, len, "  %-*s%s", COLUMNS_HELP_TITLE_W, titles, about);
}

void columns__help(FILE *out)
{
	char line[256];

	fputs("Columns of the table (the live screen's ? shows them too):\n",
	      out);
	for (int c = 0; c < COL__COUNT; c++) {
		columns__help_line(c, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	columns__help_line(COLUMNS_SORT_MARK, line, sizeof(line));
	fprintf(out, "%s\n", line);
}

void columns__legend(const struct columns_layout *lay, unsigned int *explained,
		     char *buf, size_t len)
{
	char *pos = buf, *end = buf + len;

	if (!len)
		return;
	buf[0] = '\0';
	for (int c = 0; c < COL__COUNT; c++) {
		if (!lay->shown[c] || !cols_legend[c] ||
		    (explained && (*explained & 1u << c)))
			continue;
		if (explained)
			*explained |= 1u << c;
		text__append(&pos, end, "%s%s: %s", buf[0] ? "\n" : "",
			     col_title(lay, c), cols_about[c]);
	}
}

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

/* Numbers in units at COLUMNS_COMPACT_W; Object without its padding. */
static bool compact(struct columns_layout *lay, int cols, int object_need)
{
	int object_w = max_int(object_need, text__width(cols_def[COL_OBJECT].title));

	lay->compact = true;
	for (int c = 0; c < COL__COUNT; c++)
		if (cols_def[c].compact)
			lay->w[c] = max_int(COLUMNS_COMPACT_W,
					    text__width(cols_def[c].compact));
	if (lay->w[COL_OBJECT] > object_w)
		lay->w[COL_OBJECT] = object_w;
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
	lay->shown[COL_FUTILE] = spec->futile;
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
	/* Long names, digits, optional columns; then what tells rows apart. */
	if (narrow(lay, cols, COL_OBJECT, COLUMNS_OBJECT_CAP) ||
	    narrow(lay, cols, COL_SITE, max_int(COLUMNS_SITE_CAP, site_min)) ||
	    narrow(lay, cols, COL_THREAD, COLUMNS_THREAD_CAP) ||
	    (!spec->failed_seen && drop(lay, cols, COL_FAILED)) ||
	    compact(lay, cols, spec->object_need) ||
	    drop(lay, cols, COL_FUTILE) ||
	    drop(lay, cols, COL_MAX) ||
	    drop(lay, cols, COL_HOLD_AVG) ||
	    (!spec->owner_apart && drop(lay, cols, COL_OWNER)) ||
	    narrow(lay, cols, COL_OBJECT,
		   max_int(COLUMNS_OBJECT_MIN, spec->object_apart)) ||
	    narrow(lay, cols, COL_THREAD, COLUMNS_THREAD_MIN) ||
	    drop(lay, cols, COL_OWNER) ||
	    narrow(lay, cols, COL_SITE, max_int(site_min, spec->site_apart)) ||
	    narrow(lay, cols, COL_OBJECT, COLUMNS_OBJECT_MIN))
		return;
	drop(lay, cols, COL_FAILED);
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
	if (!site && n > 2 && s[0] == '[' && s[1] == ' ' && s[n - 1] == ']') {
		/* QSP's "[           3]" objects: the padding goes first. */
		char squeezed[64];
		size_t pad = strspn(s + 1, " ");

		snprintf(squeezed, sizeof(squeezed), "[%s", s + 1 + pad);
		columns__cut(squeezed, w, false, buf, len);
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

int columns__apart(const char *const *texts, size_t n, bool site, int from,
		   int to)
{
	char (*cut)[TEXT_MAX] = NULL;
	int w;

	if (n < 2 || from >= to)
		return from < to ? from : to;
	cut = calloc(n, sizeof(*cut));
	if (!cut)
		return to;
	for (w = from; w < to; w++) {
		bool apart = true;

		for (size_t i = 0; i < n; i++)
			columns__cut(texts[i], w, site, cut[i], sizeof(cut[i]));
		for (size_t i = 0; apart && i < n; i++)
			for (size_t j = i + 1; apart && j < n; j++)
				apart = !strcmp(cut[i], cut[j]) ==
					!strcmp(texts[i], texts[j]);
		if (apart)
			break;
	}
	free(cut);
	return w;
}

bool columns__owners_apart(const struct report_rows *view)
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

void columns__fit(struct columns_spec *want, const struct report_rows *rows,
		  char (*object)[TEXT_MAX], char (*site)[TEXT_MAX])
{
	const char **texts = rows->count ? calloc(2 * rows->count,
						  sizeof(*texts)) : NULL;

	want->owner_apart = want->owner && columns__owners_apart(rows);
	if (!texts)
		return;		/* then cut as far as it takes */
	for (size_t i = 0; i < rows->count; i++) {
		texts[i] = object[i];
		texts[rows->count + i] = site[i];
	}
	want->object_apart = columns__apart(texts, rows->count, false,
					    COLUMNS_OBJECT_MIN, COLUMNS_OBJECT_CAP);
	want->site_apart = columns__apart(texts + rows->count, rows->count,
					  true, 1, COLUMNS_SITE_CAP);
	free(texts);
}

void columns__events_line(const struct columns_layout *lay, char *buf,
			  size_t len)
{
	static const char full[] = "Waiting for events, not for a lock "
		"(condvar waits, joins, barriers, parks, off-CPU waits):";
	static const char brief[] = "Waiting for events, not for a lock:";

	snprintf(buf, len, "%s", text__width(full) <= lay->width ? full
								 : brief);
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
		const char *title = col_title(lay, c);
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

/* Three significant digits and a unit: "1.23ms", "12.3s", "123us". */
static void sig3(char *buf, size_t len, double v, const char *unit)
{
	if (v < 9.995)
		snprintf(buf, len, "%.2f%s", v, unit);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, unit);
	else
		snprintf(buf, len, "%.0f%s", v, unit);
}

/* A time in at most COLUMNS_COMPACT_W columns, ns to hours. */
static void compact_ns(double ns, char *buf, size_t len)
{
	if (ns < 999.5)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 999.5e3)
		sig3(buf, len, ns * 1e-3, "us");
	else if (ns < 999.5e6)
		sig3(buf, len, ns * 1e-6, "ms");
	else if (ns < 999.5e9)
		sig3(buf, len, ns * 1e-9, "s");
	else if (ns < 99999.5e9)
		snprintf(buf, len, "%.0fs", ns * 1e-9);
	else if (ns < 999.5 * 3600e9)
		sig3(buf, len, ns / 3600e9, "h");
	else
		snprintf(buf, len, "%.0fh", ns / 3600e9);
}

/* A count in at most COLUMNS_COMPACT_W columns: exact below a million. */
static void compact_count(uint64_t n, char *buf, size_t len)
{
	double v = (double)n;

	if (n < 1000000)
		snprintf(buf, len, "%" PRIu64, n);
	else if (v < 999.5e6)
		sig3(buf, len, v * 1e-6, "M");
	else if (v < 999.5e9)
		sig3(buf, len, v * 1e-9, "G");
	else
		snprintf(buf, len, "%.0fT", v * 1e-12);
}

/* A number column's cell of row r, as the layout writes it. */
static void number_cell(const struct columns_layout *lay,
			const struct report_row *r, int c, char *buf,
			size_t len)
{
	bool small = lay->compact;
	double avg = r->count ? (double)report__counted_ns(r) /
				(double)r->count : 0;
	double hold_avg = r->hold_count ? (double)r->hold_ns /
					  (double)r->hold_count : 0;

	switch (c) {
	case COL_WAIT:
	case COL_HOLD:
		if (small)
			compact_ns((double)(c == COL_WAIT ? r->wait_ns
							  : r->hold_ns), buf, len);
		else
			snprintf(buf, len, "%.5f", (double)(c == COL_WAIT ?
				 r->wait_ns : r->hold_ns) * 1e-9);
		break;
	case COL_COUNT:
	case COL_FAILED:
	case COL_FUTILE: {
		uint64_t n = c == COL_COUNT ? r->count :
			     c == COL_FAILED ? r->failed : r->futile;

		if (small)
			compact_count(n, buf, len);
		else
			snprintf(buf, len, "%" PRIu64, n);
		break;
	}
	case COL_AVG:
	case COL_HOLD_AVG:
		if (!(c == COL_AVG ? r->count : r->hold_count))
			snprintf(buf, len, "-");
		else if (small)
			compact_ns(c == COL_AVG ? avg : hold_avg, buf, len);
		else
			snprintf(buf, len, "%.2f",
				 (c == COL_AVG ? avg : hold_avg) * 1e-3);
		break;
	case COL_MAX:
		if (small)
			compact_ns((double)r->max_ns, buf, len);
		else
			snprintf(buf, len, "%.2f", (double)r->max_ns * 1e-3);
		break;
	default:
		buf[0] = '\0';
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
			} else if (c == COL_THREAD && text__width(thread) > w &&
				   (int)strcspn(thread, " ") <= w) {
				/* "TID name": the TID tells threads apart. */
				snprintf(cell, sizeof(cell), "%.*s",
					 (int)strcspn(thread, " "), thread);
			} else {
				columns__cut(c == COL_OBJECT ? object :
					     c == COL_SITE ? site : thread, w,
					     c == COL_SITE, cell, sizeof(cell));
			}
			append_cell(&pos, end, cell, w, cols_def[c].left);
			break;
		case COL_WAIT:
		case COL_COUNT:
		case COL_AVG:
		case COL_MAX:
		case COL_FAILED:
		case COL_FUTILE:
		case COL_HOLD:
		case COL_HOLD_AVG:
			number_cell(lay, r, c, cell, sizeof(cell));
			text__append(&pos, end, "%*s", w, cell);
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
