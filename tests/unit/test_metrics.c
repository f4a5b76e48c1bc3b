// SPDX-License-Identifier: GPL-2.0
/*
 * metrics: series by labels, the cardinality bound and its "other"
 * series, counters that only add, and the exposition text (checked
 * against Prometheus's rules by promtool in the integration test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"

#define UNUSED __attribute__((unused))

static char *render(struct metrics *m)
{
	static const char *const causes[] = { "map_full" };
	static const uint64_t drops[] = { 3 };
	const struct metrics_health h = {
		.drop_causes = causes, .drops = drops, .n_drops = 1,
		.processes_followed = 2, .cpu_seconds = 1.5,
		.resident_bytes = 4096, .exited_rows = 10,
		.exited_rows_forgotten = 3, .exited_rows_merged = 7,
		.blame_rows_kept = 11, .blame_rows_merged = 2,
		.blame_rows_own = 9, .blame_rows_own_max = 64,
		.blame_rows_folded = 5,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(metrics__write(m, &h, f), 0);
	fclose(f);
	return text;
}

static void add_class(struct metrics *m, const char *process,
		      const char *class, const char *callsite, uint64_t count,
		      uint64_t wait_ns, const uint64_t *hist)
{
	const struct metrics_row row = {
		.process = process, .class = class,
		.type = strcmp(class, "lock") ? "condvar" : "mutex",
		.object = "big_lock",
		.callsite = callsite, .count = count, .wait_ns = wait_ns,
		.hist = hist,
	};

	assert_int_equal(metrics__add(m, &row), 0);
}

static void add(struct metrics *m, const char *process, const char *callsite,
		uint64_t count, uint64_t wait_ns, const uint64_t *hist)
{
	add_class(m, process, "lock", callsite, count, wait_ns, hist);
}

/* How many series lines of one metric the text holds. */
static int lines_of(const char *text, const char *name)
{
	int n = 0;
	size_t len = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p += len)
		if ((p == text || p[-1] == '\n') && p[len] == '{')
			n++;
	return n;
}

static void test_changes_add_up(void **state UNUSED)
{
	struct metrics *m;
	uint64_t hist[SP_HIST_SLOTS] = { 0 };
	char *text;

	hist[11] = 2;		/* [1024, 2048) ns: le 2^12 ns */
	hist[21] = 1;		/* ~1-2 ms: le 2^22 ns */
	assert_int_equal(metrics__new(10, &m), 0);
	add(m, "server", "worker x.c:10", 2, 1500000000, hist);
	add(m, "server", "worker x.c:10", 1, 500000000, hist);
	assert_int_equal(metrics__series(m), 1);
	text = render(m);
	assert_non_null(strstr(text,
		"syncprof_lock_wait_seconds_total{process=\"server\",class=\"lock\","
		"type=\"mutex\",object=\"big_lock\",callsite=\"worker x.c:10\"} "
		"2.000000000\n"));
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"server\""
			       ",class=\"lock\",type=\"mutex\",object=\"big_lock\","
			       "callsite=\"worker x.c:10\"} 3\n"));
	/* Cumulative buckets: 4 waits up to 4.096 us, 6 in all. */
	assert_non_null(strstr(text, ",le=\"1.024e-06\"} 0\n"));
	assert_non_null(strstr(text, ",le=\"4.096e-06\"} 4\n"));
	assert_non_null(strstr(text, ",le=\"0.004194304\"} 6\n"));
	assert_non_null(strstr(text, ",le=\"+Inf\"} 6\n"));
	assert_non_null(strstr(text, "_count{process=\"server\",class=\"lock\","
			       "type=\"mutex\",object=\"big_lock\","
			       "callsite=\"worker x.c:10\"} 6\n"));
	assert_non_null(strstr(text, "syncprof_dropped_total{cause=\"map_full\"} 3\n"));
	assert_non_null(strstr(text, "syncprof_processes_followed 2\n"));
	/* The rows held: of named processes, of forgotten ones. */
	assert_non_null(strstr(text, "syncprof_exited_rows{processes=\"named\"} 7\n"));
	assert_non_null(strstr(text, "syncprof_exited_rows{processes=\"forgotten\"} 3\n"));
	assert_non_null(strstr(text, "syncprof_exited_rows_merged_total 7\n"));
	assert_non_null(strstr(text,
			       "syncprof_charge_rows_kept{table=\"blame\"} 11\n"));
	assert_non_null(strstr(text,
			       "syncprof_charge_rows_merged_total{table=\"blame\"} 2\n"));
	assert_non_null(strstr(text,
			       "syncprof_charge_rows_own{table=\"blame\"} 9\n"));
	assert_non_null(strstr(text,
			       "syncprof_charge_rows_own_max{table=\"blame\"} 64\n"));
	assert_non_null(strstr(text,
			       "syncprof_charge_rows_folded_total{table=\"blame\"} 5\n"));
	free(text);
	/* Seconds to the nanosecond; counts past 32 bits. */
	add(m, "server", "tiny t.c:1", 5000000000ull, 1500, NULL);
	text = render(m);
	assert_non_null(strstr(text, "callsite=\"tiny t.c:1\"} 0.000001500\n"));
	assert_non_null(strstr(text, "callsite=\"tiny t.c:1\"} 5000000000\n"));
	assert_non_null(strstr(text, "_sum{process=\"server\",class=\"lock\","
			       "type=\"mutex\",object=\"big_lock\","
			       "callsite=\"worker x.c:10\"} 2.000000000\n"));
	free(text);
	metrics__free(m);
}

