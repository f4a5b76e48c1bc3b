// SPDX-License-Identifier: GPL-2.0
/*
 * format: QSP's table byte for byte, the call-site text, one-line JSON,
 * CSV, and sanitizing strings that come from the target.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "format.h"
#include "names.h"
#include "stackfix.h"
#include "text.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Rules: 79 dashes is QSP's table with the narrowest call-site column (9);
 * wider columns and the Thread column add to it.
 */
#define RULE105 "---------------------------------------------------------------------------------------------------------\n"
#define RULE79 "-------------------------------------------------------------------------------\n"
#define RULE115 "-------------------------------------------------------------------------------------------------------------------\n"
#define RULE89 "-----------------------------------------------------------------------------------------\n"
#define RULE119 "-----------------------------------------------------------------------------------------------------------------------\n"
#define RULE93 "---------------------------------------------------------------------------------------------\n"

static const struct format_meta meta = {
	.pid = 123,
	.comm = "qemu",
	.mode = "full",
	.elapsed_s = 10.0,
	.start_ns = 5061234000000ull,
	.end_ns = 5071234000000ull,
	.dropped = 0,
	.sequence = 1,
};

static struct report_row row(uint32_t type, uint64_t object, uint32_t n_objects,
			     uint64_t callsite, int64_t tid, uint64_t count,
			     uint64_t wait_ns, uint64_t max_ns, uint64_t failed)
{
	return (struct report_row){
		.type = type,
		.object = object,
		.n_objects = n_objects,
		.callsite = callsite,
		.tid = tid,
		.owner_tid = REPORT_NO_TID,
		.count = count,
		.wait_ns = wait_ns,
		.max_ns = max_ns,
		.failed = failed,
	};
}

static struct row_names file_line(const char *file, unsigned int line)
{
	return (struct row_names){
		.callsite = { .file = file, .line = line },
	};
}

/* Prints one report into a string; the caller frees it. */
static char *render_style(enum output_format format, enum callsite_style style,
			  const struct format_meta *m, struct report_row *rows,
			  size_t count, size_t total,
			  const struct row_names *names)
{
	/* As report__build leaves them: every row, those below --top too
	   (here mutexes, zeroed: no hidden event rows). */
	struct report_row *all = calloc(total > count ? total : count,
					sizeof(*all));
	struct report_rows r = { .rows = all, .count = count, .total = total };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	const struct format_config cfg = { .format = format, .callsite = style };

	assert_non_null(all);
	if (count)
		memcpy(all, rows, count * sizeof(*all));
	assert_non_null(f);
	assert_int_equal(format__report(f, &cfg, m, &r, names), 0);
	assert_int_equal(fclose(f), 0);
	free(all);
	return buf;
}

/* The default style: file:line, as QSP. */
static char *render(enum output_format format, const struct format_meta *m,
		    struct report_row *rows, size_t count, size_t total,
		    const struct row_names *names)
{
	return render_style(format, CALLSITE_LINE, m, rows, count, total, names);
}

static char *callsite_text_style(const struct symbol_info *info,
				 uint64_t addr, enum callsite_style style,
				 size_t strip)
{
	static char buf[512];

	memset(buf, 'Z', sizeof(buf));
	names__callsite_text(info, addr, style, strip, buf, sizeof(buf));
	return buf;
}

static char *callsite_text(const struct symbol_info *info, uint64_t addr)
{
	return callsite_text_style(info, addr, CALLSITE_LINE, 0);
}

static const char *sanitize(const char *in, size_t len)
{
	static char buf[256];

	assert_true(len <= sizeof(buf));
	memset(buf, 'Z', sizeof(buf));
	text__sanitize(in, buf, len);
	return buf;
}

/* -- JSON, read back with jansson. -- */

/*
 * One JSON object on exactly one line, parsed.  jansson rejects a lone
 * surrogate: a file name's byte that is not UTF-8 (\udcXX, checked as
 * text by the tests that make one) is read as U+00XX here.
 */
static json_t *parse_json_line(const char *s)
{
	size_t len = strlen(s);
	char *copy = strdup(s), *p;
	json_error_t error;
	json_t *root;

	assert_non_null(copy);
	assert_true(len > 0 && s[len - 1] == '\n');
	assert_ptr_equal(strchr(s, '\n'), s + len - 1);
	while ((p = strstr(copy, "\\udc")))
		memcpy(p, "\\u00", 4);
	root = json_loads(copy, 0, &error);
	if (!root)
		fail_msg("invalid JSON at %d: %s: %s", error.position, error.text,
			 s);
	free(copy);
	assert_true(json_is_object(root));
	return root;
}

/* A member by path: "rows/0/callsite/file" (numbers index arrays). */
static json_t *jpath(json_t *v, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, "/", &save); v && k;
	     k = strtok_r(NULL, "/", &save)) {
		if (json_is_array(v))
			v = json_array_get(v, strtoul(k, NULL, 10));
		else
			v = json_object_get(v, k);
	}
	return v;
}

static void json_int_at(json_t *root, const char *path, long long want,
			const char *file, int line)
{
	json_t *v = jpath(root, path);

	if (json_is_integer(v) && json_integer_value(v) == want)
		return;
	print_error("%s: want %lld, have %s\n", path, want,
		    v ? (json_is_integer(v) ? "another number" : "another type")
		      : "no such key");
	_fail(file, line);
}

static void json_str_at(json_t *root, const char *path, const char *want,
			const char *file, int line)
{
	json_t *v = jpath(root, path);

	if (json_is_string(v) && !strcmp(json_string_value(v), want))
		return;
	print_error("%s: want \"%s\", have %s\n", path, want,
		    json_is_string(v) ? json_string_value(v) : "not a string");
	_fail(file, line);
}

static void json_null_at(json_t *root, const char *path, const char *file,
			 int line)
{
	json_t *v = jpath(root, path);

	if (json_is_null(v))
		return;
	print_error("%s: want null, have %s\n", path, v ? "a value" : "no key");
	_fail(file, line);
}

static size_t json_len_at(json_t *root, const char *path)
{
	json_t *v = jpath(root, path);

	assert_true(json_is_array(v));
	return json_array_size(v);
}

#define assert_json_int(root, path, want) \
	json_int_at((root), (path), (want), __FILE__, __LINE__)
#define assert_json_str(root, path, want) \
	json_str_at((root), (path), (want), __FILE__, __LINE__)
#define assert_json_null(root, path) \
	json_null_at((root), (path), __FILE__, __LINE__)

/* String checks that report the caller's line on failure. */
static void contains_at(const char *haystack, const char *needle, bool want,
			const char *file, int line)
{
	if (!strstr(haystack, needle) == !want)
		return;
	print_error("'%s' %s in: %s\n", needle,
		    want ? "not found" : "unexpectedly found", haystack);
	_fail(file, line);
}

static void starts_with_at(const char *s, const char *prefix,
			   const char *file, int line)
{
	if (!strncmp(s, prefix, strlen(prefix)))
		return;
	print_error("'%s' does not start with '%s'\n", s, prefix);
	_fail(file, line);
}

#define assert_contains(s, needle) \
	contains_at((s), (needle), true, __FILE__, __LINE__)
#define assert_not_contains(s, needle) \
	contains_at((s), (needle), false, __FILE__, __LINE__)
#define assert_starts_with(s, prefix) \
	starts_with_at((s), (prefix), __FILE__, __LINE__)

/* -- The table. -- */

static void test_table_qsp_example(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x56189610b2e0ull, 1, 0x5618950a1234ull,
		    REPORT_NO_TID, 12346237, 253110000, 900, 0),
		row(SP_TYPE_CONDVAR, 0x5618970cf220ull, 1, 0x5618950b0000ull,
		    REPORT_NO_TID, 2, 55061560, 40000000, 0),
		row(SP_TYPE_REC_MUTEX, 0x5618970d0000ull, 2, 0x5618950c0000ull,
		    REPORT_NO_TID, 493, 16000, 80, 0),
	};
	const struct row_names names[] = {
		file_line("accel/tcg/cputlb.c", 1365),
		file_line("softmmu/cpus.c", 423),
		file_line("util/async.c", 682),
	};
	char *out = render(FORMAT_TABLE, &meta, rows, 3, 5, names);

	/* The rows of QSP's own report (docs: anchors.md), "BQL " aside. */
	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 3/5  dropped 0\n"
		"Type               Object  Call site                Wait Time (s)         Count  Average (us)      Max (us)      Failed\n"
		RULE119
		"mutex      0x56189610b2e0  accel/tcg/cputlb.c:1365        0.25311      12346237          0.02          0.90           0\n"
		"condvar    0x5618970cf220  softmmu/cpus.c:423             0.05506             2      27530.78      40000.00           0\n"
		"rec_mutex  [           2]  util/async.c:682               0.00002           493          0.03          0.08           0\n"
		RULE119);
	free(out);
}

