// SPDX-License-Identifier: GPL-2.0
/*
 * columns: one model of the report's columns for the table and the live
 * screen: QSP's widths, the columns a section has, and what gives way on
 * a narrow screen, in order (70, 80, 120 and 200 columns), compact
 * numbers, texts cut no further than they stay apart.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "columns.h"
#include "text.h"

#define UNUSED __attribute__((unused))

/* QSP's table with the narrowest call site and object: 79 columns. */
#define QSP_W 79
/* Max and Failed: 12 + 2 and 10 + 2. */
#define EXTRAS_W 26

static const struct report_row a_row = {
	.type = SP_TYPE_MUTEX, .object = 0x1000, .n_objects = 1,
	.callsite = 0x2000, .tid = 4242, .owner_tid = 4243, .count = 4,
	.wait_ns = 2000000, .max_ns = 900000, .failed = 3,
};

static struct columns_spec screen(int object, int site, bool thread)
{
	return (struct columns_spec){
		.object_need = object, .site_need = site, .max = true,
		.failed = true, .thread = thread, .owner = thread, .sort = -1,
	};
}

static char *cut(const char *s, int w, bool site)
{
	static char buf[256];

	columns__cut(s, w, site, buf, sizeof(buf));
	return buf;
}

/* No limit (the table): every column of the section, full width. */
static void test_unlimited_is_qsp_and_what_the_section_has(void **state UNUSED)
{
	struct columns_spec spec = screen(40, 60, true);
	struct columns_layout lay;
	char title[512];

	spec.hold = true;
	columns__layout(&spec, 0, &lay);
	assert_int_equal(lay.w[COL_OBJECT], 40);
	assert_int_equal(lay.w[COL_SITE], 60);
	/*
	 * Process only in rows split by process, which have no thread;
	 * Futile only when the section asks.
	 */
	for (int c = 0; c < COL__COUNT; c++)
		assert_true(lay.shown[c] ==
			    (c != COL_PROCESS && c != COL_FUTILE));
	assert_int_equal(lay.width, QSP_W + (40 - 14) + (60 - 9) + EXTRAS_W +
			 34 + 10 + 10);
	columns__title(&lay, title, sizeof(title));
	assert_int_equal(text__width(title), lay.width);
	assert_non_null(strstr(title, "Average (us)      Max (us)      Failed  "
				      "Hold Time (s)  Average Hold (us)    Thread     Owner"));
	spec.thread = spec.owner = false;
	spec.process = true;
	columns__layout(&spec, 0, &lay);
	assert_true(lay.shown[COL_PROCESS]);
	assert_false(lay.shown[COL_THREAD]);
	columns__title(&lay, title, sizeof(title));
	assert_non_null(strstr(title, "   Process"));
}

/* 200 and 120 columns: everything, as the table has it. */
static void test_wide_screens_have_max_failed_and_owner(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 13, true);
	struct columns_layout lay;

	columns__layout(&spec, 200, &lay);
	assert_true(lay.shown[COL_MAX] && lay.shown[COL_FAILED]);
	assert_true(lay.shown[COL_THREAD] && lay.shown[COL_OWNER]);
	assert_int_equal(lay.width, QSP_W + 4 + EXTRAS_W + 20);
	/* 120: Failed gives way first, Owner stays. */
	columns__layout(&spec, 120, &lay);
	assert_true(lay.shown[COL_MAX]);
	assert_false(lay.shown[COL_FAILED]);
	assert_true(lay.shown[COL_OWNER]);
	assert_int_equal(lay.width, QSP_W + 4 + 14 + 20);
	/* Thread off: no Owner either. */
	spec = screen(14, 13, false);
	columns__layout(&spec, 120, &lay);
	assert_false(lay.shown[COL_THREAD] || lay.shown[COL_OWNER]);
	assert_int_equal(lay.width, QSP_W + 4 + EXTRAS_W);
}

/*
 * 80 columns: Failed goes when no row failed; the numbers go compact
 * (six columns, short titles) before Max goes; the names keep their
 * width as long as they can.
 */
