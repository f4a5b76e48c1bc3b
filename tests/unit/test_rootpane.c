// SPDX-License-Identifier: GPL-2.0
/*
 * rootpane: the live screen's roots pane as text: the holder's split,
 * one title over every state's rows, each state's heading before its
 * rows, the sites named through the symbolizer, and a narrow screen's
 * width kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rootpane.h"
#include "stackfix.h"
#include "text.h"

#define UNUSED __attribute__((unused))

/* Rows per object: the two rows apart. */
static const struct report_settings by = { .coalesce = false };

static void add(struct why *w, uint64_t object, uint32_t kind, uint64_t site,
		uint32_t state, uint64_t ns)
{
	struct sp_why_key k = {
		.row = { .object = object, .callsite = 0x400, .tid = 7,
			 .type = SP_TYPE_MUTEX },
		.site = site, .kind = kind,
	};
	struct sp_why_value v = { 0 };

	v.ns[state] = ns;
	v.waits[state] = 2;
	assert_int_equal(why__add(w, &k, &v), 0);
}

static struct report_row waiter(uint64_t object)
{
	return (struct report_row){
		.type = SP_TYPE_MUTEX, .object = object, .n_objects = 1,
		.callsite = 0x400, .tid = REPORT_NO_TID, .pid = REPORT_NO_TID,
		.owner_tid = REPORT_NO_TID,
	};
}

static size_t find(const struct rootpane *p, const char *start)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strncmp(p->lines[i].text, start, strlen(start)))
			return i;
	fail_msg("no line starts with '%s'", start);
	return 0;
}

static void test_states_under_one_title(void **state UNUSED)
{
	struct symbolizer *sym = fix_symbolizer();
	struct report_row rows[2] = { waiter(0x10), waiter(0x20) };
	const struct report_rows view = { rows, 2, 2 };
	struct rootpane p = { 0 };
	size_t title, runnable, sleep;
	struct why *w;

	assert_non_null(sym);
	assert_int_equal(why__new(&w), 0);
	add(w, 0x10, SP_WHY_HOLDER, 0, SP_WHY_RUNNABLE, 3000000);
	add(w, 0x10, SP_WHY_HOLDER, 0, SP_WHY_SLEEP, 1000000);
	add(w, 0x10, SP_WHY_ROOT, FIX_MID_RET, SP_WHY_RUNNABLE, 3000000);
	add(w, 0x10, SP_WHY_ROOT, FIX_MID_RET, SP_WHY_SLEEP, 1000000);
	add(w, 0x20, SP_WHY_ROOT, 0, SP_WHY_UNKNOWN, 500000);
	why__seal(w);

	/* The selected row alone: its holder, its two roots. */
	const struct rootpane_input one = {
		.why = w, .rows_by = &by,
		.rows = &(const struct report_rows){ rows, 1, 1 },
		.symbolizer = sym, .callsite = CALLSITE_FUNC,
	};
	assert_int_equal(rootpane__build(&p, &one, 0), 0);
	assert_string_equal(p.lines[0].text, "Holder during 0.004 s: "
			    "runnable 75%  sleep 25%");
	title = find(&p, "Type ");
	assert_int_equal(p.n_head, title + 2);
	assert_true(p.lines[title].bold);
	assert_non_null(strstr(p.lines[title].text, "Chain ends at"));
	assert_int_equal(p.lines[title + 1].text[0], '-');
	runnable = find(&p, "the last holder waited for a CPU:");
	sleep = find(&p, "the last holder slept");
	assert_true(title < runnable && runnable < sleep);
	assert_true(p.lines[runnable].bold);
	assert_non_null(strstr(p.lines[runnable + 1].text, "fix_mid"));
	assert_non_null(strstr(p.lines[runnable + 1].text, "0.00300"));
	assert_non_null(strstr(p.lines[sleep + 1].text, "0.00100"));
	assert_int_equal(p.n, sleep + 2);

	/* Every row: the other row's root, not seen, too; 60 columns. */
	const struct rootpane_input all = {
		.why = w, .rows_by = &by, .rows = &view, .symbolizer = sym,
		.callsite = CALLSITE_FUNC,
	};
	assert_int_equal(rootpane__build(&p, &all, 60), 0);
	assert_non_null(strstr(p.lines[find(&p, "no owner known") + 1].text,
			       "(not seen)"));
	for (size_t i = 1; i < p.n; i++)
		if (text__width(p.lines[i].text) > 60)
			fail_msg("wider than 60: '%s'", p.lines[i].text);
	rootpane__release(&p);
	why__free(w);
	symbolizer__free(sym);
}

static void test_nothing_charged(void **state UNUSED)
{
	struct report_row row = waiter(0x10);
	struct rootpane p = { 0 };
	struct why *w;

	assert_int_equal(why__new(&w), 0);
	why__seal(w);
	const struct rootpane_input in = {
		.why = w, .rows_by = &by,
		.rows = &(const struct report_rows){ &row, 1, 1 },
	};
	assert_int_equal(rootpane__build(&p, &in, 80), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.lines[0].text,
			    "Holder during 0.000 s: none");
	assert_string_equal(p.lines[1].text, "No chain ended in this view.");
	assert_int_equal(p.n_head, 1);
	rootpane__release(&p);
	why__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states_under_one_title),
		cmocka_unit_test(test_nothing_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