/*
 * Futile wakeups: a column after Failed once a row has some (0 where the
 * others have none); JSON's "futile" and CSV's last field on every row.
 */
static void test_futile_wakeups(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 4000, 1500, 0),
		row(SP_TYPE_CONDVAR, 0x2000, 1, 0x500, REPORT_NO_TID, 9, 9000, 2000, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1),
					   file_line("a.c", 2) };
	char *out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);
	json_t *j;

	assert_null(strstr(out, "Futile"));
	free(out);
	rows[1].futile = 7;
	out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);
	assert_non_null(strstr(out, "      Failed      Futile\n"));
	assert_non_null(strstr(out, "           0           0\n"));
	assert_non_null(strstr(out, "           0           7\n"));
	free(out);
	out = render(FORMAT_JSON, &meta, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_json_int(j, "rows/0/futile", 0);
	assert_json_int(j, "rows/1/futile", 7);
	json_decref(j);
	free(out);
	out = render(FORMAT_CSV, &meta, rows, 2, 2, names);
	assert_non_null(strstr(out, ",lock,0,,\n"));
	assert_non_null(strstr(out, ",event,7,,\n"));
	free(out);
}

/* A window without waits is one line, not an empty table. */
static void test_table_empty(void **state UNUSED)
{
	char *out = render(FORMAT_TABLE, &meta, NULL, 0, 0, NULL);

	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 0/0  dropped 0  no waits\n");
	free(out);
}

/*
 * Each report says when its window ended by the wall clock: ISO 8601,
 * local time with its offset, at the end of the header line and in JSON.
 */
static void test_wall_clock_time(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	struct format_meta m = meta;
	char buf[64], *out;
	const char *tz = getenv("TZ");
	char *saved = tz ? strdup(tz) : NULL;
	json_t *j;

	setenv("TZ", "UTC", 1);
	tzset();
	format__wall_text(1763912472345678901ull, buf, sizeof(buf));
	assert_string_equal(buf, "2025-11-23T15:41:12.345+00:00");
	setenv("TZ", "EST5", 1);
	tzset();
	format__wall_text(1763912472345678901ull, buf, sizeof(buf));
	assert_string_equal(buf, "2025-11-23T10:41:12.345-05:00");
	format__wall_text(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	m.wall_ns = 1763912472345678901ull;
	out = render(FORMAT_TABLE, &m, rows, 1, 1, names);
	assert_starts_with(out, "syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  "
				"rows 1/1  dropped 0  at 2025-11-23T10:41:12.345-05:00\n"
				"Type ");
	free(out);
	out = render(FORMAT_TABLE, &m, NULL, 0, 0, NULL);
	assert_string_equal(out, "syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  "
				 "rows 0/0  dropped 0  at 2025-11-23T10:41:12.345-05:00  no waits\n");
	free(out);
	out = render(FORMAT_JSON, &m, NULL, 0, 0, NULL);
	j = parse_json_line(out);
	assert_json_str(j, "time", "2025-11-23T10:41:12.345-05:00");
	assert_json_int(j, "time_ns", 1763912472345678901ll);
	json_decref(j);
	free(out);
	/* Not known (a replayed recording): null, and not in the table. */
	out = render(FORMAT_JSON, &meta, NULL, 0, 0, NULL);
	j = parse_json_line(out);
	assert_json_null(j, "time");
	assert_json_null(j, "time_ns");
	json_decref(j);
	free(out);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	free(saved);
	tzset();
}

static void test_table_says_drops_loudly(void **state UNUSED)
{
	struct format_meta m = meta;
	char *out;

	m.dropped = 12;
	m.drops = (struct format_drops){ .map_full = 10, .skipped = 2 };
	m.map_size = 4096;
	out = render(FORMAT_TABLE, &m, NULL, 0, 0, NULL);
	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 0/0  dropped 12  no waits\n"
		"DROPPED 12 events: 10 new rows beyond the kernel's row table "
		"(--map-size 4096: raise it); 2 probe runs the kernel skipped "
		"(another BPF program was running on the CPU); the counts are "
		"short by these.\n");
	free(out);
}

static void test_drops_text_names_every_cause(void **state UNUSED)
{
	struct format_drops d = { .map_full = 1, .no_storage = 2, .nested = 3,
				  .skipped = 4, .ring = 5 };
	char buf[512];

	assert_int_equal(format__drops_total(&d), 15);
	format__drops_text(&d, 64, buf, sizeof(buf));
	assert_contains(buf, "DROPPED 15 events");
	assert_contains(buf, "the counts are short by these.");
	assert_contains(buf, "5 waits are counted but left out of the recording");
	assert_contains(buf, "1 new rows beyond the kernel's row table (--map-size 64: raise it)");
	assert_contains(buf, "2 calls without per-thread state");
	assert_contains(buf, "3 lock calls nested more than 4 deep");
	assert_contains(buf, "4 probe runs the kernel skipped");
	d = (struct format_drops){ 0 };
	format__drops_text(&d, 64, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* A short buffer is cut, not overrun. */
	d.map_full = 5;
	format__drops_text(&d, 64, buf, 20);
	assert_int_equal(strlen(buf), 19);
}

static void test_json_drop_causes(void **state UNUSED)
{
	struct format_meta m = meta;
	char *out;
	json_t *j;

	m.dropped = 3;
	m.drops = (struct format_drops){ .map_full = 1, .nested = 2 };
	m.map_size = 131072;
	out = render(FORMAT_JSON, &m, NULL, 0, 0, NULL);
	j = parse_json_line(out);
	assert_json_int(j, "dropped", 3);
	assert_json_int(j, "dropped_causes/map_full", 1);
	assert_json_int(j, "dropped_causes/no_storage", 0);
	assert_json_int(j, "dropped_causes/nested", 2);
	assert_json_int(j, "dropped_causes/skipped", 0);
	assert_json_int(j, "dropped_causes/ring", 0);
	assert_json_int(j, "map_size", 131072);
	json_decref(j);
	free(out);
}

static void test_table_short_callsites_keep_title_width(void **state UNUSED)
{
	/* "f.c:1" is narrower than "Call site": the column stays 9 wide. */
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 2000, 900, 0),
	};
	const struct row_names names[] = { file_line("f.c", 1) };
	char *out = render(FORMAT_TABLE, &meta, rows, 1, 1, names);

	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 1/1  dropped 0\n"
		"Type               Object  Call site  Wait Time (s)         Count  Average (us)      Max (us)      Failed\n"
		RULE105
		"mutex    " "  " "        0x1000" "  " "f.c:1    " "  "
		"      0.00000" "  " "           4" "  " "        0.50" "  " "        0.90" "  " "         0\n"
		RULE105);
	free(out);
}

static void test_table_per_thread_column(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x55d0c0de1040ull, 1, 0x400, 4242, 5,
		    1000000000, 201000000, 0),
		row(SP_TYPE_CONDVAR, 0x55d0c0de2000ull, 3, 0x500, 17, 1,
		    1500, 1500, 0),
	};
	const struct row_names names[] = {
		file_line("w.c", 10), file_line("sleep.c", 2),
	};
	char *out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);

	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 2/2  dropped 0\n"
		"Type               Object  Call site  Wait Time (s)         Count  Average (us)      Max (us)      Failed    Thread\n"
		RULE115
		"mutex    " "  " "0x55d0c0de1040" "  " "w.c:10   " "  "
		"      1.00000" "  " "           5" "  " "   200000.00" "  " "   201000.00" "  " "         0" "  " "    4242\n"
		/* The rows after the lock rows wait for events. */
		"Waiting for events, not for a lock (condvar waits, joins, "
		"barriers, parks, off-CPU waits):\n"
		"condvar  " "  " "[           3]" "  " "sleep.c:2" "  "
		"      0.00000" "  " "           1" "  " "        1.50" "  " "        1.50" "  " "         0" "  " "      17\n"
		RULE115);
	free(out);
}

static void test_table_object_symbols(void **state UNUSED)
{
	/*
	 * A known symbol replaces the address; the column grows to the
	 * widest (28 here, rule 79 + 14) and stays right-aligned; a
	 * coalesced row shows [N], not a symbol.
	 */
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 1000, 1000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 1, 1000, 1000, 0),
		row(SP_TYPE_MUTEX, 0x3000, 2, 0x600, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	struct row_names names[] = {
		file_line("a.c", 1), file_line("b.c", 2), file_line("c.c", 3),
	};
	char *out;

	names[0].object_symbol = "big_lock";
	names[1].object_symbol = "a_rather_long_lock_name+0x10";
	names[2].object_symbol = "not_shown";
	out = render(FORMAT_TABLE, &meta, rows, 3, 3, names);
	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 3/3  dropped 0\n"
		"Type                             Object  Call site  Wait Time (s)         Count  Average (us)      Max (us)      Failed\n"
		RULE119
		"mutex    " "  " "                    big_lock" "  " "a.c:1    " "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00" "  " "         0\n"
		"mutex    " "  " "a_rather_long_lock_name+0x10" "  " "b.c:2    " "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00" "  " "         0\n"
		"mutex    " "  " "              [           2]" "  " "c.c:3    " "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00" "  " "         0\n"
		RULE119);
	free(out);
}