static void test_80_columns_compact_numbers_before_dropping(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, false);
	struct columns_layout lay;

	columns__layout(&spec, QSP_W + 12 + 2, &lay);
	assert_true(lay.shown[COL_MAX]);
	assert_false(lay.shown[COL_FAILED]);
	assert_false(lay.compact);
	columns__layout(&spec, 80, &lay);
	assert_true(lay.compact);
	assert_true(lay.shown[COL_MAX]);
	assert_false(lay.shown[COL_FAILED]);
	for (int c = COL_WAIT; c <= COL_MAX; c++)
		assert_int_equal(lay.w[c], COLUMNS_COMPACT_W);
	assert_int_equal(lay.width, 9 + 14 + 9 + 4 * 6 + 6 * 2);
	/* A long object and call site: Max goes, then the object narrows. */
	spec = screen(30, 20, false);
	columns__layout(&spec, 80, &lay);
	assert_false(lay.shown[COL_MAX] || lay.shown[COL_FAILED]);
	assert_int_equal(lay.w[COL_OBJECT], 23);
	assert_int_equal(lay.w[COL_SITE], 20);
	assert_int_equal(lay.width, 80);
}

/*
 * 80x24 with per-thread rows, as the demo's: Thread stays, and Failed
 * when a row failed; Max and Owner give way first.
 */
static void test_80_columns_keep_thread_and_failed(void **state UNUSED)
{
	struct columns_spec spec = screen(10, 10, true);
	struct columns_layout lay;
	char title[512];

	spec.thread_need = 11;		/* "123456 demo" */
	spec.failed_seen = true;
	columns__layout(&spec, 80, &lay);
	assert_true(lay.shown[COL_THREAD] && lay.shown[COL_FAILED]);
	assert_false(lay.shown[COL_MAX] || lay.shown[COL_OWNER]);
	assert_int_equal(lay.w[COL_THREAD], 11);
	assert_int_equal(lay.w[COL_OBJECT], 10);
	assert_int_equal(lay.w[COL_SITE], 10);
	assert_int_equal(lay.width, 78);
	columns__title(&lay, title, sizeof(title));
	assert_string_equal(title, "Type           Object  Call site     Wait   "
			    "Count     Avg  Failed       Thread");
	/* No failures: Failed goes first, then Max; Owner stays. */
	spec.failed_seen = false;
	columns__layout(&spec, 80, &lay);
	assert_false(lay.shown[COL_FAILED] || lay.shown[COL_MAX]);
	assert_true(lay.shown[COL_OWNER] && lay.shown[COL_THREAD]);
	assert_int_equal(lay.width, 80);
	/* Failed with failures goes last of all. */
	spec.failed_seen = true;
	columns__layout(&spec, 74, &lay);
	assert_true(lay.shown[COL_FAILED] && lay.shown[COL_THREAD]);
	assert_int_equal(lay.w[COL_THREAD], COLUMNS_THREAD_MIN);
	assert_int_equal(lay.w[COL_SITE], 9);
	columns__layout(&spec, 1, &lay);
	assert_false(lay.shown[COL_FAILED]);
	assert_true(lay.shown[COL_THREAD]);
	/* Rows apart only by their holder: Owner stays as long as it can. */
	spec.owner_apart = true;
	spec.failed_seen = false;
	columns__layout(&spec, 80, &lay);
	assert_true(lay.shown[COL_OWNER] && lay.shown[COL_THREAD]);
	assert_false(lay.shown[COL_FAILED] || lay.shown[COL_MAX]);
	spec.failed_seen = true;
	columns__layout(&spec, 80, &lay);
	assert_true(lay.shown[COL_FAILED] && lay.shown[COL_THREAD]);
	assert_false(lay.shown[COL_OWNER]);
	assert_int_equal(lay.w[COL_THREAD], COLUMNS_THREAD_MIN);
}

/*
 * 70 columns: the object goes down to its minimum before the call site,
 * which keeps what tells rows apart (site_apart) and its title's width.
 */
static void test_70_columns_cut_the_object_before_the_call_site(void **state UNUSED)
{
	struct columns_spec spec = screen(30, 20, false);
	struct columns_layout lay;

	columns__layout(&spec, 70, &lay);
	assert_int_equal(lay.w[COL_OBJECT], 14);
	assert_int_equal(lay.w[COL_SITE], 19);
	assert_int_equal(lay.width, 70);
	/* Narrower still: the call site to its title's width ... */
	columns__layout(&spec, 40, &lay);
	assert_int_equal(lay.w[COL_SITE], 9);
	/* ... or to where its rows stay apart. */
	spec.site_apart = 16;
	columns__layout(&spec, 40, &lay);
	assert_int_equal(lay.w[COL_SITE], 16);
	assert_int_equal(lay.w[COL_OBJECT], 14);
	/* Objects apart at 20 narrow to 20, then to 14 before the site. */
	spec.object_apart = 20;
	columns__layout(&spec, 75, &lay);
	assert_int_equal(lay.w[COL_OBJECT], 20);
	columns__layout(&spec, 40, &lay);
	assert_int_equal(lay.w[COL_OBJECT], 14);
	assert_int_equal(lay.w[COL_SITE], 16);
}

