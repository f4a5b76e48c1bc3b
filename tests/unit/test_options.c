// SPDX-License-Identifier: GPL-2.0
/*
 * options__parse: defaults, every option's accepted and rejected values,
 * the target rules (--pid or a command, not both, not neither), where the
 * command starts, and that parsing twice in one process works (argp keeps
 * getopt state).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "locktype.h"
#include "options.h"
#include "optvalue.h"
#include "syncprof.h"

#define UNUSED __attribute__((unused))
#define MAX_ARGS 32
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A mutable argv, as main() gets it: argv[0] is "syncprof". */
struct args {
	int argc;
	char *argv[MAX_ARGS + 1];
	char text[MAX_ARGS][128];
};

static void args_vinit(struct args *a, va_list ap)
{
	const char *s;

	memset(a, 0, sizeof(*a));
	strcpy(a->text[0], "syncprof");
	a->argv[0] = a->text[0];
	a->argc = 1;
	while ((s = va_arg(ap, const char *))) {
		assert_true(a->argc < MAX_ARGS);
		assert_true(strlen(s) < sizeof(a->text[0]));
		strcpy(a->text[a->argc], s);
		a->argv[a->argc] = a->text[a->argc];
		a->argc++;
	}
	a->argv[a->argc] = NULL;
}

/* Parses "syncprof ARGS..." (NULL-terminated); a keeps the strings. */
static int parse(struct options *opts, struct args *a, ...)
{
	va_list ap;

	va_start(ap, a);
	args_vinit(a, ap);
	va_end(ap);
	return options__parse(opts, a->argc, a->argv);
}

/* Same, with stdout sent to /dev/null (for --help and friends). */
static int parse_quiet(struct options *opts, struct args *a, ...)
{
	va_list ap;
	int saved, devnull, err;

	va_start(ap, a);
	args_vinit(a, ap);
	va_end(ap);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, STDOUT_FILENO);
	err = options__parse(opts, a->argc, a->argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(devnull);
	return err;
}

/*
 * The first of values that "syncprof -p 1 OPTION VALUE" accepts, or
 * "(none)": assert_string_equal then names the value on failure.
 */
static const char *first_accepted(const char *option,
				  const char *const *values, size_t n)
{
	struct options o;
	struct args a;

	for (size_t i = 0; i < n; i++) {
		if (parse(&o, &a, "-p", "1", option, values[i], NULL) != -EINVAL)
			return values[i];
	}
	return "(none)";
}

static void test_defaults(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "--pid", "42", NULL), 0);
	assert_int_equal(o.pid, 42);
	assert_null(o.command);
	assert_true(o.duration_s == 0.0);
	assert_true(o.interval_s == 0.0);
	assert_int_equal(o.top, 10);
	assert_int_equal(o.sort, SORT_TOTAL);
	assert_true(o.coalesce);
	assert_false(o.per_thread);
	assert_false(o.cumulative);
	assert_false(o.batch);
	assert_int_equal(o.format, FORMAT_TABLE);
	assert_int_equal(o.callsite, CALLSITE_LINE);
	assert_null(o.output);
	assert_int_equal(o.map_size, 131072);
	assert_int_equal(o.mode, MODE_CONTENDED);
	assert_int_equal(o.verbosity, 0);
	assert_int_equal(o.stack_depth, 32);
	assert_int_equal(o.n_skip, 0);
	assert_false(o.help_shown);
	assert_false(o.states);
	assert_false(o.group_threads);
	assert_null(o.states_csv);
}

/*
 * --group-threads and --states-csv imply --states; CSV needs its own file
 * when --states was asked for.
 */