static void test_table_strips_common_source_root(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 2000, 1000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = {
		file_line("/home/u/proj/src/a.c", 10),
		file_line("/home/u/proj/lib/b.c", 20),
	};
	char *out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);
	json_t *j;

	assert_contains(out, "        0x1000  src/a.c:10  ");
	assert_contains(out, "        0x2000  lib/b.c:20  ");
	assert_not_contains(out, "/home/u/proj");
	free(out);
	/* JSON and CSV keep the full path. */
	out = render(FORMAT_JSON, &meta, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_json_str(j, "rows/0/callsite/file", "/home/u/proj/src/a.c");
	json_decref(j);
	free(out);
	out = render(FORMAT_CSV, &meta, rows, 2, 2, names);
	assert_contains(out, ",/home/u/proj/lib/b.c,20,");
	free(out);
}

/* One source file: its directory is the common root, the table shows its name. */
static void test_table_single_file_shows_its_name(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 2000, 1000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = {
		file_line("/home/u/proj/src/a.c", 10),
		file_line("/home/u/proj/src/a.c", 20),
	};
	char *out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);

	assert_contains(out, "  a.c:10  ");
	assert_contains(out, "  a.c:20  ");
	assert_not_contains(out, "/home/u/proj");
	free(out);
}

static void test_table_zero_count_average(void **state UNUSED)
{
	/* Only failed trylocks: time, no count, no average: '-'. */
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 0, 2500000000ull,
		    2000000000ull, 7),
	};
	const struct row_names names[] = { file_line("a.c", 9) };
	char *out = render(FORMAT_TABLE, &meta, rows, 1, 1, names);

	assert_contains(out,
		"mutex    " "  " "        0x1000" "  " "a.c:9    " "  "
		"      2.50000" "  " "           0" "  " "           -" "  "
		"  2000000.00" "  " "         7\n");
	free(out);
}

static void test_table_pads_by_display_width(void **state UNUSED)
{
	/*
	 * "función.c:12" is 12 columns but 13 bytes: the column is 12
	 * wide, and the ASCII row is padded to 12 columns, not 13 bytes.
	 */
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 1000, 1000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = {
		file_line("funci\xc3\xb3n.c", 12),
		file_line("ab.c", 3),
	};
	char *out = render(FORMAT_TABLE, &meta, rows, 2, 2, names);

	assert_string_equal(out,
		"syncprof: pid 123 (qemu)  mode full  elapsed 10.00 s  rows 2/2  dropped 0\n"
		"Type               Object  Call site     Wait Time (s)         Count  Average (us)      Max (us)      Failed\n"
		"------------------------------------------------------------------------------------------------------------\n"
		"mutex    " "  " "        0x1000" "  " "funci\xc3\xb3n.c:12" "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00" "  " "         0\n"
		"mutex    " "  " "        0x2000" "  " "ab.c:3      " "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00" "  " "         0\n"
		"------------------------------------------------------------------------------------------------------------\n");
	free(out);
}

static void test_table_large_values(void **state UNUSED)
{
	/* 18446744073 s does not fit 13 columns; the row grows, nothing is cut. */
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, UINT64_MAX, 1, 0x400, REPORT_NO_TID,
		    999999999999ull, UINT64_MAX, UINT64_MAX, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	char *out = render(FORMAT_TABLE, &meta, rows, 1, 1, names);

	assert_contains(out,
		"mutex    " "  " "0xffffffffffffffff" "  " "a.c:1    " "  "
		"18446744073.70955" "  " "999999999999" "  " "    18446.74" "  " "18446744073709552.00" "  " "         0\n");
	free(out);
}

static void test_table_sanitizes_names(void **state UNUSED)
{
	struct format_meta m = meta;
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = {
		{ .callsite = { .function = "evil\x1b[2J\n" } },
	};
	char *out;

	m.comm = "a\x1b]0;t\x07";
	out = render(FORMAT_TABLE, &m, rows, 1, 1, names);
	assert_contains(out, "syncprof: pid 123 (a?]0;t?)  mode full");
	assert_contains(out, "  evil?[2J?+0x0  ");
	assert_not_contains(out, "\x1b");
	assert_not_contains(out, "\x07");
	free(out);
}

static void test_table_summary_without_comm(void **state UNUSED)
{
	struct format_meta m = meta;
	char *out;

	m.comm = NULL;
	m.pid = 4242;
	m.mode = "contended";
	m.elapsed_s = 0.5;
	m.dropped = 17;
	out = render(FORMAT_TABLE, &m, NULL, 0, 0, NULL);
	assert_starts_with(out,
		"syncprof: pid 4242 (?)  mode contended  elapsed 0.50 s  rows 0/0  dropped 17  no waits\n");
	free(out);
}

/* -- Call-site text. -- */

static void test_callsite_file_and_line(void **state UNUSED)
{
	struct symbol_info info = {
		.module = "/usr/bin/x", .module_offset = 0x1234,
		.function = "waiter", .file = "src/x.c", .line = 42,
	};

	assert_string_equal(callsite_text(&info, 0x55d0c0a01234ull), "src/x.c:42");
}

static void test_callsite_function_when_no_line(void **state UNUSED)
{
	struct symbol_info info = {
		.module = "/usr/bin/x", .module_offset = 0x1234,
		.function = "waiter", .function_offset = 0x1c,
		.file = "src/x.c", .line = 0,
	};

	assert_string_equal(callsite_text(&info, 0x55d0c0a01234ull), "waiter+0x1c");
	info.file = NULL;
	info.line = 42;
	assert_string_equal(callsite_text(&info, 0x55d0c0a01234ull), "waiter+0x1c");
}

static void test_callsite_style_func(void **state UNUSED)
{
	struct symbol_info info = {
		.module = "/usr/bin/x", .module_offset = 0x1234,
		.function = "waiter", .function_offset = 0x1c,
		.file = "src/x.c", .line = 42,
	};

	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_FUNC, 0),
			    "waiter+0x1c");
	/* No function: file:line is still better than an offset. */
	info.function = NULL;
	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_FUNC, 0),
			    "src/x.c:42");
}

static void test_callsite_style_both(void **state UNUSED)
{
	struct symbol_info info = {
		.module = "/usr/bin/x", .module_offset = 0x1234,
		.function = "waiter", .function_offset = 0x1c,
		.file = "src/x.c", .line = 42,
	};

	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_BOTH, 0),
			    "waiter (src/x.c:42)");
	info.function = NULL;
	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_BOTH, 0),
			    "src/x.c:42");
	info.function = "waiter";
	info.line = 0;
	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_BOTH, 0),
			    "waiter+0x1c");
}

static void test_callsite_strip_source_root(void **state UNUSED)
{
	struct symbol_info info = {
		.function = "waiter", .file = "/home/u/proj/src/x.c", .line = 42,
	};

	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_LINE, 13),
			    "src/x.c:42");
	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_BOTH, 13),
			    "waiter (src/x.c:42)");
	/* Never the whole name. */
	assert_string_equal(callsite_text_style(&info, 0, CALLSITE_LINE, 20),
			    "/home/u/proj/src/x.c:42");
}

static void test_callsite_module_offset(void **state UNUSED)
{
	struct symbol_info info = {
		.module = "/usr/lib/x86_64-linux-gnu/libfoo.so.1",
		.module_offset = 0x1a2b3c,
	};

	assert_string_equal(callsite_text(&info, 0x7f0000001234ull),
			    "libfoo.so.1+0x1a2b3c");
	info.module = "app";
	info.module_offset = 0;
	assert_string_equal(callsite_text(&info, 0x1234), "app+0x0");
}

static void test_callsite_address_when_nothing_known(void **state UNUSED)
{
	struct symbol_info info = { 0 };

	assert_string_equal(callsite_text(&info, 0x55d0c0a01234ull),
			    "0x55d0c0a01234");
	assert_string_equal(callsite_text(&info, 0), "0x0");
}

static void test_callsite_truncates_to_buffer(void **state UNUSED)
{
	struct symbol_info info = { .file = "src/x.c", .line = 42 };
	char buf[8];

	names__callsite_text(&info, 0, CALLSITE_LINE, 0, buf, sizeof(buf));
	assert_string_equal(buf, "src/x.c");
}

/* -- JSON. -- */

