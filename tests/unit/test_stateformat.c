// SPDX-License-Identifier: GPL-2.0
/*
 * stateformat: the thread-state section of the table, JSON's "threads",
 * the CSV lines of --states-csv (as many fields as the header), group
 * names, and the live screen's bar cells.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stateformat.h"

#define UNUSED __attribute__((unused))
#define MS 1000000ull

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static void capture_begin(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
}

static char *capture_end(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

static struct states_row row(int64_t tid, const char *comm, uint64_t run,
			     uint64_t runnable, uint64_t lock, uint64_t sleep)
{
	struct states_row r = {
		.tid = tid,
		.threads = 1,
		.ns = { run, runnable, lock, sleep },
		.alive_ns = run + runnable + lock + sleep,
		.state = SP_THREAD_SLEEP,
	};

	strncpy(r.comm, comm, STATES_COMM_LEN);
	return r;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_table(void **state UNUSED)
{
	struct states_row rows[2] = {
		row(42, "worker", 250 * MS, 10 * MS, 500 * MS, 240 * MS),
		row(43, "io\x1b[2J", 0, 0, 0, 500 * MS),
	};
	struct states_report rep = {
		.start_ns = 1000 * MS, .end_ns = 2000 * MS,
		.rows = rows, .count = 2,
	};
	struct capture c;
	char *text;

	rows[0].type_ns[SP_TYPE_MUTEX] = 400 * MS;
	rows[0].type_ns[SP_TYPE_CONDVAR] = 100 * MS;
	rows[1].alive_ns = 500 * MS;
	rows[1].born_ns = 1500 * MS;
	rows[1].type_ns[SP_TYPE_FUTEX] = 200 * MS;
	capture_begin(&c);
	stateformat__table(c.f, &rep);
	text = capture_end(&c);
	assert_non_null(strstr(text, "Thread states: 2 threads, window 1.00 s"));
	assert_non_null(strstr(text, "Running"));
	assert_non_null(strstr(text, "Lock wait by type"));
	/* TID, name, seconds and shares, lock types by time. */
	assert_non_null(strstr(text, "     42  worker"));
	assert_non_null(strstr(text, "0.250   25.0%"));
	assert_non_null(strstr(text, "0.500   50.0%"));
	assert_non_null(strstr(text, "100.0%  mutex 40.0%, condvar 10.0%"));
	/* A target's name cannot send escapes to the terminal. */
	assert_null(strchr(text, '\x1b'));
	assert_non_null(strstr(text, "io?[2J"));
	assert_non_null(strstr(text, "50.0%  (futex 20.0%); started at +0.50 s"));
	assert_non_null(strstr(text, "(futex): futex waits of no known lock type"));
	/* No time stolen: no column for it. */
	assert_null(strstr(text, "Stolen"));
	free(text);
}

/* Time a hypervisor stole from a thread: a column of its own. */
static void test_table_stolen(void **state UNUSED)
{
	struct states_row r = row(42, "spinner", 600 * MS, 200 * MS, 0, 0);
	struct states_report rep = {
		.start_ns = 0, .end_ns = 1000 * MS, .rows = &r, .count = 1,
	};
	struct capture c;
	char *text;

	r.ns[STATES_STOLEN] = 200 * MS;
	r.alive_ns += 200 * MS;
	capture_begin(&c);
	stateformat__table(c.f, &rep);
	text = capture_end(&c);
	assert_non_null(strstr(text, "Sleep       %      Stolen       %    Alive"));
	assert_non_null(strstr(text, "0.000    0.0%       0.200   20.0%   100.0%"));
	assert_non_null(strstr(text, "Stolen: on a CPU the hypervisor ran"));
	free(text);
}