static void test_states_options(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--states", NULL), 0);
	assert_true(o.states);
	assert_false(o.group_threads);
	assert_int_equal(parse(&o, &a, "-p", "1", "--group-threads", NULL), 0);
	assert_true(o.states);
	assert_true(o.group_threads);
	assert_int_equal(parse(&o, &a, "-p", "1", "--states-csv", "s.csv", NULL), 0);
	assert_true(o.states);
	assert_string_equal(o.states_csv, "s.csv");
	assert_int_equal(parse(&o, &a, "-p", "1", "--states", "--format", "csv",
			       NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--states", "--format", "csv",
			       "--states-csv", "s.csv", NULL), 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--format", "csv", NULL), 0);
	assert_false(o.states);
	/* --why's own states need no file: its roots go into the profile. */
	assert_int_equal(parse(&o, &a, "-p", "1", "--why", "--format", "pprof",
			       "-o", "p.pb.gz", NULL), 0);
	assert_true(o.states);
	assert_int_equal(parse(&o, &a, "-p", "1", "--why", "--states",
			       "--format", "pprof", "-o", "p.pb.gz", NULL),
			 -EINVAL);
	/* Both modes; several processes, but not the whole machine. */
	assert_int_equal(parse(&o, &a, "-p", "1", "--mode", "full", "--why",
			       NULL), 0);
	assert_int_equal(parse(&o, &a, "--children", "--why", "--", "true",
			       NULL), 0);
	assert_true(o.why && o.states);
	assert_int_equal(parse(&o, &a, "-p", "1,2", "--why", NULL), 0);
	assert_int_equal(parse(&o, &a, "--all", "--why", NULL), -EINVAL);
	/* Served for one process (its block profile split by root), not
	   for the host. */
	assert_int_equal(parse(&o, &a, "--serve", "0", "-p", "1", "--why",
			       NULL), 0);
	assert_true(o.why && o.blame && o.states);
	assert_int_equal(parse(&o, &a, "--serve", "0", "--all", "--why",
			       NULL), -EINVAL);
}

static void test_mode(void **state UNUSED)
{
	static const char *const bad[] = { "Full", "contention", "", "all" };
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--mode", "contended", NULL), 0);
	assert_int_equal(o.mode, MODE_CONTENDED);
	assert_int_equal(parse(&o, &a, "-p", "1", "--mode=full", NULL), 0);
	assert_int_equal(o.mode, MODE_FULL);
	assert_string_equal(first_accepted("--mode", bad, 4), "(none)");
	assert_string_equal(options__mode_name(MODE_CONTENDED), "contended");
	assert_string_equal(options__mode_name(MODE_FULL), "full");
}

static void test_pid_short_and_long(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "4242", NULL), 0);
	assert_int_equal(o.pid, 4242);
	assert_int_equal(parse(&o, &a, "--pid=7", NULL), 0);
	assert_int_equal(o.pid, 7);
	assert_int_equal(parse(&o, &a, "-p2147483647", NULL), 0);
	assert_int_equal(o.pid, 2147483647);
}

static void test_pid_rejects_bad_values(void **state UNUSED)
{
	static const char *const bad[] = {
		"0", "-5", "+5", "abc", "12x", "", "2147483648",
		"99999999999999999999",
	};

	assert_string_equal(first_accepted("--pid", bad, ARRAY_SIZE(bad)),
			    "(none)");
}

static void test_several_pids(void **state UNUSED)
{
	static const char *const bad[] = { "1,", ",2", "3,,4", "5,x", "6;7" };
	struct options o;
	struct args a;

	/* A list, repeated, each once, in order; the first is o.pid. */
	assert_int_equal(parse(&o, &a, "-p", "30,10", "--pid", "20,30", NULL), 0);
	assert_int_equal(o.n_pids, 3);
	assert_int_equal(o.pids[0], 30);
	assert_int_equal(o.pids[1], 10);
	assert_int_equal(o.pids[2], 20);
	assert_int_equal(o.pid, 30);
	assert_true(options__several(&o));
	assert_int_equal(parse(&o, &a, "-p", "5", NULL), 0);
	assert_int_equal(o.n_pids, 1);
	assert_false(options__several(&o));
	assert_string_equal(first_accepted("--pid", bad, ARRAY_SIZE(bad)),
			    "(none)");
}

static void test_children_and_per_process(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "5", NULL), 0);
	assert_false(o.children);
	assert_false(o.per_process);
	assert_int_equal(parse(&o, &a, "--children", "--per-process", "--",
			       "true", NULL), 0);
	assert_true(o.children);
	assert_true(o.per_process);
	assert_true(options__several(&o));
	/* What follows one process refuses several. */
	assert_int_equal(parse(&o, &a, "--children", "--states", "-p", "5",
			       NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "5,6", "--record", "/tmp/x",
			       NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "--replay", "/tmp/x", "--children",
			       NULL), -EINVAL);
}