static void test_json_design_example(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x55d0c0de1040ull, 1, 0x55d0c0a01234ull,
		    REPORT_NO_TID, 5, 1000000000, 201000000, 0),
	};
	const struct row_names names[] = {
		{
			.callsite = {
				.module = "/usr/bin/x", .module_offset = 0x1234,
				.function = "waiter", .file = "src/x.c",
				.line = 42,
			},
			.object_symbol = "big_lock",
		},
	};
	char *out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	json_t *j = parse_json_line(out);

	/* One line, ", " and ": " between items, as DESIGN.md shows it. */
	assert_starts_with(out, "{\"schema\": 1, \"pid\": 123, \"comm\": \"qemu\", "
				"\"mode\": \"full\", ");
	assert_json_int(j, "schema", 1);
	assert_json_int(j, "pid", 123);
	assert_json_str(j, "comm", "qemu");
	assert_json_str(j, "mode", "full");
	assert_true(json_real_value(jpath(j, "elapsed_s")) == 10.0);
	assert_json_int(j, "start_ns", 5061234000000ll);
	assert_json_int(j, "end_ns", 5071234000000ll);
	assert_json_int(j, "dropped", 0);
	assert_int_equal(json_len_at(j, "rows"), 1);
	assert_json_str(j, "rows/0/type", "mutex");
	assert_json_str(j, "rows/0/object", "0x55d0c0de1040");
	assert_json_int(j, "rows/0/objects", 1);
	assert_json_str(j, "rows/0/object_symbol", "big_lock");
	assert_json_str(j, "rows/0/callsite/address", "0x55d0c0a01234");
	assert_json_str(j, "rows/0/callsite/module", "/usr/bin/x");
	assert_json_str(j, "rows/0/callsite/offset", "0x1234");
	assert_json_str(j, "rows/0/callsite/function", "waiter");
	assert_json_str(j, "rows/0/callsite/file", "src/x.c");
	assert_json_int(j, "rows/0/callsite/line", 42);
	assert_json_null(j, "rows/0/tid");
	assert_json_null(j, "rows/0/owner_tid");
	assert_json_int(j, "rows/0/count", 5);
	assert_json_int(j, "rows/0/wait_ns", 1000000000);
	assert_json_int(j, "rows/0/avg_ns", 200000000);
	assert_json_int(j, "rows/0/max_ns", 201000000);
	json_decref(j);
	free(out);
}

/*
 * Every key in every report: what an option adds is null without it, so
 * a report's keys and a row's keys are the same whatever was asked.
 */
static void keys_of(json_t *o, char *buf, size_t len)
{
	const char *key;
	json_t *v;
	size_t at = 0;

	buf[0] = '\0';
	json_object_foreach(o, key, v)
		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s,",
				       key);
	(void)v;
}

static void test_json_same_keys_whatever_is_asked(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 4000, 1500, 0),
	};
	struct report_row split[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, 42, 4, 4000, 1500, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	struct report_rows blame = { .rows = rows, .count = 1, .total = 1 };
	struct states_report states = { .start_ns = 0, .end_ns = 1 };
	struct format_meta m = meta;
	char plain_keys[1024], plain_row[1024], keys[1024], row_keys[1024];
	char *out;
	json_t *j;

	out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	j = parse_json_line(out);
	keys_of(j, plain_keys, sizeof(plain_keys));
	keys_of(jpath(j, "rows/0"), plain_row, sizeof(plain_row));
	assert_contains(plain_keys, "schema,");
	assert_contains(plain_keys, "threads,sched_missed,blame_total,blame,"
			"why_chains_cut,why_dropped,lock_order,"
			"lock_order_lost,waiting,");
	assert_contains(plain_row, "stacks,why,");
	assert_contains(plain_row, "owner_tid,");
	assert_contains(plain_row, "failed_ns,futile,hist,");
	assert_contains(plain_row, "holds,hold_ns,hold_avg_ns,hold_max_ns,stacks,");
	assert_json_null(j, "threads");
	assert_json_null(j, "sched_missed");
	assert_json_null(j, "blame");
	assert_json_null(j, "blame_total");
	assert_json_null(j, "lock_order");
	assert_json_null(j, "lock_order_lost");
	assert_json_null(j, "waiting");
	assert_json_null(j, "what_if");
	assert_json_null(j, "rows/0/owner_tid");
	assert_json_null(j, "rows/0/hold_ns");
	assert_json_null(j, "rows/0/stacks");
	json_decref(j);
	free(out);

	m.hold = true;
	m.blame = &blame;
	m.blame_names = names;
	m.waiting = &blame;
	m.waiting_names = names;
	m.states = &states;
	m.lock_order = &(struct format_lock_order){ 0 };
	out = render(FORMAT_JSON, &m, split, 1, 1, names);
	j = parse_json_line(out);
	keys_of(j, keys, sizeof(keys));
	keys_of(jpath(j, "rows/0"), row_keys, sizeof(row_keys));
	assert_string_equal(keys, plain_keys);
	assert_string_equal(row_keys, plain_row);
	assert_json_int(j, "rows/0/tid", 42);
	assert_json_null(j, "rows/0/owner_tid");	/* not known */
	assert_json_int(j, "rows/0/hold_ns", 0);
	assert_int_equal(json_len_at(j, "blame"), 1);
	assert_int_equal(json_len_at(j, "waiting"), 1);
	assert_int_equal(json_len_at(j, "threads"), 0);
	/* --lock-order with no cycle: an empty list, nothing lost. */
	assert_int_equal(json_len_at(j, "lock_order"), 0);
	assert_json_int(j, "lock_order_lost/pairs", 0);
	json_decref(j);
	free(out);
}

static void test_json_rows_without_stacks_have_an_empty_list(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 300, 300, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	struct format_config cfg = { .format = FORMAT_JSON };
	struct report_rows r = { .rows = rows, .count = 1, .total = 1 };
	struct stacktab *tab;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	json_t *j;

	/* Stacks kept, none for this row: []; none kept at all: null. */
	assert_int_equal(stacktab__new(&tab), 0);
	cfg.stacktab = tab;
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(format__report(f, &cfg, &meta, &r, names), 0);
	assert_int_equal(fclose(f), 0);
	j = parse_json_line(out);
	assert_int_equal(json_len_at(j, "rows/0/stacks"), 0);
	assert_json_null(j, "rows/0/p99_ns");
	json_decref(j);
	free(out);
	stacktab__free(tab);
	out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	j = parse_json_line(out);
	assert_json_null(j, "rows/0/stacks");
	json_decref(j);
	free(out);
}

static void test_json_stacks_frames_and_totals(void **state UNUSED)
{
	const uint64_t deep[3] = { 0x401000, 0x402000, 0x403000 };
	const uint64_t shallow[1] = { 0x401000 };
	struct report_stack stacks[] = {
		{ .stack_id = 7, .count = 3, .wait_ns = 900, .max_ns = 500 },
		{ .stack_id = 9, .count = 1, .wait_ns = 100, .max_ns = 100,
		  .failed = 2 },
		{ .stack_id = 11, .count = 1, .wait_ns = 50, .max_ns = 50 },
	};
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x401000, REPORT_NO_TID, 5, 1050,
		    500, 2),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	struct report_rows r = { .rows = rows, .count = 1, .total = 1 };
	struct format_config cfg = { .format = FORMAT_JSON };
	struct stacktab *tab;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	json_t *j;

	assert_int_equal(stacktab__new(&tab), 0);
	assert_int_equal(stacktab__add(tab, 7, deep, 3, STACKTAB_END_COMPLETE), 0);
	assert_int_equal(stacktab__add(tab, 9, shallow, 1,
				       STACKTAB_END_TRUNCATED), 0);
	/* 11 is not in the table: its frames were lost. */
	rows[0].stacks = stacks;
	rows[0].n_stacks = 3;
	cfg.stacktab = tab;	/* no symbolizer: frames unnamed */
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(format__report(f, &cfg, &meta, &r, names), 0);
	assert_int_equal(fclose(f), 0);
	j = parse_json_line(out);
	assert_int_equal(json_len_at(j, "rows/0/stacks"), 3);
	assert_int_equal(json_len_at(j, "rows/0/stacks/0/frames"), 3);
	for (int k = 0; k < 3; k++) {
		char path[64];
		static const char *const pcs[] = { "0x401000", "0x402000",
						   "0x403000" };

		snprintf(path, sizeof(path), "rows/0/stacks/0/frames/%d/address", k);
		assert_json_str(j, path, pcs[k]);
		snprintf(path, sizeof(path), "rows/0/stacks/0/frames/%d/inline", k);
		assert_true(json_is_false(jpath(j, path)));
	}
	assert_json_null(j, "rows/0/stacks/0/frames/2/module");
	assert_json_null(j, "rows/0/stacks/0/frames/2/offset");
	assert_json_null(j, "rows/0/stacks/0/frames/2/function");
	assert_json_null(j, "rows/0/stacks/0/frames/2/file");
	assert_json_null(j, "rows/0/stacks/0/frames/2/line");
	assert_json_str(j, "rows/0/stacks/0/end", "complete");
	assert_json_int(j, "rows/0/stacks/0/count", 3);
	assert_json_int(j, "rows/0/stacks/0/wait_ns", 900);
	assert_json_int(j, "rows/0/stacks/0/max_ns", 500);
	assert_json_int(j, "rows/0/stacks/0/failed", 0);
	assert_json_str(j, "rows/0/stacks/1/end", "truncated");
	assert_int_equal(json_len_at(j, "rows/0/stacks/1/frames"), 1);
	assert_json_int(j, "rows/0/stacks/1/count", 1);
	assert_json_int(j, "rows/0/stacks/1/failed", 2);
	assert_int_equal(json_len_at(j, "rows/0/stacks/2/frames"), 0);
	assert_json_str(j, "rows/0/stacks/2/end", "stopped");
	assert_json_int(j, "rows/0/stacks/2/wait_ns", 50);
	json_decref(j);
	free(out);
	stacktab__free(tab);
}

