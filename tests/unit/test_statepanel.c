// SPDX-License-Identifier: GPL-2.0
/*
 * statepanel: the live screen's thread-state bars as text: columns for a
 * window width, how many lines the panel takes, the title's legend, a
 * row's bar and shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "statepanel.h"

#define UNUSED __attribute__((unused))

static struct states_row row(int64_t tid, const char *comm, uint64_t run,
			     uint64_t runnable, uint64_t lock, uint64_t sleep)
{
	struct states_row r = {
		.tid = tid,
		.threads = 1,
		.ns = { run, runnable, lock, sleep },
		.alive_ns = run + runnable + lock + sleep,
	};

	strncpy(r.comm, comm, STATES_COMM_LEN);
	return r;
}

static void test_layout(void **state UNUSED)
{
	struct statepanel_layout lay;

	statepanel__layout(100, 6, &lay);
	assert_int_equal(lay.name_w, 6);
	assert_int_equal(lay.width, 100);
	assert_int_equal(lay.bar_x, 7 + 2 + 6 + 2 + 1);
	assert_int_equal(lay.bar_w, 100 - (7 + 2 + 6 + 2 + 2 + 5 * 6));
	/* Long names are capped; a narrow window keeps a usable bar. */
	statepanel__layout(40, 60, &lay);
	assert_int_equal(lay.name_w, 24);
	assert_int_equal(lay.bar_w, 10);
	statepanel__layout(80, 1, &lay);
	assert_int_equal(lay.name_w, 4);
}

static void test_lines(void **state UNUSED)
{
	/* Title, rows, blank line; at most half the lines. */
	assert_int_equal(statepanel__lines(30, 4), 6);
	assert_int_equal(statepanel__lines(30, 100), 15);
	assert_int_equal(statepanel__lines(30, 0), 3);
	assert_int_equal(statepanel__lines(4, 10), 3);
	assert_int_equal(statepanel__lines(2, 10), 0);
}

static void test_title(void **state UNUSED)
{
	struct statepanel_layout lay;
	char buf[256];

	statepanel__layout(120, 6, &lay);
	statepanel__title_text(&lay, buf, sizeof(buf));
	assert_non_null(strstr(buf, "    TID  Name    | running  + runnable  "
			       "# lock wait  . sleep"));
	assert_non_null(strstr(buf, "# lock wait  . sleep  ~ stolen"));
	assert_non_null(strstr(buf, " Run%  Rdy% Lock%  Slp%  Stl%"));
	assert_int_equal((int)strlen(buf), lay.width);
	/* A short bar gets the short legend. */
	statepanel__layout(74, 6, &lay);
	statepanel__title_text(&lay, buf, sizeof(buf));
	assert_non_null(strstr(buf, "|run +rdy #lock .sleep ~stl"));
}

static void test_row(void **state UNUSED)
{
	struct states_row r = row(42, "worker", 250, 50, 400, 300);
	struct statepanel_layout lay;
	char buf[256], bar[64];

	statepanel__layout(7 + 2 + 6 + 2 + 2 + 30 + 20, 6, &lay);
	assert_int_equal(lay.bar_w, 20);
	statepanel__row_text(&lay, &r, 1000, buf, sizeof(buf));
	memcpy(bar, buf + lay.bar_x, 20);
	bar[20] = '\0';
	assert_string_equal(bar, "|||||+########......");
	assert_memory_equal(buf, "     42  worker  [", 18);
	assert_string_equal(buf + lay.bar_x + 20, "]  25.0   5.0  40.0  30.0   0.0");

	/* Half a window alive: half a bar; a group: its name and count. */
	statepanel__layout(7 + 2 + 7 + 2 + 2 + 30 + 20, 7, &lay);
	r = row(STATES_NO_TID, "pool", 500, 0, 0, 500);
	r.threads = 2;
	statepanel__row_text(&lay, &r, 1000, buf, sizeof(buf));
	memcpy(bar, buf + lay.bar_x + 1, 20);	/* x is 1 column, 2 bytes */
	bar[20] = '\0';
	assert_string_equal(bar, "|||||.....          ");
	assert_memory_equal(buf, "      -  pool \u00d72  [", 20);
	assert_non_null(strstr(buf, "]  25.0   0.0   0.0  25.0   0.0"));
	assert_int_equal(statepanel_chars[STATES_LOCK], '#');

	/* Time the hypervisor stole from the thread: its own cells, last. */
	statepanel__layout(7 + 2 + 6 + 2 + 2 + 30 + 20, 6, &lay);
	r = row(43, "worker", 250, 50, 300, 300);
	r.ns[STATES_STOLEN] = 100;
	r.alive_ns += 100;
	statepanel__row_text(&lay, &r, 1000, buf, sizeof(buf));
	memcpy(bar, buf + lay.bar_x, 20);
	bar[20] = '\0';
	assert_string_equal(bar, "|||||+######......~~");
	assert_string_equal(buf + lay.bar_x + 20, "]  25.0   5.0  30.0  30.0  10.0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_title),
		cmocka_unit_test(test_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