static void test_pid_without_value(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "--pid", NULL), -EINVAL);
}

static void test_duration_and_interval_seconds(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--duration", "2.5",
			       "--interval", "0.25", NULL), 0);
	assert_true(o.duration_s == 2.5);
	assert_true(o.interval_s == 0.25);
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "10", "-i", "1e-2",
			       NULL), 0);
	assert_true(o.duration_s == 10.0);
	assert_true(o.interval_s == 0.01);
	/* Shorter intervals would print reports in a busy loop. */
	assert_int_equal(parse(&o, &a, "-p", "1", "-i", "1e-3", NULL), -EINVAL);
	/* One rule for every duration: a unit, or seconds without one. */
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "1s", "-i", "500ms",
			       "--min-wait", "5", NULL), 0);
	assert_true(o.duration_s == 1.0);
	assert_true(o.interval_s == 0.5);
	assert_int_equal(o.min_wait_ns, 5000000000ull);
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "2m", "-i", "1.5",
			       "--min-wait", "10us", NULL), 0);
	assert_true(o.duration_s == 120.0);
	assert_true(o.interval_s == 1.5);
	assert_int_equal(o.min_wait_ns, 10000);
}

static void test_seconds_reject_bad_values(void **state UNUSED)
{
	static const char *const bad[] = {
		"0", "0.0", "-1", "-0.5", "abc", "1x", "", "inf", "-inf",
		"infinity", "nan", "NAN", "1e999", "0s", "1 s", "s", "1S",
		"-1s", "367d",
	};

	assert_string_equal(first_accepted("--duration", bad, ARRAY_SIZE(bad)),
			    "(none)");
	assert_string_equal(first_accepted("--interval", bad, ARRAY_SIZE(bad)),
			    "(none)");
}

static void test_seconds_upper_limit_is_one_year(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "31536000", NULL), 0);
	assert_true(o.duration_s == 31536000.0);
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "31536001", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "8760h", NULL), 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "-d", "8761h", NULL),
			 -EINVAL);
}

static void test_top(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--top", "25", NULL), 0);
	assert_int_equal(o.top, 25);
	assert_int_equal(parse(&o, &a, "-p", "1", "-N", "0", NULL), 0);
	assert_int_equal(o.top, 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--top", "-1", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--top", "ten", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--top", "1000001", NULL),
			 -EINVAL);
}

static void test_sort_keys(void **state UNUSED)
{
	static const struct {
		const char *name;
		enum sort_key key;
	} keys[] = {
		{ "total", SORT_TOTAL },
		{ "mean", SORT_MEAN },
		{ "max", SORT_MAX },
		{ "count", SORT_COUNT },
	};
	struct options o;
	struct args a;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		assert_int_equal(parse(&o, &a, "-p", "1", "--sort", keys[i].name,
				       NULL), 0);
		assert_int_equal(o.sort, keys[i].key);
		assert_string_equal(options__sort_name(o.sort), keys[i].name);
	}
}

static void test_sort_rejects_unknown_key(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--sort", "avg", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--sort", "Total", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--sort", "", NULL), -EINVAL);
}