/* Very long names give way before Max and Failed, down to their caps. */
static void test_long_names_yield_to_their_caps_first(void **state UNUSED)
{
	struct columns_spec spec = screen(90, 200, true);
	struct columns_layout lay;

	spec.thread_need = 40;
	columns__layout(&spec, 200, &lay);
	assert_int_equal(lay.w[COL_OBJECT], COLUMNS_OBJECT_CAP);
	assert_int_equal(lay.w[COL_SITE], COLUMNS_SITE_CAP);
	/* Thread: down to its cap only as far as needed. */
	assert_int_equal(lay.w[COL_THREAD], COLUMNS_THREAD_CAP + 2);
	assert_true(lay.shown[COL_MAX] && lay.shown[COL_FAILED]);
	assert_int_equal(lay.width, 200);
	/* The whole cut order, down to the floors. */
	columns__layout(&spec, 1, &lay);
	assert_false(lay.shown[COL_MAX] || lay.shown[COL_FAILED] ||
		     lay.shown[COL_OWNER]);
	assert_int_equal(lay.w[COL_OBJECT], 14);
	assert_int_equal(lay.w[COL_SITE], 9);
	assert_int_equal(lay.w[COL_THREAD], 8);
}

/* Rows are as wide as titles, aligned as QSP's. */
static void test_title_and_row(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, true);
	struct columns_layout lay;
	char title[512], row[512];

	columns__layout(&spec, 0, &lay);
	columns__title(&lay, title, sizeof(title));
	assert_string_equal(title,
		"Type               Object  Call site  Wait Time (s)         Count  "
		"Average (us)      Max (us)      Failed    Thread     Owner");
	columns__row(&lay, &a_row, "big_lock", "x.c:42", NULL, row, sizeof(row));
	assert_string_equal(row,
		"mutex            big_lock  x.c:42           0.00200             4  "
		"      500.00        900.00           3      4242      4243");
	columns__row(&lay, &a_row, "big_lock", "x.c:42", "4242 worker", row,
		     sizeof(row));
	/* A thread's name that does not fit leaves its TID. */
	assert_non_null(strstr(row, "           3      4242      4243"));
	columns__row(&lay, &a_row, "big_lock", "x.c:42", "4242 me", row,
		     sizeof(row));
	assert_non_null(strstr(row, "  4242 me      4243"));
	columns__row(&lay, &a_row, "big_lock", "x.c:42", "123456789 w", row,
		     sizeof(row));
	assert_non_null(strstr(row, "  1234567~      4243"));
	/* The sort column is marked, in its padding or the gap before it. */
	spec.sort = COL_COUNT;
	columns__layout(&spec, 0, &lay);
	columns__title(&lay, title, sizeof(title));
	assert_non_null(strstr(title, "Wait Time (s)        *Count  "));
	spec.sort = COL_WAIT;
	columns__layout(&spec, 0, &lay);
	columns__title(&lay, title, sizeof(title));
	assert_non_null(strstr(title, "Call site *Wait Time (s)  "));
}

/*
 * Futile after Failed, a count as Count is; on a narrow screen it goes
 * once the numbers are compact, before Max.
 */
static void test_futile_column(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, false);
	struct columns_layout lay;
	struct report_row r = a_row;
	char title[512], row[512];

	spec.futile = true;
	r.futile = 12;
	columns__layout(&spec, 0, &lay);
	columns__title(&lay, title, sizeof(title));
	assert_non_null(strstr(title, "Max (us)      Failed      Futile"));
	columns__row(&lay, &r, "big_lock", "x.c:42", NULL, row, sizeof(row));
	assert_non_null(strstr(row, "900.00           3          12"));
	assert_int_equal(lay.width, QSP_W + EXTRAS_W + 12);
	spec.failed_seen = true;
	columns__layout(&spec, 80, &lay);
	assert_true(lay.compact);
	assert_false(lay.shown[COL_FUTILE]);
	assert_true(lay.shown[COL_MAX]);
}