/* Non-empty buckets only, [lower_ns, count]; quantiles from them. */
static void test_json_hist(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 9000000,
		    3000000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x400, REPORT_NO_TID, 0, 0, 0, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1),
					      file_line("a.c", 2) };
	char *out;
	json_t *j;

	rows[0].hist[0] = 1;		/* 0 ns */
	rows[0].hist[22] = 3;		/* [2M, 4M) */
	out = render(FORMAT_JSON, &meta, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_int_equal(json_len_at(j, "rows/0/hist"), 2);
	assert_json_int(j, "rows/0/hist/0/0", 0);
	assert_json_int(j, "rows/0/hist/0/1", 1);
	assert_json_int(j, "rows/0/hist/1/0", 2097152);
	assert_json_int(j, "rows/0/hist/1/1", 3);
	/* rank 3.96 of 4: 2.96 of the 3 in [2M, max] */
	assert_json_int(j, "rows/0/p50_ns", 2398101);
	assert_json_int(j, "rows/0/p99_ns", 2987962);
	assert_int_equal(json_len_at(j, "rows/1/hist"), 0);
	assert_json_null(j, "rows/1/p50_ns");
	assert_json_null(j, "rows/1/p99_ns");
	json_decref(j);
	free(out);
}

/* --hist: bpftrace's lines under each row, none under an empty one. */
static void test_table_hist_under_rows(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 3, 6000,
		    3000, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 0, 0, 0, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1),
					      file_line("a.c", 2) };
	struct format_meta m = meta;
	char *out;

	m.hist = true;
	rows[0].hist[11] = 1;		/* [1K, 2K) */
	rows[0].hist[12] = 2;		/* [2K, 4K) */
	out = render(FORMAT_TABLE, &m, rows, 2, 2, names);
	assert_contains(out, "a.c:1  ");
	assert_contains(out, "\n    wait (ns)\n"
		"    [1K, 2K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"    [2K, 4K)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"mutex ");
	assert_int_equal(strstr(strstr(out, "a.c:2"), "wait (ns)") != NULL, 0);
	free(out);
}

/* --blame: a section of release sites under the table. */
static void test_table_blame_section(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 4000, 1500, 0),
	};
	struct report_row released[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x900, REPORT_NO_TID, 3, 3000, 1500, 0),
		row(SP_TYPE_MUTEX, 0x1000, 1, 0, REPORT_NO_TID, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	const struct row_names release_names[] = { file_line("holder.c", 77),
						      { .callsite = { 0 } } };
	struct report_rows blame = { .rows = released, .count = 2, .total = 2 };
	struct format_meta m = meta;
	char *out;

	m.blame = &blame;
	m.blame_names = release_names;
	out = render(FORMAT_TABLE, &m, rows, 1, 1, names);
	assert_contains(out, RULE105 "\n"
		"Who made them wait: where the lock was released when each waiter woke\n"
		"Type               Object  Released at  Wait Time (s)         Count  Average (us)      Max (us)\n"
		"-----------------------------------------------------------------------------------------------\n"
		"mutex    " "  " "        0x1000" "  " "holder.c:77" "  "
		"      0.00000" "  " "           3" "  " "        1.00" "  " "        1.50\n"
		"mutex    " "  " "        0x1000" "  " "(not seen) " "  "
		"      0.00000" "  " "           1" "  " "        1.00" "  " "        1.00\n"
		"-----------------------------------------------------------------------------------------------\n");
	free(out);
}

/* --blame in JSON: release is a FRAME, or null when not seen. */
static void test_json_blame(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 4000, 1500, 0),
	};
	struct report_row released[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x900, 41, 3, 3000, 1500, 0),
		row(SP_TYPE_MUTEX, 0x1000, 1, 0, 0, 1, 1000, 1000, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	struct row_names release_names[] = { file_line("holder.c", 77),
						 { .callsite = { 0 } } };
	struct report_rows blame = { .rows = released, .count = 2, .total = 5 };
	struct format_meta m = meta;
	char *out;
	json_t *j;

	release_names[0].object_symbol = "big_lock";
	m.blame = &blame;
	m.blame_names = release_names;
	out = render(FORMAT_JSON, &m, rows, 1, 1, names);
	j = parse_json_line(out);
	assert_json_int(j, "blame_total", 5);
	assert_int_equal(json_len_at(j, "blame"), 2);
	assert_json_str(j, "blame/0/type", "mutex");
	assert_json_str(j, "blame/0/object", "0x1000");
	assert_json_int(j, "blame/0/objects", 1);
	assert_json_str(j, "blame/0/object_symbol", "big_lock");
	assert_json_str(j, "blame/0/release/address", "0x900");
	assert_json_null(j, "blame/0/release/module");
	assert_json_null(j, "blame/0/release/function");
	assert_json_str(j, "blame/0/release/file", "holder.c");
	assert_json_int(j, "blame/0/release/line", 77);
	assert_true(json_is_false(jpath(j, "blame/0/release/inline")));
	assert_json_int(j, "blame/0/tid", 41);
	assert_json_int(j, "blame/0/count", 3);
	assert_json_int(j, "blame/0/wait_ns", 3000);
	assert_json_int(j, "blame/0/avg_ns", 1000);
	assert_json_int(j, "blame/0/max_ns", 1500);
	assert_json_null(j, "blame/1/release");
	assert_json_null(j, "blame/1/tid");
	assert_json_int(j, "blame/1/count", 1);
	json_decref(j);
	free(out);
	/* Without --blame: null. */
	out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	j = parse_json_line(out);
	assert_json_null(j, "blame");
	assert_json_null(j, "blame_total");
	json_decref(j);
	free(out);
}

/* --hold: two columns in the table, four fields in JSON. */
static void test_hold_columns_and_fields(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 4, 4000, 1500, 0),
		row(SP_TYPE_REC_MUTEX, 0x2000, 1, 0x500, REPORT_NO_TID, 1, 10, 10, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1),
					      file_line("a.c", 2) };
	struct format_meta m = meta;
	char *out;
	json_t *j;

	rows[0].hold_count = 4;
	rows[0].hold_ns = 12000000;
	rows[0].hold_max_ns = 3500000;
	m.hold = true;
	out = render(FORMAT_TABLE, &m, rows, 2, 2, names);
	assert_contains(out, "Average (us)      Max (us)      Failed  Hold Time (s)  Average Hold (us)\n");
	assert_contains(out, "        1.50" "  " "         0" "  " "      0.01200" "  "
			     "          3000.00\n");
	assert_contains(out, "        0.01" "  " "         0" "  " "      0.00000" "  "
			     "                -\n");
	free(out);
	out = render(FORMAT_JSON, &m, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_json_int(j, "rows/0/holds", 4);
	assert_json_int(j, "rows/0/hold_ns", 12000000);
	assert_json_int(j, "rows/0/hold_avg_ns", 3000000);
	assert_json_int(j, "rows/0/hold_max_ns", 3500000);
	assert_json_int(j, "rows/1/holds", 0);
	assert_json_int(j, "rows/1/hold_ns", 0);
	assert_json_null(j, "rows/1/hold_avg_ns");
	assert_json_int(j, "rows/1/hold_max_ns", 0);
	json_decref(j);
	free(out);
	/* Without --hold: the keys, null. */
	out = render(FORMAT_JSON, &meta, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_json_null(j, "rows/0/holds");
	assert_json_null(j, "rows/0/hold_ns");
	assert_json_null(j, "rows/0/hold_avg_ns");
	assert_json_null(j, "rows/0/hold_max_ns");
	json_decref(j);
	free(out);
}

static void test_json_unknowns_are_null(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_CONDVAR, 0x1000, 1, 0x7f0000001000ull, REPORT_NO_TID,
		    3, 300, 200, 0),
	};
	const struct row_names names[] = { { .callsite = { 0 } } };
	char *out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	json_t *j = parse_json_line(out);

	assert_json_null(j, "rows/0/object_symbol");
	assert_json_str(j, "rows/0/callsite/address", "0x7f0000001000");
	assert_json_null(j, "rows/0/callsite/module");
	assert_json_null(j, "rows/0/callsite/offset");
	assert_json_null(j, "rows/0/callsite/function");
	assert_json_null(j, "rows/0/callsite/file");
	assert_json_null(j, "rows/0/callsite/line");
	assert_json_null(j, "rows/0/tid");
	assert_json_int(j, "rows/0/avg_ns", 100);
	json_decref(j);
	free(out);
}