/* The filters: repeatable, comma lists, durations with units. */
static void test_filters(void **state UNUSED)
{
	static const char *const bad_durations[] = {
		"5 ms", "ms", "-1ms", "1e30s", "", "10MS", "1d", "1x", "abc",
	};
	struct options o;
	struct args a;
	uint64_t ns;

	assert_int_equal(parse(&o, &a, "-p", "1", NULL), 0);
	assert_int_equal(o.n_tids, 0);
	assert_int_equal(o.types, 0);
	assert_null(o.object);
	assert_int_equal(o.min_wait_ns, 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--tid", "12", "--tid", "13,14",
			       "--type", "condvar", "--type", "rwlock-r,join",
			       "--object", "big_lock", "--min-wait", "1.5ms",
			       NULL), 0);
	assert_int_equal(o.n_tids, 3);
	assert_int_equal(o.tids[0], 12);
	assert_int_equal(o.tids[2], 14);
	assert_int_equal(o.types, (1u << SP_TYPE_CONDVAR) |
			 (1u << SP_TYPE_RWLOCK_R) | (1u << SP_TYPE_JOIN));
	assert_string_equal(o.object, "big_lock");
	assert_int_equal(o.min_wait_ns, 1500000);
	assert_int_equal(optvalue__duration_ns("500ns", &ns), 0);
	assert_int_equal(ns, 500);
	assert_int_equal(optvalue__duration_ns("10us", &ns), 0);
	assert_int_equal(ns, 10000);
	assert_int_equal(optvalue__duration_ns("2s", &ns), 0);
	assert_int_equal(ns, 2000000000);
	assert_int_equal(optvalue__duration_ns("2", &ns), 0);
	assert_int_equal(ns, 2000000000);
	assert_int_equal(optvalue__duration_ns("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(optvalue__duration_ns("1.5m", &ns), 0);
	assert_int_equal(ns, 90000000000ull);
	assert_int_equal(optvalue__duration_ns("1h", &ns), 0);
	assert_int_equal(ns, 3600000000000ull);
	assert_string_equal(first_accepted("--min-wait", bad_durations,
					   ARRAY_SIZE(bad_durations)), "(none)");
	/* A class stands for each of its types. */
	assert_int_equal(parse(&o, &a, "-p", "1", "--type", "event", NULL), 0);
	for (uint32_t t = 0; t < SP_TYPE__COUNT; t++)
		assert_true(!!(o.types & (1u << t)) ==
			    (locktype__class_of(t) == LOCK_CLASS_EVENT));
	assert_int_equal(parse(&o, &a, "-p", "1", "--type", "lock,condvar",
			       NULL), 0);
	assert_true(o.types & (1u << SP_TYPE_CONDVAR));
	assert_true(o.types & (1u << SP_TYPE_RWLOCK_W));
	assert_false(o.types & (1u << SP_TYPE_JOIN));
	assert_int_equal(parse(&o, &a, "-p", "1", "--type", "locks", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--type", "mutex,", NULL), 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--type", ",", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--tid", "0", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--tid", "1,x", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--object", "", NULL), -EINVAL);
	/* A recording was filtered when it was made. */
	assert_int_equal(parse(&o, &a, "--replay", "/tmp", "--tid", "5", NULL),
			 -EINVAL);
}

static void test_m_means_sort_by_mean(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-m", NULL), 0);
	assert_int_equal(o.sort, SORT_MEAN);
	/* The last of -s and -m wins. */
	assert_int_equal(parse(&o, &a, "-p", "1", "-m", "-s", "max", NULL), 0);
	assert_int_equal(o.sort, SORT_MAX);
}

static void test_no_coalesce_and_per_thread(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-n", NULL), 0);
	assert_false(o.coalesce);
	assert_false(o.per_thread);
	assert_int_equal(parse(&o, &a, "-p", "1", "--no-coalesce",
			       "--per-thread", NULL), 0);
	assert_false(o.coalesce);
	assert_true(o.per_thread);
	assert_int_equal(parse(&o, &a, "-p", "1", "-T", NULL), 0);
	assert_true(o.coalesce);
	assert_true(o.per_thread);
}

static void test_cumulative_requires_interval(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--cumulative", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "-c", "-d", "5", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--cumulative", "--interval",
			       "2", NULL), 0);
	assert_true(o.cumulative);
	assert_true(o.interval_s == 2.0);
}

/* --batch keeps plain reports on a terminal; alone it changes nothing. */
static void test_batch(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--batch", "-i", "1", NULL), 0);
	assert_true(o.batch);
	assert_true(o.interval_s == 1.0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--batch", NULL), 0);
	assert_true(o.batch);
	assert_int_equal(parse(&o, &a, "-p", "1", "--batch=1", NULL), -EINVAL);
}

/* --blame and --hist are switches, off by default. */
static void test_blame_and_hist(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", NULL), 0);
	assert_false(o.blame);
	assert_false(o.hist);
	assert_int_equal(parse(&o, &a, "-p", "1", "--blame", "--hist", NULL), 0);
	assert_true(o.blame);
	assert_true(o.hist);
	assert_int_equal(parse(&o, &a, "-p", "1", "--blame=1", NULL), -EINVAL);
}

/* --hold needs full mode's probes. */
static void test_hold_needs_full_mode(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--mode", "full", "--hold", NULL), 0);
	assert_true(o.hold);
	assert_int_equal(parse(&o, &a, "-p", "1", "--hold", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--hold", "--mode", "contended",
			       NULL), -EINVAL);
}

static void test_formats(void **state UNUSED)
{
	static const struct {
		const char *name;
		enum output_format format;
	} formats[] = {
		{ "table", FORMAT_TABLE },
		{ "csv", FORMAT_CSV },
		{ "json", FORMAT_JSON },
		{ "folded", FORMAT_FOLDED },
		{ "pprof", FORMAT_PPROF },
	};
	struct options o;
	struct args a;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		assert_int_equal(parse(&o, &a, "-p", "1", "-o", "x", "--format",
				       formats[i].name, NULL), 0);
		assert_int_equal(o.format, formats[i].format);
		assert_string_equal(options__format_name(o.format),
				    formats[i].name);
	}
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "xml", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "JSON", NULL), -EINVAL);
}

