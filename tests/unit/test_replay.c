// SPDX-License-Identifier: GPL-2.0
/*
 * replay: each report the live run noted is printed again from the waits
 * of its windows (counts, failures, waits and maxima from the events),
 * with its own times and drop counts; --cumulative sums the windows; the
 * report options apply; waits after the last report are left out; a
 * directory that is not a recording is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "options.h"
#include "recfixture.h"
#include "recmeta.h"
#include "replay.h"

#define UNUSED __attribute__((unused))

static struct sp_wait_event ev(int span, uint32_t tid, uint32_t window,
			       uint64_t start, uint64_t wait, uint32_t flags)
{
	return (struct sp_wait_event){
		.key = recfixture_key(span, tid),
		.start_ns = start,
		.end_ns = start + wait,
		.max_ns = wait,
		.flags = flags,
		.window = window,
	};
}

/* Two reports: windows 0 and 1 (the second with 3 waits dropped). */
static char *make_recording(void)
{
	const struct sp_wait_event events[] = {
		ev(0, 11, 0, 1100, 100, SP_EVENT_COUNTED),
		ev(0, 12, 0, 1300, 300, SP_EVENT_COUNTED),
		ev(2, 12, 0, 1700, 50, SP_EVENT_FAILED),
		ev(0, 11, 1, 2100, 400, SP_EVENT_COUNTED),
		ev(1, 11, 1, 2600, 20, 0),	/* a wait of an acquisition... */
		ev(1, 11, 1, 2700, 30, SP_EVENT_COUNTED), /* ...counted at its end */
		ev(0, 11, 2, 3100, 999, SP_EVENT_COUNTED), /* after the last report */
		{ .key = { .tid = 12 }, .flags = SP_EVENT_LOST_ONLY, .lost = 3,
		  .lost_ns = 2900, .window = 1 },
	};
	struct recmeta m = { .pid = 11, .attach_ns = 1000, .end_ns = 3500 };
	const struct recmeta_report r1 = {
		.sequence = 1, .start_ns = 1000, .end_ns = 2000,
	};
	const struct recmeta_report r2 = {
		.sequence = 2, .first_window = 1, .last_window = 1,
		.start_ns = 2000, .end_ns = 3000, .dropped = 3,
		.unwind_stopped = 1,
	};
	char *dir = recfixture_dir(), path[512];

	recmeta__set(&m.comm, "server");
	recmeta__set(&m.mode, "contended");
	recmeta__add_report(&m, &r1);
	recmeta__add_report(&m, &r2);
	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_NAME);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	recmeta__write(&m, f);
	assert_int_equal(fclose(f), 0);
	recmeta__clear(&m);
	recfixture_write(dir, "syncprof.names", recfixture_names);
	close(recfixture_log(dir, events, sizeof(events) / sizeof(events[0])));
	return dir;
}

/* syncprof --replay DIR ARGS... -f json; returns what it printed. */
static char *replay(const char *dir, int *err, ...)
{
	char *argv[16] = { "syncprof", "--replay", (char *)dir, "-f", "json" };
	int argc = 5;
	struct options opts;
	char *text = NULL;
	size_t len = 0;
	va_list ap;
	FILE *out;

	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	assert_int_equal(options__parse(&opts, argc, argv), 0);
	out = open_memstream(&text, &len);
	*err = replay__run(&opts, out);
	fclose(out);
	return text;
}