static void test_json_coalesced_object_is_null(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 4, 0x400, REPORT_NO_TID, 3, 300, 200, 0),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	char *out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	json_t *j = parse_json_line(out);

	assert_json_null(j, "rows/0/object");
	assert_json_int(j, "rows/0/objects", 4);
	assert_not_contains(out, "0x1000");
	json_decref(j);
	free(out);
}

static void test_json_zero_count_avg_is_null(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 0, 300, 200, 2),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	char *out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	json_t *j = parse_json_line(out);

	assert_json_int(j, "rows/0/count", 0);
	assert_json_int(j, "rows/0/wait_ns", 300);
	assert_json_null(j, "rows/0/avg_ns");
	assert_json_int(j, "rows/0/failed", 2);
	json_decref(j);
	free(out);
}

/*
 * Timed-out waits add to the wait, not to the average: a row of 2 waits
 * of 100 ns and 3 timeouts of 1 ms averages 100 ns, under its Max.
 */
static void test_average_leaves_failed_waits_out(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_CONDVAR, 0x1000, 1, 0x400, REPORT_NO_TID, 2, 3000200,
		    1000000, 3),
	};
	const struct row_names names[] = { file_line("a.c", 1) };
	char *out;
	json_t *j;

	rows[0].failed_ns = 3000000;
	out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	j = parse_json_line(out);
	assert_json_int(j, "rows/0/count", 2);
	assert_json_int(j, "rows/0/wait_ns", 3000200);
	assert_json_int(j, "rows/0/avg_ns", 100);
	assert_json_int(j, "rows/0/max_ns", 1000000);
	assert_json_int(j, "rows/0/failed", 3);
	assert_json_int(j, "rows/0/failed_ns", 3000000);
	json_decref(j);
	free(out);
	out = render(FORMAT_TABLE, &meta, rows, 1, 1, names);
	assert_contains(out, "      0.00300" "  " "           2" "  " "        0.10" "  "
			     "     1000.00" "  " "         3\n");
	free(out);
	out = render(FORMAT_CSV, &meta, rows, 1, 1, names);
	assert_contains(out, ",2,3000200,100,1000000,3,");
	free(out);
}

static void test_json_per_thread_tid(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, 4242, 1, 1, 1, 0),
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, 4243, 1, 1, 1, 0),
	};
	const struct row_names names[] = {
		file_line("a.c", 1), file_line("a.c", 1),
	};
	char *out;
	json_t *j;

	rows[1].owner_tid = 4242;
	out = render(FORMAT_JSON, &meta, rows, 2, 2, names);
	j = parse_json_line(out);
	assert_int_equal(json_len_at(j, "rows"), 2);
	assert_json_int(j, "rows/0/tid", 4242);
	assert_json_null(j, "rows/0/owner_tid");
	assert_json_int(j, "rows/1/tid", 4243);
	assert_json_int(j, "rows/1/owner_tid", 4242);
	assert_json_str(j, "rows/1/type", "mutex");
	json_decref(j);
	free(out);
}

static void test_json_no_rows(void **state UNUSED)
{
	char *out = render(FORMAT_JSON, &meta, NULL, 0, 0, NULL);
	json_t *j = parse_json_line(out);

	assert_int_equal(json_len_at(j, "rows"), 0);
	assert_json_int(j, "rows_total", 0);
	json_decref(j);
	free(out);
}

static void test_json_escapes_strings(void **state UNUSED)
{
	struct format_meta m = meta;
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 1, 1, 0),
	};
	const struct row_names names[] = {
		{
			.callsite = {
				.module = "/opt/caf\xc3\xa9/x",
				.function = "f\tg\nh",
				.file = "C:\\src\\x.c",
				.line = 7,
			},
			.object_symbol = "bad\xff\xc3",
		},
	};
	char *out;
	json_t *j;

	m.comm = "a\"b\\c\x01" "d\x1b[0m\x7f";
	out = render(FORMAT_JSON, &m, rows, 1, 1, names);
	j = parse_json_line(out);
	assert_json_str(j, "comm", "a\"b\\c\x01" "d\x1b[0m\x7f");
	assert_json_str(j, "rows/0/callsite/module", "/opt/caf\xc3\xa9/x");
	assert_json_str(j, "rows/0/callsite/function", "f\tg\nh");
	assert_json_str(j, "rows/0/callsite/file", "C:\\src\\x.c");
	json_decref(j);
	/* Controls escaped: none reaches a terminal as it is. */
	assert_contains(out, "\"comm\": \"a\\\"b\\\\c\\u0001d\\u001B[0m\\u007f\", ");
	assert_contains(out, "\"function\": \"f\\tg\\nh\", ");
	/* UTF-8 as it is. */
	assert_contains(out, "\"module\": \"/opt/caf\xc3\xa9/x\", ");
	/* Not UTF-8: surrogateescape's \udcXX, so the bytes round-trip. */
	assert_contains(out, "\"object_symbol\": \"bad\\udcff\\udcc3\"");
	free(out);
}

/*
 * A file name holds any byte but NUL: JSON gives it back whole (escaped);
 * CSV sanitizes it as the table does, so that no ESC reaches a terminal.
 */
static void test_module_paths_round_trip(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 1, 1, 0),
	};
	const struct row_names names[] = {
		{
			.callsite = {
				.module = "/tmp/a\nb,\"c\xff\xc2\x85/lib.so",
				.file = "/src/x\ny.c",
				.line = 7,
			},
		},
	};
	char *out = render(FORMAT_JSON, &meta, rows, 1, 1, names);

	json_decref(parse_json_line(out));
	assert_contains(out, "\"module\": \"/tmp/a\\nb,\\\"c\\udcff\\u0085/lib.so\", ");
	assert_contains(out, "\"file\": \"/src/x\\ny.c\"");
	free(out);
	out = render(FORMAT_CSV, &meta, rows, 1, 1, names);
	assert_contains(out, ",x?y.c:7,\"/tmp/a?b,\"\"c??" "?/lib.so\",0x0,,"
			     "/src/x?y.c,7,");
	free(out);
}

/* -- CSV. -- */

static void test_csv_header(void **state UNUSED)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	format__csv_header(f);
	fclose(f);
	assert_string_equal(buf,
		"report,pid,start_ns,end_ns,dropped,type,object,objects,"
		"object_symbol,callsite,module,offset,function,file,line,tid,"
		"count,wait_ns,avg_ns,max_ns,failed,owner_tid,time_ns,address,class,"
		"futile,finding,finding_impact_pct\n");
	free(buf);
}

static void test_csv_row(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x55d0c0de1040ull, 1, 0x55d0c0a01234ull,
		    REPORT_NO_TID, 5, 1000000000, 201000000, 0),
	};
	const struct row_names names[] = {
		{
			.callsite = {
				.module = "/usr/bin/x", .module_offset = 0x1234,
				.function = "waiter", .file = "src/x.c",
				.line = 42,
			},
			.object_symbol = "big_lock",
		},
	};
	char *out = render(FORMAT_CSV, &meta, rows, 1, 1, names);

	/* Rows only: the header is printed once per output, separately. */
	assert_string_equal(out,
		"1,123,5061234000000,5071234000000,0,mutex,0x55d0c0de1040,1,"
		"big_lock,src/x.c:42,/usr/bin/x,0x1234,waiter,src/x.c,42,,"
		"5,1000000000,200000000,201000000,0,,,0x55d0c0a01234,lock,0,,\n");
	free(out);
}

static void test_csv_rows_end_with_the_wall_clock(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
	};
	const struct row_names names[1] = { 0 };
	struct format_meta m = meta;
	char *out;

	m.wall_ns = 1763912472345678901ull;
	out = render(FORMAT_CSV, &m, rows, 1, 1, names);
	assert_non_null(strstr(out, ",1763912472345678901,0x400,lock,0,,\n"));
	free(out);
}