/* pprof is binary: to a file only. */
static void test_pprof_needs_output(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "pprof", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "pprof", "-o",
			       "lock.pb.gz", NULL), 0);
	assert_string_equal(o.output, "lock.pb.gz");
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "folded", NULL), 0);
}

/* Profiles hold every row, unless --top says otherwise. */
static void test_profiles_default_to_all_rows(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "folded", NULL), 0);
	assert_int_equal(o.top, 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "pprof", "-o", "f",
			       NULL), 0);
	assert_int_equal(o.top, 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "-N", "5", "-f", "folded",
			       NULL), 0);
	assert_int_equal(o.top, 5);
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "folded", "-N", "10",
			       NULL), 0);
	assert_int_equal(o.top, 10);
	assert_int_equal(parse(&o, &a, "-p", "1", "-f", "json", NULL), 0);
	assert_int_equal(o.top, 10);
}

static void test_stacks(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", NULL), 0);
	assert_false(o.stacks);
	assert_int_equal(parse(&o, &a, "-p", "1", "-g", NULL), 0);
	assert_true(o.stacks);
	assert_int_equal(parse(&o, &a, "-p", "1", "--stacks", NULL), 0);
	assert_true(o.stacks);
	assert_int_equal(parse(&o, &a, "-gp", "1", NULL), 0);
	assert_true(o.stacks);
	assert_int_equal(o.pid, 1);
}

static void test_callsite_styles(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--callsite", "func", NULL), 0);
	assert_int_equal(o.callsite, CALLSITE_FUNC);
	assert_int_equal(parse(&o, &a, "-p", "1", "--callsite=both", NULL), 0);
	assert_int_equal(o.callsite, CALLSITE_BOTH);
	assert_int_equal(parse(&o, &a, "-p", "1", "--callsite", "line", NULL), 0);
	assert_int_equal(o.callsite, CALLSITE_LINE);
	assert_int_equal(parse(&o, &a, "-p", "1", "--callsite", "file", NULL),
			 -EINVAL);
}

static void test_output_file(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-o", "/tmp/out.txt", NULL), 0);
	assert_string_equal(o.output, "/tmp/out.txt");
}

static void test_verbose_counts(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-vv", "-p", "1", "--verbose", NULL), 0);
	assert_int_equal(o.verbosity, 3);
}

static void test_map_size_range(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--map-size", "1", NULL), 0);
	assert_int_equal(o.map_size, 1);
	assert_int_equal(parse(&o, &a, "-p", "1", "--map-size", "4194304", NULL), 0);
	assert_int_equal(o.map_size, OPTIONS_MAX_MAP_SIZE);
	assert_int_equal(parse(&o, &a, "-p", "1", "--map-size", "0", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--map-size", "4194305", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--map-size", "-1", NULL),
			 -EINVAL);
}

static void test_stack_depth_range(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--stack-depth", "0", NULL), 0);
	assert_int_equal(o.stack_depth, 0);
	assert_int_equal(parse(&o, &a, "-p", "1", "--stack-depth", "127", NULL), 0);
	assert_int_equal(o.stack_depth, OPTIONS_MAX_STACK_DEPTH);
	assert_int_equal(parse(&o, &a, "-p", "1", "--stack-depth", "128", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--stack-depth", "-1", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--stack-depth", "8x", NULL),
			 -EINVAL);
}