static void test_each_report_from_its_windows(void **state UNUSED)
{
	char *dir = make_recording(), *text, *second;
	int err;
	json_t *j;

	text = replay(dir, &err, "-n", NULL);
	assert_int_equal(err, 0);
	second = strchr(text, '\n');
	assert_non_null(second);
	*second++ = '\0';
	/* Report 1: mutex at 0x1000 by two threads; a failed condvar wait. */
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), 11);
	assert_string_equal(json_string_value(json_object_get(j, "comm")), "server");
	assert_string_equal(json_string_value(json_object_get(j, "mode")),
			    "contended");
	assert_true(json_real_value(json_object_get(j, "elapsed_s")) == 0.000001);
	assert_int_equal(json_integer_value(json_object_get(j, "start_ns")), 1000);
	assert_int_equal(json_integer_value(json_object_get(j, "end_ns")), 2000);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "sequence")), 1);
	json_decref(j);
	assert_non_null(strstr(text, "\"object_symbol\": \"queue_lock\""));
	assert_non_null(strstr(text, "\"count\": 2, \"wait_ns\": 400, "
			       "\"avg_ns\": 200, \"max_ns\": 300, \"failed\": 0, "
			       "\"failed_ns\": 0, \"futile\": 0, "
			       "\"hist\": [[64, 1], [256, 1]]"));
	assert_non_null(strstr(text, "\"count\": 0, \"wait_ns\": 50, "
			       "\"avg_ns\": null, \"max_ns\": 50, \"failed\": 1, "
			       "\"failed_ns\": 50, \"futile\": 0, "
			       "\"hist\": [[32, 1]]"));
	/* Report 2: its own waits only; nothing after it. */
	j = json_loads(second, JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "start_ns")), 2000);
	assert_int_equal(json_integer_value(json_object_get(j, "end_ns")), 3000);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 3);
	assert_int_equal(json_integer_value(json_object_get(j, "sequence")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "calibration_ns")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "unwind_stopped")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "rows_total")), 2);
	json_decref(j);
	assert_non_null(strstr(second, "\"count\": 1, \"wait_ns\": 400, "
			       "\"avg_ns\": 400, \"max_ns\": 400, \"failed\": 0, "));
	assert_non_null(strstr(second, "\"count\": 1, \"wait_ns\": 50, "
			       "\"avg_ns\": 50, \"max_ns\": 30, \"failed\": 0, "));
	assert_null(strstr(second, "999"));
	assert_non_null(strchr(second, '\n'));
	assert_string_equal(strchr(second, '\n') + 1, "");	/* two reports */
	free(text);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_cumulative_sums_windows(void **state UNUSED)
{
	char *dir = make_recording(), *text, *second;
	int err;

	text = replay(dir, &err, "--cumulative", "-n", NULL);
	assert_int_equal(err, 0);
	second = strchr(text, '\n') + 1;
	assert_non_null(strstr(second, "\"start_ns\": 1000, \"end_ns\": 3000"));
	assert_non_null(strstr(second, "\"count\": 3, \"wait_ns\": 800, "
			       "\"avg_ns\": 266, \"max_ns\": 400, \"failed\": 0, "));
	assert_non_null(strstr(second, "\"rows_total\": 3"));
	free(text);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_report_options_apply(void **state UNUSED)
{
	char *dir = make_recording(), *text;
	int err;

	text = replay(dir, &err, "-T", "-N", "1", NULL);
	assert_int_equal(err, 0);
	/* Per thread: thread 12's 300 ns wait is the first report's top row. */
	assert_non_null(strstr(text, "\"rows_total\": 3, \"notices\": [], "
			       "\"processes\": null, \"rows\": [{\"type\": "
			       "\"mutex\""));
	assert_non_null(strstr(text, "\"tid\": 12, \"owner_tid\": null, "
			       "\"count\": 1, \"wait_ns\": 300"));
	free(text);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_not_a_recording(void **state UNUSED)
{
	char *dir = recfixture_dir(), *text;
	int err;

	text = replay(dir, &err, NULL);
	assert_int_equal(err, -ENOENT);
	free(text);
	recfixture_write(dir, RECMETA_NAME, "syncprof-recording\t9\n");
	text = replay(dir, &err, NULL);
	assert_int_equal(err, -EINVAL);
	free(text);
	recfixture_rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_report_from_its_windows),
		cmocka_unit_test(test_cumulative_sums_windows),
		cmocka_unit_test(test_report_options_apply),
		cmocka_unit_test(test_not_a_recording),
	};

	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