static void test_csv_unknowns_are_empty(void **state UNUSED)
{
	struct format_meta m = meta;
	struct report_row rows[] = {
		row(SP_TYPE_CONDVAR, 0x1000, 3, 0x7f0000001000ull, 77, 0, 500,
		    400, 2),
	};
	const struct row_names names[] = { { .callsite = { 0 } } };
	char *out;

	m.sequence = 4;
	m.dropped = 9;
	out = render(FORMAT_CSV, &m, rows, 1, 1, names);
	assert_string_equal(out,
		"4,123,5061234000000,5071234000000,9,condvar,,3,,0x7f0000001000,"
		",,,,,77,0,500,,400,2,,,0x7f0000001000,event,0,,\n");
	free(out);
}

static void test_csv_quotes_commas_and_quotes(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
	};
	const struct row_names names[] = {
		{
			.callsite = {
				.module = "/opt/a,b/lib.so", .module_offset = 0x10,
				.function = "operator,(A, B)",
				.file = "we\"ird.c",
				.line = 3,
			},
			.object_symbol = "plain\nnewline",
		},
	};
	char *out = render(FORMAT_CSV, &meta, rows, 1, 1, names);

	assert_string_equal(out,
		"1,123,5061234000000,5071234000000,0,mutex,0x1000,1,"
		"plain?newline,\"we\"\"ird.c:3\",\"/opt/a,b/lib.so\",0x10,"
		"\"operator,(A, B)\",\"we\"\"ird.c\",3,,1,10,10,10,0,,,0x400,lock,0,,\n");
	free(out);
}

/* A row of the lock a finding is about carries its category and impact. */
static void test_csv_row_carries_its_locks_finding(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
		row(SP_TYPE_SEM, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
	};
	const struct row_names names[3] = { 0 };
	struct format_meta m = meta;
	const char *first;
	char *out;

	m.findings_json = json_loads(
		"[{\"category\": \"long-hold\", \"type\": \"mutex\", "
		"\"object_address\": \"0x1000\", \"impact_pct\": 41.25}]",
		0, NULL);
	assert_non_null(m.findings_json);
	out = render(FORMAT_CSV, &m, rows, 3, 3, names);
	/* The mutex at 0x1000 only: not another object, nor another type. */
	first = strstr(out, "\n");
	assert_non_null(first);
	assert_non_null(strstr(out, ",mutex,0x1000,"));
	assert_true(strstr(out, ",mutex,0x1000,") < first);
	assert_int_equal(strncmp(first - strlen(",lock,0,long-hold,41.2"),
				 ",lock,0,long-hold,41.2", 22), 0);
	assert_null(strstr(first, "long-hold"));
	assert_non_null(strstr(first, ",mutex,0x2000,"));
	assert_non_null(strstr(first, ",sem,0x1000,"));
	assert_non_null(strstr(first, ",lock,0,,\n"));
	free(out);
	json_decref(m.findings_json);
}

static void test_csv_rows_without_header(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
		row(SP_TYPE_MUTEX, 0x2000, 1, 0x400, REPORT_NO_TID, 2, 10, 10, 0),
	};
	const struct row_names names[] = {
		file_line("a.c", 1), file_line("a.c", 1),
	};
	char *out = render(FORMAT_CSV, &meta, rows, 2, 7, names);
	size_t lines = 0;

	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 2);
	assert_not_contains(out, "report,");
	free(out);
}

/*
 * CSV prints long names whole (a demangled C++ template, say), as JSON
 * does: two long names that differ only at the end stay apart.
 */
static void test_csv_long_names_not_truncated(void **state UNUSED)
{
	struct report_row rows[] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, 0x400, REPORT_NO_TID, 1, 10, 10, 0),
	};
	struct row_names names[] = { file_line("a.c", 1) };
	char function[700];
	char *out;

	memset(function, 'a', 600);
	strcpy(function + 600, "<int>::lock_end");
	names[0].callsite.function = function;
	out = render(FORMAT_JSON, &meta, rows, 1, 1, names);
	assert_contains(out, "<int>::lock_end\"");
	free(out);
	out = render(FORMAT_CSV, &meta, rows, 1, 1, names);
	assert_contains(out, "<int>::lock_end,a.c,1,");
	free(out);
}