static void test_skip_is_repeatable(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--skip", "qemu_mutex_*",
			       "--skip=g_mutex_lock", NULL), 0);
	assert_int_equal(o.n_skip, 2);
	assert_string_equal(o.skip[0], "qemu_mutex_*");
	assert_string_equal(o.skip[1], "g_mutex_lock");
	assert_int_equal(parse(&o, &a, "-p", "1", "--skip", "", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "--skip", NULL), -EINVAL);
}

static void test_skip_has_a_limit(void **state UNUSED)
{
	char *argv[3 + 2 * (OPTIONS_MAX_SKIP + 1)];
	struct options o;
	int argc = 0;

	argv[argc++] = "syncprof";
	argv[argc++] = "-p";
	argv[argc++] = "1";
	for (int i = 0; i < OPTIONS_MAX_SKIP; i++) {
		argv[argc++] = "--skip";
		argv[argc++] = "f";
	}
	assert_int_equal(options__parse(&o, argc, argv), 0);
	assert_int_equal(o.n_skip, OPTIONS_MAX_SKIP);
	argv[argc++] = "--skip";
	argv[argc++] = "g";
	assert_int_equal(options__parse(&o, argc, argv), -EINVAL);
}

static void test_unknown_option_rejected(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "--bogus", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "1", "-Z", NULL), -EINVAL);
}

static void test_pid_and_command_is_an_error(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "--pid", "5", "--", "sleep", "1", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "--pid", "5", "sleep", NULL), -EINVAL);
}

static void test_no_target_is_an_error(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "--top", "3", NULL), -EINVAL);
	/* A bare "--" names no command. */
	assert_int_equal(parse(&o, &a, "--", NULL), -EINVAL);
}

static void test_command_after_double_dash_keeps_its_options(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-N", "3", "--", "cmd", "-x", "--y",
			       "--pid", "9", NULL), 0);
	assert_int_equal(o.pid, 0);
	assert_int_equal(o.top, 3);
	/* opts.command points into argv, not at a copy. */
	assert_ptr_equal(o.command, &a.argv[4]);
	assert_string_equal(o.command[0], "cmd");
	assert_string_equal(o.command[1], "-x");
	assert_string_equal(o.command[2], "--y");
	assert_string_equal(o.command[3], "--pid");
	assert_string_equal(o.command[4], "9");
	assert_null(o.command[5]);
}

static void test_command_without_double_dash(void **state UNUSED)
{
	struct options o;
	struct args a;

	/* Options after the command are the command's, not syncprof's. */
	assert_int_equal(parse(&o, &a, "-m", "./server", "--port", "9000", "-n",
			       NULL), 0);
	assert_int_equal(o.sort, SORT_MEAN);
	assert_true(o.coalesce);
	assert_ptr_equal(o.command, &a.argv[2]);
	assert_string_equal(o.command[0], "./server");
	assert_string_equal(o.command[1], "--port");
	assert_string_equal(o.command[2], "9000");
	assert_string_equal(o.command[3], "-n");
	assert_null(o.command[4]);
}

static void test_command_that_looks_like_an_option(void **state UNUSED)
{
	struct options o;
	struct args a;

	/* After "--" even "-p" is the command. */
	assert_int_equal(parse(&o, &a, "--", "-p", "1", NULL), 0);
	assert_int_equal(o.pid, 0);
	assert_ptr_equal(o.command, &a.argv[2]);
	assert_string_equal(o.command[0], "-p");
	assert_string_equal(o.command[1], "1");
	assert_null(o.command[2]);
}

static void test_help_sets_help_shown(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse_quiet(&o, &a, "--help", NULL), 0);
	assert_true(o.help_shown);
	assert_int_equal(parse_quiet(&o, &a, "-h", NULL), 0);
	assert_true(o.help_shown);
	/* Help wins over what would be an error. */
	assert_int_equal(parse_quiet(&o, &a, "--pid", "1", "--help", "--", "x",
				     NULL), 0);
	assert_true(o.help_shown);
}

