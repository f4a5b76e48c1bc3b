// SPDX-License-Identifier: GPL-2.0
/*
 * live: the parts of the live screen that need no terminal: when it
 * applies, what each key changes, the interval ladder, the column layout
 * for a window width, and the text of titles and rows in that layout;
 * selecting a row and the stack pane's share of the window.
 */
#include <curses.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"
#include "live.h"

#define UNUSED __attribute__((unused))

static struct options interval_opts(void)
{
	return (struct options){
		.pid = 1,
		.interval_s = 1.0,
		.top = 10,
		.coalesce = true,
		.format = FORMAT_TABLE,
	};
}

static void test_applies_only_to_interval_tables_on_a_terminal(void **state UNUSED)
{
	struct options o = interval_opts();

	assert_true(live__applies(&o, true));
	assert_false(live__applies(&o, false));
	o.batch = true;
	assert_false(live__applies(&o, true));
	o = interval_opts();
	o.format = FORMAT_JSON;
	assert_false(live__applies(&o, true));
	o.format = FORMAT_CSV;
	assert_false(live__applies(&o, true));
	o = interval_opts();
	o.output = "report.txt";
	assert_false(live__applies(&o, true));
	o = interval_opts();
	o.interval_s = 0;
	assert_false(live__applies(&o, true));
	o.cumulative = true;	/* with an interval, cumulative is a view */
	o.interval_s = 2;
	assert_true(live__applies(&o, true));
}

static struct live_state default_state(void)
{
	return (struct live_state){
		.sort = SORT_TOTAL,
		.coalesce = true,
		.interval_s = 1.0,
	};
}

static void test_s_cycles_the_sort(void **state UNUSED)
{
	struct live_state st = default_state();
	static const enum sort_key order[] = {
		SORT_MEAN, SORT_MAX, SORT_COUNT, SORT_TOTAL, SORT_MEAN,
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(live__key(&st, 's'), LIVE_REBUILD);
		assert_int_equal(st.sort, order[i]);
	}
}

/* G groups the thread-state panel, and does nothing without one. */
static void test_G_groups_thread_states(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'G'), 0);
	assert_false(st.group);
	st.states = true;
	assert_int_equal(live__key(&st, 'G'), LIVE_REBUILD);
	assert_true(st.group);
	assert_int_equal(live__key(&st, 'G'), LIVE_REBUILD);
	assert_false(st.group);
	/* g stays the stack pane's. */
	assert_false(st.stacks);
	live__key(&st, 'g');
	assert_true(st.stacks);
	assert_false(st.group);
}

static void test_c_t_d_toggle_and_rebuild(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'c'), LIVE_REBUILD);
	assert_false(st.coalesce);
	assert_int_equal(live__key(&st, 'c'), LIVE_REBUILD);
	assert_true(st.coalesce);
	assert_int_equal(live__key(&st, 't'), LIVE_REBUILD);
	assert_true(st.per_thread);
	assert_int_equal(live__key(&st, 'd'), LIVE_REBUILD);
	assert_true(st.cumulative);
	assert_int_equal(live__key(&st, 'd'), LIVE_REBUILD);
	assert_false(st.cumulative);
	/* Nothing else moved. */
	assert_int_equal(st.sort, SORT_TOTAL);
	assert_false(st.paused);
	assert_true(st.interval_s == 1.0);
}

/* l cycles the rows shown: all, lock waits only, event waits only. */
static void test_l_cycles_locks_and_events(void **state UNUSED)
{
	struct live_state st = default_state();
	static const enum report_classes order[] = {
		REPORT_CLASSES_LOCKS, REPORT_CLASSES_EVENTS, REPORT_CLASSES_ALL,
		REPORT_CLASSES_LOCKS,
	};

	assert_int_equal(st.classes, REPORT_CLASSES_ALL);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(live__key(&st, 'l'), LIVE_REBUILD);
		assert_int_equal(st.classes, order[i]);
	}
	assert_int_equal(st.sort, SORT_TOTAL);
	assert_true(st.coalesce);
}

