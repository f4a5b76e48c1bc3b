/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report's columns, once: which a section has, how wide each is, how
 * titles and rows are written, what gives way on a narrow screen, and
 * what each says in one line.  The table (format.c) lays them out with
 * no width limit, or a terminal's; the live screen (livedraw.c) with its
 * window's.
 */
#ifndef SYNCPROF_COLUMNS_H
#define SYNCPROF_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "report.h"
#include "text.h"

enum column_id {
	COL_TYPE = 0,
	COL_OBJECT,
	COL_SITE,	/* "Call site", or as the section titles it */
	COL_WAIT,	/* Wait Time (s) */
	COL_COUNT,
	COL_AVG,	/* Average (us) */
	COL_MAX,	/* Max (us) */
	COL_FAILED,
	COL_FUTILE,	/* futile wakeups */
	COL_HOLD,	/* Hold Time (s) */
	COL_HOLD_AVG,	/* Average Hold (us) */
	COL_THREAD,
	COL_OWNER,	/* the holder a per-thread row waited for */
	COL_PROCESS,	/* several processes, rows split by process */
	COL__COUNT,
};

/* Fixed widths, as QSP's table; the texts' columns start at their minimum. */
#define COLUMNS_OBJECT_MIN	14
#define COLUMNS_OBJECT_CAP	32	/* a screen cuts longer objects first */
#define COLUMNS_SITE_CAP	48	/* ... then call sites to this */
#define COLUMNS_THREAD_MIN	8
#define COLUMNS_THREAD_CAP	24

/* What a section has, and how wide its rows' texts are. */
struct columns_spec {
	const char *site_title;	/* NULL: "Call site" */
	int object_need;	/* widest Object text of the rows shown */
	int site_need;		/* widest call-site text */
	int thread_need;	/* widest Thread text (0: numbers only) */
	/* Narrowest widths at which the rows' objects and call sites stay
	   apart once cut (columns__apart); 0: not known. */
	int object_apart;
	int site_apart;
	bool max, failed, futile, hold, thread, owner, process;
	bool failed_seen;	/* a row has failed calls: a narrow screen
				   keeps Failed */
	bool owner_apart;	/* two rows differ only by their holder: a
				   narrow screen keeps Owner */
	int sort;		/* the column marked as the sort's (a
				   screen: '*' before its title); -1: none */
};

struct columns_layout {
	bool shown[COL__COUNT];
	int w[COL__COUNT];
	int width;		/* of one line: titles, rows and rules */
	bool compact;		/* numbers in units, short titles */
	const char *site_title;
	int sort;		/* marked column, -1: none */
};

/* The number columns' width when compact: "1.23ms", "12.3M". */
#define COLUMNS_COMPACT_W	6

/*
 * Lays the columns out for a screen cols wide; cols 0: no limit (every
 * column of the spec at its full width).  When the line is wider than
 * cols, in this order until it fits: the Object column narrows to
 * COLUMNS_OBJECT_CAP, the call site to COLUMNS_SITE_CAP, Thread to
 * COLUMNS_THREAD_CAP; Failed goes unless a row failed; the numbers go
 * compact (units, fewer digits, short titles) and Object loses its
 * padding; Futile goes, then Max, Average Hold, then Owner unless it
 * tells rows apart;
 * Object narrows to COLUMNS_OBJECT_MIN (not below object_apart), Thread
 * to its minimum (the TID alone); Owner goes; the call site narrows to
 * its title's width (not below site_apart), Object to its minimum
 * whatever it merges; Failed goes.  A line still wider than cols is cut
 * by the screen.
 */
void columns__layout(const struct columns_spec *spec, int cols,
		     struct columns_layout *out);
/*
 * What a column says, in one line (--help, the man page, the live
 * screen's ?, the legend), and its full title.
 */
const char *columns__about(enum column_id c);
const char *columns__title_of(enum column_id c);
/* columns__help_line's column for the sort's mark, '*'. */
#define COLUMNS_SORT_MARK	(-1)
/* The titles' width in a help line, before the text, and the text's. */
#define COLUMNS_HELP_TITLE_W	27
#define COLUMNS_ABOUT_W		50
/*
 * One help line: "  Title[, Short]  what it says", for column c of
 * enum column_id, or COLUMNS_SORT_MARK.
 */
void columns__help_line(int c, char *buf, size_t len);
/* --help's last part: a title line, then a help line per column. */
void columns__help(FILE *out);
/*
 * The legend under a table: "Title: what it says" for each shown column
 * whose title alone does not say (Futile, Owner), one a line;
 * explained (NULL: none): the columns already given, each added as it
 * is given, so a run says it once.  "" when none is left.
 */
void columns__legend(const struct columns_layout *lay, unsigned int *explained,
		     char *buf, size_t len);
/* The column a sort key orders by. */
enum column_id columns__sort_column(enum sort_key key);
/* The titles line, lay->width columns wide (one more with a mark). */
void columns__title(const struct columns_layout *lay, char *buf, size_t len);
/*
 * One row.  object, site: the texts (sanitized), cut here to their
 * columns; thread: the Thread text ("TID name": the TID alone when the
 * name does not fit), NULL for the row's TID ("exited" for the threads
 * fold.c merged).
 */
void columns__row(const struct columns_layout *lay, const struct report_row *r,
		  const char *object, const char *site, const char *thread,
		  char *buf, size_t len);
/*
 * A text in at most w columns: as it is when it fits; else an object or
 * a function name keeps its start and ends in '~' (QSP's "[     3]" of
 * coalesced objects loses its padding first); a "file:line" keeps
 * its end ("~ile.c:42"); in "function (file:line)" the function is cut
 * first, then dropped, then the file as alone.
 */
void columns__cut(const char *s, int w, bool site, char *buf, size_t len);
/*
 * The narrowest width from `from` to `to` at which the n texts, cut by
 * columns__cut, are as many distinct texts as they are whole; `to` if
 * none is.
 */
int columns__apart(const char *const *texts, size_t n, bool site, int from,
		   int to);
/*
 * For a width limit: what tells the rows apart (Owner, the objects' and
 * call sites' widths at which they stay apart), from their texts.
 */
void columns__fit(struct columns_spec *want, const struct report_rows *rows,
		  char (*object)[TEXT_MAX], char (*site)[TEXT_MAX]);
/* Whether two rows differ only by their holder (Owner tells them apart). */
bool columns__owners_apart(const struct report_rows *rows);
/*
 * The line before a section's first event row (report__first_event):
 * those rows wait for something to happen, not for a lock; as wide as
 * the layout allows, shortened to fit.
 */
void columns__events_line(const struct columns_layout *lay, char *buf,
			  size_t len);

#endif