static void test_usage_and_version_set_help_shown(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse_quiet(&o, &a, "--usage", NULL), 0);
	assert_true(o.help_shown);
	assert_int_equal(parse_quiet(&o, &a, "--version", NULL), 0);
	assert_true(o.help_shown);
}

static void test_options_reset_between_calls(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", "-n", "-T", "-m", "-N", "3",
			       "-f", "csv", "-i", "1", "-c", "--callsite", "both",
			       "-o", "x", "--map-size", "5", "-v", NULL), 0);
	assert_int_equal(parse(&o, &a, "-p", "2", NULL), 0);
	assert_int_equal(o.pid, 2);
	assert_true(o.coalesce);
	assert_false(o.per_thread);
	assert_false(o.cumulative);
	assert_int_equal(o.sort, SORT_TOTAL);
	assert_int_equal(o.top, 10);
	assert_int_equal(o.format, FORMAT_TABLE);
	assert_int_equal(o.callsite, CALLSITE_LINE);
	assert_null(o.output);
	assert_int_equal(o.map_size, 131072);
	assert_int_equal(o.verbosity, 0);
	assert_true(o.interval_s == 0.0);
}

/*
 * argp keeps getopt state; parsing again in the same process, after a
 * "--", after a command and after an error, must read the new argv from
 * its start.
 */
static void test_repeated_calls_in_one_process(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "--", "cmd", "-x", NULL), 0);
	assert_int_equal(parse(&o, &a, "-p", "7", "-N", "4", NULL), 0);
	assert_int_equal(o.pid, 7);
	assert_int_equal(o.top, 4);
	assert_null(o.command);

	assert_int_equal(parse(&o, &a, "cmd", "-p", "3", NULL), 0);
	assert_int_equal(parse(&o, &a, "-N", "5", "--", "sleep", "1", NULL), 0);
	assert_int_equal(o.top, 5);
	assert_ptr_equal(o.command, &a.argv[4]);
	assert_string_equal(o.command[0], "sleep");

	assert_int_equal(parse(&o, &a, "-p", "1", "--bogus", "-N", "2", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, &a, "-s", "max", "-p", "11", NULL), 0);
	assert_int_equal(o.sort, SORT_MAX);
	assert_int_equal(o.pid, 11);

	assert_int_equal(parse(&o, &a, "-p", "1", "--top", NULL), -EINVAL);
	assert_int_equal(parse(&o, &a, "-p", "12", NULL), 0);
	assert_int_equal(o.pid, 12);
}

static void test_ring_size(void **state UNUSED)
{
	static const struct {
		const char *arg;
		uint32_t bytes;
	} good[] = {
		{ "4096", 4096 }, { "8192", 8192 }, { "64K", 65536 },
		{ "64k", 65536 }, { "8M", 8u << 20 }, { "8MiB", 8u << 20 },
		{ "1G", 1u << 30 }, { "1048576", 1u << 20 },
	};
	static const char *const bad[] = {
		"5000", "0", "100", "2048", "2G", "4096X", "-4096", "", "K",
		"3M", "1.5M", "0x1000", "8MX", "99999999999999999999",
	};
	struct options o;
	struct args a;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(parse(&o, &a, "-p", "1", "--record", "d",
				       "--ring-size", good[i].arg, NULL), 0);
		assert_int_equal(o.ring_size, good[i].bytes);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(parse(&o, &a, "-p", "1", "--record", "d",
				       "--ring-size", bad[i], NULL), -EINVAL);
	/* The page size is the floor. */
	uint32_t bytes;

	assert_int_equal(options__parse_size("8K", 16384, &bytes), -EINVAL);
	assert_int_equal(options__parse_size("16K", 16384, &bytes), 0);
	assert_int_equal(bytes, 16384);
}

static void test_record_and_chrome(void **state UNUSED)
{
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "-p", "1", NULL), 0);
	assert_null(o.record_dir);
	assert_null(o.chrome);
	assert_false(options__recording(&o));
	assert_int_equal(o.ring_size, 8u << 20);
	assert_int_equal(parse(&o, &a, "-p", "1", "--record", "out", NULL), 0);
	assert_string_equal(o.record_dir, "out");
	assert_true(options__recording(&o));
	assert_int_equal(parse(&o, &a, "--chrome", "t.json", "--", "ls", NULL), 0);
	assert_string_equal(o.chrome, "t.json");
	assert_true(options__recording(&o));
	/* The ring only exists when recording. */
	assert_int_equal(parse(&o, &a, "-p", "1", "--ring-size", "64K", NULL),
			 -EINVAL);
}