static void test_bounded_with_other(void **state UNUSED)
{
	struct metrics *m;
	char name[32], *text;

	/* 3: one of its own, each class's "other". */
	assert_int_equal(metrics__new(3, &m), 0);
	add(m, "server", "a x.c:1", 1, 3000, NULL);
	add(m, "server", "b x.c:2", 1, 2000, NULL);
	add_class(m, "server", "event", "c x.c:3", 1, 500, NULL);
	assert_int_equal(metrics__series(m), 3);
	/* Many programs: still the bound, "other" ones included. */
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		add(m, name, "g y.c:1", 1, 100, NULL);
		add_class(m, name, "event", "h y.c:2", 1, 100, NULL);
	}
	/* A series that has its own keeps it. */
	add(m, "server", "a x.c:1", 1, 3000, NULL);
	assert_int_equal(metrics__series(m), 3);
	text = render(m);
	assert_int_equal(lines_of(text, "syncprof_lock_waits_total"), 3);
	assert_int_equal(lines_of(text, "syncprof_lock_wait_seconds_count"), 3);
	assert_non_null(strstr(text, "callsite=\"a x.c:1\"} 2\n"));
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"other\","
			       "class=\"lock\",type=\"other\",object=\"other\","
			       "callsite=\"other\"} 21\n"));
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"other\","
			       "class=\"event\",type=\"other\",object=\"other\","
			       "callsite=\"other\"} 21\n"));
	assert_non_null(strstr(text, "syncprof_series 3\n"));
	assert_non_null(strstr(text, "syncprof_series_max 3\n"));
	free(text);
	metrics__free(m);
}

/*
 * A tenth of the bound is "other" series: of a process, class and type
 * while they last (a sum by program holds its waits), then of a class.
 */
static void test_other_of_a_process_first(void **state UNUSED)
{
	struct metrics *m;
	char site[32], *text;

	/* 30: 27 of their own, 1 "other" of a process, 2 of the classes. */
	assert_int_equal(metrics__new(30, &m), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(site, sizeof(site), "f%d x.c:%d", i, i);
		add(m, "server", site, 1, 1000, NULL);
	}
	add(m, "client", "g y.c:1", 1, 10, NULL);
	assert_int_equal(metrics__series(m), 29);
	text = render(m);
	assert_int_equal(lines_of(text, "syncprof_lock_waits_total"), 29);
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"server\","
			       "class=\"lock\",type=\"mutex\",object=\"other\","
			       "callsite=\"other\"} 13\n"));
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"other\","
			       "class=\"lock\",type=\"other\",object=\"other\","
			       "callsite=\"other\"} 1\n"));
	free(text);
	metrics__free(m);
}

/*
 * The bound keeps the top series by wait: a lock that turns hot after
 * the bound is full gets a series of its own, the smallest series is
 * evicted into "other" (which never goes down), and what lost its
 * labels is counted.
 */
static void test_bound_keeps_top_by_wait(void **state UNUSED)
{
	struct metrics *m;
	char *text;

	/* 4: two of their own. */
	assert_int_equal(metrics__new(4, &m), 0);
	add(m, "server", "cold a.c:1", 1, 1000, NULL);
	add(m, "server", "warm b.c:2", 1, 5000, NULL);
	/* Full: the hot one has more wait than "cold", which is evicted. */
	add(m, "server", "hot c.c:3", 4, 1000000, NULL);
	assert_int_equal(metrics__series(m), 3);
	text = render(m);
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"server\","
			       "class=\"lock\",type=\"mutex\",object=\"big_lock\","
			       "callsite=\"hot c.c:3\"} 4\n"));
	assert_null(strstr(text, "callsite=\"cold a.c:1\""));
	assert_non_null(strstr(text, "syncprof_lock_waits_total{process=\"other\","
			       "class=\"lock\",type=\"other\",object=\"other\","
			       "callsite=\"other\"} 1\n"));
	assert_non_null(strstr(text, "syncprof_series_dropped_waits_total 1\n"));
	assert_non_null(strstr(text, "syncprof_series_evicted_total 1\n"));
	free(text);
	/* An evicted label set stays in "other": no series restarts at 0. */
	add(m, "server", "cold a.c:1", 2, 9000000, NULL);
	add(m, "server", "hot c.c:3", 1, 1000, NULL);
	text = render(m);
	assert_null(strstr(text, "callsite=\"cold a.c:1\""));
	assert_non_null(strstr(text, "callsite=\"other\"} 3\n"));
	assert_non_null(strstr(text, "callsite=\"hot c.c:3\"} 5\n"));
	assert_non_null(strstr(text, "callsite=\"warm b.c:2\"} 1\n"));
	assert_non_null(strstr(text, "syncprof_series_dropped_waits_total 3\n"));
	free(text);
	assert_int_equal(metrics__series(m), 3);
	metrics__free(m);
}

static void test_labels_escaped(void **state UNUSED)
{
	struct metrics *m;
	char *text;

	assert_int_equal(metrics__new(10, &m), 0);
	add(m, "a\"b\\c", "f<int>\n", 1, 1, NULL);
	text = render(m);
	assert_non_null(strstr(text, "process=\"a\\\"b\\\\c\""));
	assert_non_null(strstr(text, "callsite=\"f<int>\\n\""));
	free(text);
	metrics__free(m);
}

static void test_nothing_no_series(void **state UNUSED)
{
	struct metrics *m;

	assert_int_equal(metrics__new(10, &m), 0);
	add(m, "server", "f x.c:1", 0, 0, NULL);
	assert_int_equal(metrics__series(m), 0);
	metrics__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changes_add_up),
		cmocka_unit_test(test_bounded_with_other),
		cmocka_unit_test(test_other_of_a_process_first),
		cmocka_unit_test(test_bound_keeps_top_by_wait),
		cmocka_unit_test(test_labels_escaped),
		cmocka_unit_test(test_nothing_no_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