/* A group's shares are of the window times its threads. */
static void test_table_group(void **state UNUSED)
{
	struct states_row r = row(STATES_NO_TID, "pool", 1000 * MS, 0,
				  500 * MS, 500 * MS);
	struct states_report rep = {
		.start_ns = 0, .end_ns = 1000 * MS, .rows = &r, .count = 1,
		.grouped = true, .sched_missed = 3,
	};
	struct capture c;
	char *text;

	r.threads = 2;
	r.type_ns[SP_TYPE_MUTEX] = 500 * MS;
	capture_begin(&c);
	stateformat__table(c.f, &rep);
	text = capture_end(&c);
	assert_non_null(strstr(text, "Thread states: 2 threads in 1 group, "
			       "window 1.00 s (seconds, and share of the window "
			       "times the group's threads); 3 scheduler events "
			       "missed since attach"));
	assert_non_null(strstr(text, "      -  pool ×2"));
	assert_non_null(strstr(text, "1.000   50.0%"));
	assert_non_null(strstr(text, "100.0%  mutex 25.0%"));
	free(text);
}

static void test_group_name(void **state UNUSED)
{
	struct states_row r = row(STATES_NO_TID, "worker", 1, 0, 0, 0);
	char buf[64];

	r.threads = 8;
	stateformat__name(&r, buf, sizeof(buf));
	assert_string_equal(buf, "worker \u00d78");
	r.tid = 7;
	stateformat__name(&r, buf, sizeof(buf));
	assert_string_equal(buf, "worker");
}

static void test_json(void **state UNUSED)
{
	struct states_row rows[2] = {
		row(42, "wo\"rk", 1, 2, 3, 4),
		row(STATES_NO_TID, "pool", 10, 20, 30, 40),
	};
	struct states_report rep = { .start_ns = 0, .end_ns = 100, .rows = rows,
				     .count = 2 };
	json_t *report = json_object(), *back;
	char *text;
	int err = 0;

	rows[0].type_ns[SP_TYPE_MUTEX] = 3;
	rows[0].type_ns[SP_TYPE_FUTEX] = 1;
	rows[0].exit_ns = 90;
	rows[0].state = SP_THREAD_DEAD;
	rows[1].threads = 3;
	rows[1].state = -1;
	rows[1].ns[STATES_STOLEN] = 5;
	stateformat__json(report, &rep, &err);
	assert_int_equal(err, 0);
	text = json_dumps(report, 0);
	assert_string_equal(text,
		"{\"threads\": [{\"tid\": 42, \"comm\": \"wo\\\"rk\", \"threads_in_group\": 1, "
		"\"running_ns\": 1, \"runnable_ns\": 2, \"lock_ns\": 3, "
		"\"sleep_ns\": 4, \"stolen_ns\": 0, \"alive_ns\": 10, \"lock_by_type\": "
		"{\"mutex\": 3}, \"futex_ns\": 1, \"state\": \"exited\", "
		"\"born_ns\": null, \"exit_ns\": 90}, "
		"{\"tid\": null, \"comm\": \"pool\", \"threads_in_group\": 3, "
		"\"running_ns\": 10, \"runnable_ns\": 20, \"lock_ns\": 30, "
		"\"sleep_ns\": 40, \"stolen_ns\": 5, \"alive_ns\": 100, \"lock_by_type\": {}, "
		"\"futex_ns\": 0, \"state\": null, \"born_ns\": null, "
		"\"exit_ns\": null}], \"sched_missed\": 0}");
	/* It reads back. */
	back = json_loads(text, 0, NULL);
	assert_non_null(back);
	assert_true(json_equal(back, report));
	json_decref(back);
	free(text);
	json_decref(report);
	/* Without --states: both keys, null. */
	report = json_object();
	stateformat__json(report, NULL, &err);
	text = json_dumps(report, 0);
	assert_string_equal(text, "{\"threads\": null, \"sched_missed\": null}");
	free(text);
	json_decref(report);
}