static void test_r_asks_for_a_snapshot_to_reset_at(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'r'), LIVE_REFRESH);
	assert_true(st.reset);
}

static void test_p_pauses_and_resume_refreshes(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'p'), LIVE_RETIME | LIVE_REDRAW);
	assert_true(st.paused);
	assert_int_equal(live__key(&st, 'p'),
			 LIVE_RETIME | LIVE_REDRAW | LIVE_REFRESH);
	assert_false(st.paused);
}

static void test_plus_minus_walk_the_ladder(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, '+'), LIVE_RETIME | LIVE_REDRAW);
	assert_true(st.interval_s == 2.0);
	assert_int_equal(live__key(&st, '='), LIVE_RETIME | LIVE_REDRAW);
	assert_true(st.interval_s == 5.0);
	assert_int_equal(live__key(&st, '-'), LIVE_RETIME | LIVE_REDRAW);
	assert_int_equal(live__key(&st, '-'), LIVE_RETIME | LIVE_REDRAW);
	assert_int_equal(live__key(&st, '-'), LIVE_RETIME | LIVE_REDRAW);
	assert_true(st.interval_s == 0.5);
	st.interval_s = 0.1;
	assert_int_equal(live__key(&st, '-'), 0);	/* the floor */
	assert_true(st.interval_s == 0.1);
	st.interval_s = 300;
	assert_int_equal(live__key(&st, '+'), 0);	/* the ceiling */
}

static void test_step_interval_from_off_ladder_values(void **state UNUSED)
{
	assert_true(live__step_interval(0.7, 1) == 1.0);
	assert_true(live__step_interval(0.7, -1) == 0.5);
	assert_true(live__step_interval(0.05, -1) == 0.05);
	assert_true(live__step_interval(0.05, 1) == 0.1);
	assert_true(live__step_interval(1000, 1) == 1000);
	assert_true(live__step_interval(1000, -1) == 300);
	assert_true(live__step_interval(2, 0) == 2);
}

static void test_q_quits_even_from_help(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'q'), LIVE_QUIT);
	assert_int_equal(live__key(&st, '?'), LIVE_REDRAW);
	assert_true(st.help);
	assert_int_equal(live__key(&st, 'Q'), LIVE_QUIT);
}

static void test_any_key_closes_help_and_does_nothing_else(void **state UNUSED)
{
	struct live_state st = default_state();

	live__key(&st, '?');
	assert_int_equal(live__key(&st, 's'), LIVE_REDRAW);
	assert_false(st.help);
	assert_int_equal(st.sort, SORT_TOTAL);
	assert_int_equal(live__key(&st, 'x'), 0);	/* unknown keys */
	assert_int_equal(live__key(&st, ' '), 0);
}

/* ? in the help turns to the columns' page; then any key closes both. */
static void test_help_again_shows_the_columns(void **state UNUSED)
{
	struct live_state st = default_state();

	live__key(&st, '?');
	assert_false(st.help_columns);
	assert_int_equal(live__key(&st, '?'), LIVE_REDRAW);
	assert_true(st.help);
	assert_true(st.help_columns);
	assert_int_equal(live__key(&st, '?'), LIVE_REDRAW);
	assert_false(st.help);
	assert_false(st.help_columns);
	assert_int_equal(st.sort, SORT_TOTAL);
}