/* Compact numbers: three digits and a unit in six columns. */
static void test_compact_row(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, false);
	struct columns_layout lay;
	struct report_row r = a_row;
	char title[512], row[512];

	spec.sort = COL_WAIT;
	spec.failed_seen = true;
	columns__layout(&spec, 80, &lay);
	assert_true(lay.compact);
	columns__title(&lay, title, sizeof(title));
	assert_non_null(strstr(title, "Call site   *Wait   Count     Avg     Max"
				      "  Failed"));
	columns__row(&lay, &r, "big_lock", "x.c:42", NULL, row, sizeof(row));
	assert_non_null(strstr(row, "x.c:42     2.00ms       4   500us   900us"
				    "       3"));
	r.wait_ns = 999;
	r.max_ns = 999600;
	r.count = 1234567;
	r.failed = 0;
	columns__row(&lay, &r, "big_lock", "x.c:42", NULL, row, sizeof(row));
	assert_non_null(strstr(row, "   999ns   1.23M     0ns  1.00ms       0"));
	r.wait_ns = 100000ull * 1000000000ull;	/* 27.8 hours */
	r.max_ns = 12345ull * 1000000000ull;
	r.count = 0;
	columns__row(&lay, &r, "big_lock", "x.c:42", NULL, row, sizeof(row));
	assert_non_null(strstr(row, "   27.8h       0       -  12345s"));
}

/* How far texts can be cut and stay apart. */
static void test_apart(void **state UNUSED)
{
	const char *sites[] = { "a/x.c:10", "b/x.c:10", "a/x.c:10" };
	const char *same[] = { "x.c:1", "x.c:1", "y.c:1" };
	const char *objects[] = { "jobs.not_empty", "jobs.not_full" };

	/* "~x.c:10" twice until the whole text fits. */
	assert_int_equal(columns__apart(sites, 3, true, 1, 48), 8);
	assert_int_equal(columns__apart(same, 3, true, 1, 48), 5);
	/* Already apart at the start; or not before the end. */
	assert_int_equal(columns__apart(same, 3, true, 9, 48), 9);
	assert_int_equal(columns__apart(sites, 3, true, 1, 6), 6);
	assert_int_equal(columns__apart(objects, 2, false, 1, 32), 11);
	assert_int_equal(columns__apart(objects, 1, false, 3, 32), 3);
}

/* The line before the event rows: whole when the table is wide enough. */
static void test_events_line(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, false);
	struct columns_layout lay;
	char line[256];

	columns__layout(&spec, 0, &lay);
	columns__events_line(&lay, line, sizeof(line));
	assert_string_equal(line, "Waiting for events, not for a lock (condvar "
			    "waits, joins, barriers, parks, off-CPU waits):");
	columns__layout(&spec, 70, &lay);
	columns__events_line(&lay, line, sizeof(line));
	assert_string_equal(line, "Waiting for events, not for a lock:");
}

/* What is cut first: function names, then directories, never the line. */
static void test_cut_order_of_texts(void **state UNUSED)
{
	assert_string_equal(cut("big_lock", 14, false), "big_lock");
	assert_string_equal(cut("a_very_long_object_name", 10, false), "a_very_lo~");
	/* Coalesced objects lose their padding, then their digits. */
	assert_string_equal(cut("[           3]", 14, false), "[           3]");
	assert_string_equal(cut("[           3]", 6, false), "[3]");
	assert_string_equal(cut("[     1234567]", 5, false), "[123~");
	assert_string_equal(cut("src/block/io.c:1234", 12, true), "~k/io.c:1234");
	assert_string_equal(cut("worker_loop (src/x.c:42)", 20, true),
			    "worker~ (src/x.c:42)");
	assert_string_equal(cut("std::mutex::lock<int>+0x1f", 12, true),
			    "std::mutex:~");
	/* The function gone entirely, the file:line cut from the left. */
	assert_string_equal(cut("worker_loop (src/x.c:42)", 9, true), "~c/x.c:42");
	/* UTF-8: between characters. */
	assert_string_equal(cut("\xc3\xa9t\xc3\xa9\xc3\xa9t\xc3\xa9.c:1", 6, true),
			    "~\xc3\xa9.c:1");
	assert_string_equal(cut("\xc3\xa9t\xc3\xa9\xc3\xa9t\xc3\xa9", 4, false),
			    "\xc3\xa9t\xc3\xa9~");
}

/* A short buffer gets a cut, terminated line. */
static void test_short_buffer(void **state UNUSED)
{
	struct columns_spec spec = screen(14, 9, false);
	struct columns_layout lay;
	char row[20];

	memset(row, 'x', sizeof(row));
	columns__layout(&spec, 0, &lay);
	columns__row(&lay, &a_row, "obj", "a.c:1", NULL, row, sizeof(row));
	assert_int_equal(strlen(row), sizeof(row) - 1);
	columns__title(&lay, row, sizeof(row));
	assert_int_equal(strlen(row), sizeof(row) - 1);
}

