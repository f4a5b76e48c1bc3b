// SPDX-License-Identifier: GPL-2.0
/*
 * rectext: the escaped, tab-separated fields of a recording's text files
 * survive any string (tabs, newlines, backslashes, "-"), NULL is "-", and
 * malformed lines are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rectext.h"

#define UNUSED __attribute__((unused))

/* The fields written as one line, then split again. */
static int roundtrip(const char *const *in, size_t n, char **out, char **line)
{
	size_t len = 0;
	FILE *f = open_memstream(line, &len);

	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\t', f);
		rectext__field(f, in[i]);
	}
	fputc('\n', f);
	fclose(f);
	return rectext__split(*line, out, 16);
}

static void test_plain_fields(void **state UNUSED)
{
	const char *in[] = { "site", "/usr/bin/demo", "main" };
	char *out[16], *line;

	assert_int_equal(roundtrip(in, 3, out, &line), 3);
	assert_string_equal(line, "site");
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(out[i], in[i]);
	free(line);
}

static void test_every_special_character_survives(void **state UNUSED)
{
	const char *in[] = { "a\tb", "line\nbreak\r", "back\\slash",
			     "\\t literally", "-", "--", "-x", "" };
	char *out[16], *line;

	assert_int_equal(roundtrip(in, 8, out, &line), 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(out[i], in[i]);
	free(line);
}

static void test_null_is_a_dash(void **state UNUSED)
{
	const char *in[] = { NULL, "x", NULL };
	char *out[16], *line;

	assert_int_equal(roundtrip(in, 3, out, &line), 3);
	assert_string_equal(line, "-");
	assert_null(out[0]);
	assert_string_equal(out[1], "x");
	assert_null(out[2]);
	free(line);
}

static void test_escaped_line_has_no_raw_tab_or_newline(void **state UNUSED)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	rectext__field(f, "a\tb\nc");
	fclose(f);
	assert_string_equal(text, "a\\tb\\nc");
	free(text);
}

static void test_bad_escape_is_refused(void **state UNUSED)
{
	char line[] = "ok\tbad\\q";
	char *out[4];

	assert_int_equal(rectext__split(line, out, 4), -EINVAL);
}

static void test_too_many_fields_is_refused(void **state UNUSED)
{
	char line[] = "a\tb\tc\n";
	char *out[2];

	assert_int_equal(rectext__split(line, out, 2), -EINVAL);
}

static void test_empty_line_is_one_empty_field(void **state UNUSED)
{
	char line[] = "\n";
	char *out[2];

	assert_int_equal(rectext__split(line, out, 2), 1);
	assert_string_equal(out[0], "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_fields),
		cmocka_unit_test(test_every_special_character_survives),
		cmocka_unit_test(test_null_is_a_dash),
		cmocka_unit_test(test_escaped_line_has_no_raw_tab_or_newline),
		cmocka_unit_test(test_bad_escape_is_refused),
		cmocka_unit_test(test_too_many_fields_is_refused),
		cmocka_unit_test(test_empty_line_is_one_empty_field),
	};

	return cmocka_run_group_tests_name("rectext", tests, NULL, NULL);
}