/* Up/Down select; the first press shows the selection where it is. */
static void test_arrows_select_rows(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_false(st.selecting);
	assert_int_equal(live__key(&st, KEY_DOWN), LIVE_REDRAW);
	assert_true(st.selecting);
	assert_int_equal(st.selected, 0);
	assert_int_equal(live__key(&st, KEY_DOWN), LIVE_REDRAW);
	assert_int_equal(live__key(&st, KEY_DOWN), LIVE_REDRAW);
	assert_int_equal(st.selected, 2);
	assert_int_equal(live__key(&st, KEY_UP), LIVE_REDRAW);
	assert_int_equal(st.selected, 1);
	live__key(&st, KEY_UP);
	live__key(&st, KEY_UP);
	assert_int_equal(st.selected, 0);	/* the top stays the top */
	live__key(&st, KEY_END);
	assert_int_equal(st.selected, INT_MAX);	/* the drawing clamps it */
	live__key(&st, KEY_HOME);
	assert_int_equal(st.selected, 0);
	/* End goes to the last row at once, the first press too. */
	st = default_state();
	live__key(&st, KEY_END);
	assert_true(st.selecting);
	assert_int_equal(st.selected, INT_MAX);
	/* Nothing else moved. */
	assert_int_equal(st.sort, SORT_TOTAL);
	assert_true(st.coalesce);
	assert_false(st.stacks);
}

/* Without a pane, PgUp/PgDn page through the table's rows. */
static void test_page_keys_scroll_the_table(void **state UNUSED)
{
	struct live_state st = default_state();

	st.page = 10;
	assert_int_equal(live__key(&st, KEY_NPAGE), LIVE_REDRAW);
	assert_true(st.selecting);
	assert_int_equal(st.top, 10);
	assert_int_equal(st.selected, 10);
	live__key(&st, KEY_NPAGE);
	assert_int_equal(st.top, 20);
	assert_int_equal(st.selected, 20);
	live__key(&st, KEY_PPAGE);
	live__key(&st, KEY_PPAGE);
	live__key(&st, KEY_PPAGE);
	assert_int_equal(st.top, 0);
	assert_int_equal(st.selected, 0);
	assert_int_equal(st.pane_top, 0);
}

/* g and Enter open and close the pane; PgUp/PgDn scroll it. */
static void test_g_toggles_the_stack_pane(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'g'), LIVE_REBUILD);
	assert_true(st.stacks);
	assert_true(st.selecting);
	assert_int_equal(live__key(&st, KEY_NPAGE), LIVE_REDRAW);
	assert_int_equal(live__key(&st, KEY_NPAGE), LIVE_REDRAW);
	assert_int_equal(st.pane_top, 2 * LIVE_PANE_PAGE);
	assert_int_equal(live__key(&st, KEY_PPAGE), LIVE_REDRAW);
	assert_int_equal(st.pane_top, LIVE_PANE_PAGE);
	live__key(&st, KEY_PPAGE);
	live__key(&st, KEY_PPAGE);
	assert_int_equal(st.pane_top, 0);
	/* Another row: its stacks from the top. */
	live__key(&st, KEY_NPAGE);
	live__key(&st, KEY_DOWN);
	assert_int_equal(st.pane_top, 0);
	assert_int_equal(live__key(&st, '\n'), LIVE_REBUILD);
	assert_false(st.stacks);
	assert_int_equal(live__key(&st, KEY_ENTER), LIVE_REBUILD);
	assert_true(st.stacks);
	assert_int_equal(live__key(&st, 'g'), LIVE_REBUILD);
	assert_false(st.stacks);
	/* The help takes the key first, as any other. */
	live__key(&st, '?');
	assert_int_equal(live__key(&st, 'g'), LIVE_REDRAW);
	assert_false(st.stacks);
}

/* H opens the histogram pane in the stack pane's place: one at a time. */
static void test_H_toggles_the_histogram_pane(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'H'), LIVE_REBUILD);
	assert_true(st.hist);
	assert_true(st.selecting);
	assert_int_equal(live__key(&st, 'g'), LIVE_REBUILD);
	assert_true(st.stacks);
	assert_false(st.hist);
	assert_int_equal(live__key(&st, 'H'), LIVE_REBUILD);
	assert_true(st.hist);
	assert_false(st.stacks);
	assert_int_equal(live__key(&st, 'H'), LIVE_REBUILD);
	assert_false(st.hist);
	assert_false(st.stacks);
}