/* Every column says what it is, in one line an 80-column screen holds. */
static void test_every_column_has_its_line(void **state UNUSED)
{
	char line[256];

	for (int c = 0; c < COL__COUNT; c++) {
		const char *about = columns__about(c);

		assert_true(about[0]);
		assert_true(text__width(about) <= COLUMNS_ABOUT_W);
		assert_true(columns__title_of(c)[0]);
		columns__help_line(c, line, sizeof(line));
		assert_true(text__width(line) < 80);
		assert_non_null(strstr(line, columns__title_of(c)));
		assert_non_null(strstr(line, about));
	}
	columns__help_line(COLUMNS_SORT_MARK, line, sizeof(line));
	assert_true(!strncmp(line, "  *", 3));
	/* A number's short title beside its full one. */
	columns__help_line(COL_HOLD_AVG, line, sizeof(line));
	assert_non_null(strstr(line, "Average Hold (us), AvgHold"));
}

/* The legend: the shown columns that need one, each once a run. */
static void test_legend_once(void **state UNUSED)
{
	struct columns_spec spec = screen(10, 20, true);
	struct columns_layout lay;
	unsigned int explained = 0;
	char text[1024], want[256];

	spec.futile = true;
	columns__layout(&spec, 0, &lay);
	columns__legend(&lay, &explained, text, sizeof(text));
	snprintf(want, sizeof(want), "Futile: %s\nOwner: %s",
		 columns__about(COL_FUTILE), columns__about(COL_OWNER));
	assert_string_equal(text, want);
	columns__legend(&lay, &explained, text, sizeof(text));
	assert_string_equal(text, "");
	/* Without the state, every table says it; not a column not shown. */
	spec.owner = spec.thread = false;
	columns__layout(&spec, 0, &lay);
	columns__legend(&lay, NULL, text, sizeof(text));
	snprintf(want, sizeof(want), "Futile: %s", columns__about(COL_FUTILE));
	assert_string_equal(text, want);
	spec.futile = false;
	columns__layout(&spec, 0, &lay);
	columns__legend(&lay, NULL, text, sizeof(text));
	assert_string_equal(text, "");
}

/* A summary line at a terminal's width: broken between fields only. */
static void test_lines_fold_between_fields(void **state UNUSED)
{
	static const char summary[] = "syncprof: pid 1 (demo)  mode full  "
		"elapsed 1.00 s  rows 3/3  dropped 0  at 2026-11-28T20:31:12";
	char *text = NULL, fit[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	text__print_folded(f, summary, 0, "  ");
	text__print_folded(f, summary, 50, "  ");
	text__print_folded(f, "a few words to fold", 8, " ");
	fclose(f);
	assert_string_equal(text,
		"syncprof: pid 1 (demo)  mode full  elapsed 1.00 s  rows 3/3  "
		"dropped 0  at 2026-11-28T20:31:12\n"
		"syncprof: pid 1 (demo)  mode full  elapsed 1.00 s\n"
		"  rows 3/3  dropped 0  at 2026-11-28T20:31:12\n"
		"a few\n  words\n  to\n  fold\n");
	free(text);
	/* The live status line: its last fields go whole. */
	snprintf(fit, sizeof(fit), "%s", summary);
	text__fit_fields(fit, 40);
	assert_string_equal(fit, "syncprof: pid 1 (demo)  mode full");
	snprintf(fit, sizeof(fit), "%s", summary);
	text__fit_fields(fit, 10);
	assert_string_equal(fit, summary);	/* the first field is kept */
	text__fit_fields(fit, 200);
	assert_string_equal(fit, summary);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unlimited_is_qsp_and_what_the_section_has),
		cmocka_unit_test(test_wide_screens_have_max_failed_and_owner),
		cmocka_unit_test(test_80_columns_compact_numbers_before_dropping),
		cmocka_unit_test(test_80_columns_keep_thread_and_failed),
		cmocka_unit_test(test_70_columns_cut_the_object_before_the_call_site),
		cmocka_unit_test(test_long_names_yield_to_their_caps_first),
		cmocka_unit_test(test_title_and_row),
		cmocka_unit_test(test_futile_column),
		cmocka_unit_test(test_compact_row),
		cmocka_unit_test(test_apart),
		cmocka_unit_test(test_events_line),
		cmocka_unit_test(test_cut_order_of_texts),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_every_column_has_its_line),
		cmocka_unit_test(test_legend_once),
		cmocka_unit_test(test_lines_fold_between_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