static void test_replay(void **state UNUSED)
{
	static const char *const conflicts[][3] = {
		{ "-p", "1", NULL }, { "--record", "d", NULL },
		{ "--ring-size", "64K", NULL }, { "--duration", "1", NULL },
		{ "--interval", "1", NULL }, { "--batch", NULL, NULL },
		{ "--mode", "full", NULL }, { "--map-size", "10", NULL },
		{ "--", "ls", NULL }, { "-g", NULL, NULL },
		{ "--format", "folded", NULL },
	};
	struct options o;
	struct args a;

	assert_int_equal(parse(&o, &a, "--replay", "rec", NULL), 0);
	assert_string_equal(o.replay_dir, "rec");
	assert_false(options__recording(&o));
	assert_int_equal(parse(&o, &a, "--replay", "rec", "--chrome", "t.json",
			       "-f", "json", "-T", "-n", "-N", "5", "-s", "mean",
			       "--cumulative", "-o", "x", "--callsite", "func",
			       NULL), 0);
	assert_false(options__recording(&o));	/* converts, records nothing */
	assert_true(o.cumulative);
	for (size_t i = 0; i < ARRAY_SIZE(conflicts); i++) {
		if (conflicts[i][1])
			assert_int_equal(parse(&o, &a, "--replay", "rec",
					       conflicts[i][0], conflicts[i][1],
					       NULL), -EINVAL);
		else
			assert_int_equal(parse(&o, &a, "--replay", "rec",
					       conflicts[i][0], NULL), -EINVAL);
	}
}

static void test_name_functions_out_of_range(void **state UNUSED)
{
	assert_string_equal(options__sort_name((enum sort_key)4), "?");
	assert_string_equal(options__format_name((enum output_format)5), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_pid_short_and_long),
		cmocka_unit_test(test_pid_rejects_bad_values),
		cmocka_unit_test(test_pid_without_value),
		cmocka_unit_test(test_several_pids),
		cmocka_unit_test(test_children_and_per_process),
		cmocka_unit_test(test_duration_and_interval_seconds),
		cmocka_unit_test(test_seconds_reject_bad_values),
		cmocka_unit_test(test_seconds_upper_limit_is_one_year),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_sort_keys),
		cmocka_unit_test(test_sort_rejects_unknown_key),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_m_means_sort_by_mean),
		cmocka_unit_test(test_no_coalesce_and_per_thread),
		cmocka_unit_test(test_cumulative_requires_interval),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_blame_and_hist),
		cmocka_unit_test(test_hold_needs_full_mode),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_pprof_needs_output),
		cmocka_unit_test(test_profiles_default_to_all_rows),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_callsite_styles),
		cmocka_unit_test(test_output_file),
		cmocka_unit_test(test_verbose_counts),
		cmocka_unit_test(test_map_size_range),
		cmocka_unit_test(test_stack_depth_range),
		cmocka_unit_test(test_skip_is_repeatable),
		cmocka_unit_test(test_skip_has_a_limit),
		cmocka_unit_test(test_unknown_option_rejected),
		cmocka_unit_test(test_pid_and_command_is_an_error),
		cmocka_unit_test(test_no_target_is_an_error),
		cmocka_unit_test(test_command_after_double_dash_keeps_its_options),
		cmocka_unit_test(test_command_without_double_dash),
		cmocka_unit_test(test_command_that_looks_like_an_option),
		cmocka_unit_test(test_help_sets_help_shown),
		cmocka_unit_test(test_usage_and_version_set_help_shown),
		cmocka_unit_test(test_options_reset_between_calls),
		cmocka_unit_test(test_repeated_calls_in_one_process),
		cmocka_unit_test(test_ring_size),
		cmocka_unit_test(test_record_and_chrome),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_name_functions_out_of_range),
		cmocka_unit_test(test_states_options),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