/*
 * w (--why): the selected row's roots, every row's, closed; one pane at
 * a time; PgUp/PgDn scroll it.  Without --why it does nothing.
 */
static void test_w_cycles_the_roots_pane(void **state UNUSED)
{
	struct live_state st = default_state();

	assert_int_equal(live__key(&st, 'w'), 0);
	assert_false(st.roots);
	st.why = true;
	assert_int_equal(live__key(&st, 'H'), LIVE_REBUILD);
	assert_int_equal(live__key(&st, 'w'), LIVE_REBUILD);
	assert_true(st.roots);
	assert_false(st.roots_all);
	assert_false(st.hist);
	assert_true(st.selecting);
	assert_int_equal(live__key(&st, KEY_NPAGE), LIVE_REDRAW);
	assert_int_equal(st.pane_top, LIVE_PANE_PAGE);
	assert_int_equal(st.selected, 0);
	assert_int_equal(live__key(&st, 'w'), LIVE_REBUILD);
	assert_true(st.roots);
	assert_true(st.roots_all);
	assert_int_equal(st.pane_top, 0);
	assert_int_equal(live__key(&st, 'w'), LIVE_REBUILD);
	assert_false(st.roots);
	assert_false(st.roots_all);
	assert_int_equal(live__key(&st, 'w'), LIVE_REBUILD);
	assert_int_equal(live__key(&st, 'g'), LIVE_REBUILD);
	assert_true(st.stacks);
	assert_false(st.roots);
}

static void test_pane_takes_three_fifths(void **state UNUSED)
{
	int table, pane;

	live__split(40, false, &table, &pane);
	assert_int_equal(table, 33);
	assert_int_equal(pane, 0);
	live__split(40, true, &table, &pane);
	assert_int_equal(table, 13);
	assert_int_equal(pane, 20);
	/* Too small for both: the table alone. */
	live__split(11, true, &table, &pane);
	assert_int_equal(table, 4);
	assert_int_equal(pane, 0);
	live__split(12, true, &table, &pane);
	assert_int_equal(table, 2);
	assert_int_equal(pane, 3);
	live__split(0, true, &table, &pane);
	assert_int_equal(table, 0);
	assert_int_equal(pane, 0);
}

static void test_table_rows_fill_the_height(void **state UNUSED)
{
	assert_int_equal(live__table_rows(40), 33);
	assert_int_equal(live__table_rows(8), 1);
	assert_int_equal(live__table_rows(7), 0);
	assert_int_equal(live__table_rows(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applies_only_to_interval_tables_on_a_terminal),
		cmocka_unit_test(test_s_cycles_the_sort),
		cmocka_unit_test(test_c_t_d_toggle_and_rebuild),
		cmocka_unit_test(test_l_cycles_locks_and_events),
		cmocka_unit_test(test_G_groups_thread_states),
		cmocka_unit_test(test_r_asks_for_a_snapshot_to_reset_at),
		cmocka_unit_test(test_p_pauses_and_resume_refreshes),
		cmocka_unit_test(test_plus_minus_walk_the_ladder),
		cmocka_unit_test(test_step_interval_from_off_ladder_values),
		cmocka_unit_test(test_q_quits_even_from_help),
		cmocka_unit_test(test_any_key_closes_help_and_does_nothing_else),
		cmocka_unit_test(test_help_again_shows_the_columns),
		cmocka_unit_test(test_arrows_select_rows),
		cmocka_unit_test(test_page_keys_scroll_the_table),
		cmocka_unit_test(test_g_toggles_the_stack_pane),
		cmocka_unit_test(test_H_toggles_the_histogram_pane),
		cmocka_unit_test(test_w_cycles_the_roots_pane),
		cmocka_unit_test(test_pane_takes_three_fifths),
		cmocka_unit_test(test_table_rows_fill_the_height),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