static void test_csv(void **state UNUSED)
{
	struct states_row rows[2] = {
		row(42, "a,b", 1, 2, 3, 4),
		row(STATES_NO_TID, "pool", 10, 20, 30, 40),
	};
	struct states_report rep = { .start_ns = 5, .end_ns = 105, .rows = rows,
				     .count = 2, .grouped = true };
	struct capture c;
	char *text, *line2, *line3;

	rows[0].type_ns[SP_TYPE_RWLOCK_R] = 3;
	rows[1].threads = 3;
	rows[1].state = -1;
	rows[1].ns[STATES_STOLEN] = 7;
	capture_begin(&c);
	stateformat__csv_header(c.f);
	stateformat__csv(c.f, 7, 1234, &rep);
	text = capture_end(&c);
	assert_int_equal(count_char(text, '\n'), 3);
	line2 = strchr(text, '\n') + 1;
	line3 = strchr(line2, '\n') + 1;
	assert_memory_equal(text, "report,pid,start_ns,end_ns,tid,comm,threads,"
			    "alive_ns,running_ns,runnable_ns,lock_ns,sleep_ns,"
			    "state,born_ns,exit_ns,mutex_ns,rec_mutex_ns,"
			    "condvar_ns,rwlock_r_ns,", 125);
	assert_memory_equal(line2, "7,1234,5,105,42,\"a,b\",1,10,1,2,3,4,sleep,,,"
			    "0,0,0,3,", 46);
	assert_memory_equal(line3, "7,1234,5,105,,pool,3,100,10,20,30,40,,,,", 40);
	/* Stolen time: the last field. */
	assert_memory_equal(line2 - strlen(",stolen_ns\n"), ",stolen_ns\n",
			    strlen(",stolen_ns\n"));
	assert_memory_equal(strchr(line3, '\n') - 2, ",7", 2);
	/* A line has the header's fields. */
	{
		size_t header = 0, l3 = 0;

		for (const char *p = text; *p != '\n'; p++)
			header += *p == ',';
		for (const char *p = line3; *p != '\n'; p++)
			l3 += *p == ',';
		assert_int_equal(header, l3);
	}
	free(text);
}

static int sum(const int cells[STATES__COUNT])
{
	int n = 0;

	for (int k = 0; k < STATES__COUNT; k++)
		n += cells[k];
	return n;
}

static void test_bar(void **state UNUSED)
{
	struct states_row r = row(1, "w", 250, 250, 250, 250);
	int cells[STATES__COUNT];

	stateformat__bar(&r, 1000, 40, cells);
	assert_int_equal(cells[STATES_RUNNING], 10);
	assert_int_equal(cells[STATES_LOCK], 10);
	assert_int_equal(sum(cells), 40);

	/* Thirds of 10 cells: the largest remainders, then the earlier state. */
	r = row(1, "w", 333, 333, 334, 0);
	stateformat__bar(&r, 1000, 10, cells);
	assert_int_equal(sum(cells), 10);
	assert_int_equal(cells[STATES_LOCK], 4);
	assert_int_equal(cells[STATES_SLEEP], 0);

	/* A tiny share still shows when the rounding gives it a cell. */
	r = row(1, "w", 960, 40, 0, 0);
	stateformat__bar(&r, 1000, 20, cells);
	assert_int_equal(cells[STATES_RUNNING], 19);
	assert_int_equal(cells[STATES_RUNNABLE], 1);

	/* Half the window alive: half the bar. */
	r = row(1, "w", 100, 0, 0, 400);
	stateformat__bar(&r, 1000, 30, cells);
	assert_int_equal(sum(cells), 15);
	assert_int_equal(cells[STATES_RUNNING], 3);
	assert_int_equal(cells[STATES_SLEEP], 12);

	/* A group of 2: its shares are of two windows. */
	r = row(STATES_NO_TID, "g", 1000, 0, 0, 1000);
	r.threads = 2;
	stateformat__bar(&r, 1000, 10, cells);
	assert_int_equal(cells[STATES_RUNNING], 5);
	assert_int_equal(cells[STATES_SLEEP], 5);
	assert_int_equal(stateformat__capacity(&r, 1000), 2000);

	/* Nothing to draw in. */
	r = row(1, "w", 100, 0, 0, 400);
	stateformat__bar(&r, 0, 30, cells);
	assert_int_equal(sum(cells), 0);
	stateformat__bar(&r, 1000, 0, cells);
	assert_int_equal(sum(cells), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_stolen),
		cmocka_unit_test(test_table_group),
		cmocka_unit_test(test_group_name),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_bar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