static void test_unknown_format_rejected(void **state UNUSED)
{
	struct report_rows r = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const struct format_config cfg = {
		.format = (enum output_format)(FORMAT_PPROF + 1),
	};

	assert_non_null(f);
	assert_int_equal(format__report(f, &cfg, &meta, &r, NULL), -EINVAL);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

/* -g: each row's stacks under it, named through the symbolizer. */
static void test_table_stacks_under_rows(void **state UNUSED)
{
	struct symbolizer *sym = fix_symbolizer();
	struct stacktab *tab = fix_stacktab();
	struct report_stack stacks[1] = { { FIX_STACK_ID, 3, 750000000, 500, 0 } };
	struct report_row rows[2] = {
		row(SP_TYPE_MUTEX, 0x1000, 1, FIX_MID_RET, REPORT_NO_TID, 4,
		    1000000000, 600000000, 0),
		row(SP_TYPE_SEM, 0x2000, 1, FIX_ROOT_RET, REPORT_NO_TID, 1,
		    5000000, 5000000, 0),
	};
	const struct report_rows r = { rows, 2, 2 };
	struct row_names names[2] = {
		{ .callsite = { .function = "fix_mid" }, .object_symbol = "big" },
		{ .callsite = { .function = "fix_root" } },
	};
	struct format_config cfg = {
		.format = FORMAT_TABLE, .stacks = true, .symbolizer = sym,
		.stacktab = tab,
	};
	char *buf = NULL, *first, *second, *end;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(sym);
	assert_non_null(tab);
	rows[0].stacks = stacks;
	rows[0].n_stacks = 1;
	assert_non_null(f);
	assert_int_equal(format__report(f, &cfg, &meta, &r, names), 0);
	assert_int_equal(fclose(f), 0);
	/* Row, its stacks, the next row, its call site, the closing rule. */
	first = strstr(buf, "\nmutex  ");
	second = strstr(buf, "\nsem  ");
	end = strstr(second ? second : buf, "\n----");
	assert_non_null(first);
	assert_non_null(second);
	assert_non_null(end);
	assert_true(first < second);
	assert_contains(first, "\n    --75.00%-- 3 waits (75.00%)  0.75000 s  max 0.50 us\n"
			"            fix_leaf (");
	assert_contains(first, "\n            fix_mid (");
	assert_contains(first, "\n            fix_root (");
	/* The row's longest wait is not in its stack: it is the rest's. */
	assert_contains(first, "\n    --25.00%-- 1 wait (25.00%)  0.25000 s  "
			"max 600000.00 us  (no stack kept: the call site)\n"
			"            fix_mid (");
	assert_contains(second, "\n    --100.00%-- 1 wait (100.00%)  0.00500 s  "
			"max 5000.00 us  (no stack kept: the call site)\n"
			"            fix_root (");
	assert_true(strstr(first, "fix_leaf") < second);
	free(buf);

	/* Without -g: the table alone. */
	cfg.stacks = false;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(format__report(f, &cfg, &meta, &r, names), 0);
	assert_int_equal(fclose(f), 0);
	assert_null(strstr(buf, "--%"));
	assert_null(strstr(buf, "fix_leaf"));
	free(buf);
	stacktab__free(tab);
	symbolizer__free(sym);
}

/* -- Sanitizing. -- */

static void test_sanitize_plain_ascii_unchanged(void **state UNUSED)
{
	assert_string_equal(sanitize("pthread_mutex_lock+0x1f (a.c:12) ~!", 64),
			    "pthread_mutex_lock+0x1f (a.c:12) ~!");
	assert_string_equal(sanitize("", 64), "");
}

static void test_sanitize_control_characters(void **state UNUSED)
{
	assert_string_equal(sanitize("a\x01" "b\x1f" "c\td\ne\r", 64), "a?b?c?d?e?");
	assert_string_equal(sanitize("\x1b[31mred\x1b[0m", 64), "?[31mred?[0m");
	assert_string_equal(sanitize("del\x7f", 64), "del?");
}

static void test_sanitize_c1_controls(void **state UNUSED)
{
	/* U+0080..U+009F in UTF-8: c2 80 .. c2 9f; c2 9b is the 8-bit CSI. */
	assert_string_equal(sanitize("a\xc2\x80" "b", 64), "a??b");
	assert_string_equal(sanitize("\xc2\x9b" "2J", 64), "??2J");
	assert_string_equal(sanitize("\xc2\x9f", 64), "??");
	/* U+00A0 is the first printable two-byte character. */
	assert_string_equal(sanitize("\xc2\xa0", 64), "\xc2\xa0");
}

static void test_sanitize_invalid_utf8(void **state UNUSED)
{
	assert_string_equal(sanitize("\xff\xfe", 64), "??");
	assert_string_equal(sanitize("a\x80" "b", 64), "a?b");		/* lone continuation */
	assert_string_equal(sanitize("\xc3" "a", 64), "?a");		/* truncated */
	assert_string_equal(sanitize("x\xe2\x82", 64), "x??");		/* truncated at end */
	assert_string_equal(sanitize("\xc0\xaf", 64), "??");		/* overlong '/' */
	assert_string_equal(sanitize("\xe0\x80\xaf", 64), "???");	/* overlong */
	assert_string_equal(sanitize("\xf0\x82\x82\xac", 64), "????");	/* overlong */
	assert_string_equal(sanitize("\xed\xa0\x80", 64), "???");	/* surrogate */
	assert_string_equal(sanitize("\xf4\x90\x80\x80", 64), "????");	/* > U+10FFFF */
	assert_string_equal(sanitize("\xf8\x88\x80\x80\x80", 64), "?????");
}

static void test_sanitize_valid_multibyte_kept(void **state UNUSED)
{
	assert_string_equal(sanitize("caf\xc3\xa9", 64), "caf\xc3\xa9");		/* é */
	assert_string_equal(sanitize("\xe2\x82\xac" "5", 64), "\xe2\x82\xac" "5");	/* € */
	assert_string_equal(sanitize("\xf0\x9f\x98\x80", 64), "\xf0\x9f\x98\x80");	/* U+1F600 */
	assert_string_equal(sanitize("\xf4\x8f\xbf\xbf", 64), "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
	assert_string_equal(sanitize("\xed\x9f\xbf", 64), "\xed\x9f\xbf");		/* U+D7FF */
}

static void test_sanitize_truncates_ascii(void **state UNUSED)
{
	assert_string_equal(sanitize("abcdef", 4), "abc");
	assert_string_equal(sanitize("abc", 4), "abc");
	assert_string_equal(sanitize("abc", 1), "");
	/* The byte after the terminator is untouched. */
	assert_int_equal(sanitize("abcdef", 4)[4], 'Z');
}

static void test_sanitize_truncation_never_splits_a_sequence(void **state UNUSED)
{
	/* "ab€": 5 bytes; with room for 4 only "ab" fits whole. */
	assert_string_equal(sanitize("ab\xe2\x82\xac", 5), "ab");
	assert_string_equal(sanitize("ab\xe2\x82\xac", 6), "ab\xe2\x82\xac");
	assert_string_equal(sanitize("\xe2\x82\xac", 3), "");
	assert_string_equal(sanitize("\xe2\x82\xac", 4), "\xe2\x82\xac");
	assert_string_equal(sanitize("a\xf0\x9f\x98\x80" "b", 5), "a");
	assert_string_equal(sanitize("a\xf0\x9f\x98\x80" "b", 6), "a\xf0\x9f\x98\x80");
	assert_string_equal(sanitize("\xc3\xa9\xc3\xa9", 4), "\xc3\xa9");
}

static void test_sanitize_zero_length_buffer_untouched(void **state UNUSED)
{
	char buf[2] = { 'Z', 'Z' };

	text__sanitize("abc", buf, 0);
	assert_int_equal(buf[0], 'Z');
}

/* The live screen lays its columns out with these. */
static void test_width_counts_characters(void **state UNUSED)
{
	assert_int_equal(text__width(""), 0);
	assert_int_equal(text__width("big_lock"), 8);
	assert_int_equal(text__width("\xc3\xa9t\xc3\xa9.c:1"), 7);
	assert_int_equal(text__width("\xe2\x82\xac\xf0\x9f\x94\x92"), 2);
}

static void test_object_text(void **state UNUSED)
{
	struct report_row r = row(SP_TYPE_MUTEX, 0x55d0c0de1040ull, 1, 0x1234,
				  REPORT_NO_TID, 1, 1, 1, 0);
	char buf[64];

	names__object_text(&r, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "0x55d0c0de1040");
	names__object_text(&r, "big_lock", buf, sizeof(buf));
	assert_string_equal(buf, "big_lock");
	names__object_text(&r, "bad\x1b[2Jname", buf, sizeof(buf));
	assert_string_equal(buf, "bad?[2Jname");
	r.n_objects = 8;
	names__object_text(&r, "big_lock", buf, sizeof(buf));
	assert_string_equal(buf, "[           8]");
}

/* The common root of the rows' absolute files; relative ones share none. */
static void test_source_root(void **state UNUSED)
{
	struct report_row rows[3] = { 0 };
	struct row_names names[3] = {
		file_line("/src/app/a/x.c", 1),
		file_line("/src/app/b/y.c", 2),
		file_line("z.c", 3),
	};
	struct report_rows r = { .rows = rows, .count = 2, .total = 2 };

	assert_int_equal(names__source_root(&r, names), strlen("/src/app/"));
	r.count = 3;
	assert_int_equal(names__source_root(&r, names), strlen("/src/app/"));
	r.count = 0;
	assert_int_equal(names__source_root(&r, names), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_qsp_example),
		cmocka_unit_test(test_table_empty),
		cmocka_unit_test(test_wall_clock_time),
		cmocka_unit_test(test_table_says_drops_loudly),
		cmocka_unit_test(test_drops_text_names_every_cause),
		cmocka_unit_test(test_json_drop_causes),
		cmocka_unit_test(test_table_short_callsites_keep_title_width),
		cmocka_unit_test(test_table_per_thread_column),
		cmocka_unit_test(test_table_object_symbols),
		cmocka_unit_test(test_table_strips_common_source_root),
		cmocka_unit_test(test_table_single_file_shows_its_name),
		cmocka_unit_test(test_table_zero_count_average),
		cmocka_unit_test(test_table_pads_by_display_width),
		cmocka_unit_test(test_table_large_values),
		cmocka_unit_test(test_table_sanitizes_names),
		cmocka_unit_test(test_table_summary_without_comm),
		cmocka_unit_test(test_table_stacks_under_rows),
		cmocka_unit_test(test_callsite_file_and_line),
		cmocka_unit_test(test_callsite_function_when_no_line),
		cmocka_unit_test(test_callsite_style_func),
		cmocka_unit_test(test_callsite_style_both),
		cmocka_unit_test(test_callsite_strip_source_root),
		cmocka_unit_test(test_callsite_module_offset),
		cmocka_unit_test(test_callsite_address_when_nothing_known),
		cmocka_unit_test(test_callsite_truncates_to_buffer),
		cmocka_unit_test(test_json_design_example),
		cmocka_unit_test(test_json_same_keys_whatever_is_asked),
		cmocka_unit_test(test_futile_wakeups),
		cmocka_unit_test(test_json_rows_without_stacks_have_an_empty_list),
		cmocka_unit_test(test_json_stacks_frames_and_totals),
		cmocka_unit_test(test_json_hist),
		cmocka_unit_test(test_table_hist_under_rows),
		cmocka_unit_test(test_average_leaves_failed_waits_out),
		cmocka_unit_test(test_table_blame_section),
		cmocka_unit_test(test_json_blame),
		cmocka_unit_test(test_hold_columns_and_fields),
		cmocka_unit_test(test_json_unknowns_are_null),
		cmocka_unit_test(test_json_coalesced_object_is_null),
		cmocka_unit_test(test_json_zero_count_avg_is_null),
		cmocka_unit_test(test_json_per_thread_tid),
		cmocka_unit_test(test_json_no_rows),
		cmocka_unit_test(test_json_escapes_strings),
		cmocka_unit_test(test_module_paths_round_trip),
		cmocka_unit_test(test_csv_header),
		cmocka_unit_test(test_csv_row),
		cmocka_unit_test(test_csv_rows_end_with_the_wall_clock),
		cmocka_unit_test(test_csv_unknowns_are_empty),
		cmocka_unit_test(test_csv_quotes_commas_and_quotes),
		cmocka_unit_test(test_csv_row_carries_its_locks_finding),
		cmocka_unit_test(test_csv_rows_without_header),
		cmocka_unit_test(test_csv_long_names_not_truncated),
		cmocka_unit_test(test_unknown_format_rejected),
		cmocka_unit_test(test_sanitize_plain_ascii_unchanged),
		cmocka_unit_test(test_sanitize_control_characters),
		cmocka_unit_test(test_sanitize_c1_controls),
		cmocka_unit_test(test_sanitize_invalid_utf8),
		cmocka_unit_test(test_sanitize_valid_multibyte_kept),
		cmocka_unit_test(test_sanitize_truncates_ascii),
		cmocka_unit_test(test_sanitize_truncation_never_splits_a_sequence),
		cmocka_unit_test(test_sanitize_zero_length_buffer_untouched),
		cmocka_unit_test(test_width_counts_characters),
		cmocka_unit_test(test_object_text),
		cmocka_unit_test(test_source_root),
	};

	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
