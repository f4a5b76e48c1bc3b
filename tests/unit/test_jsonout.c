// SPDX-License-Identifier: GPL-2.0
/*
 * jsonout: strings of any bytes written so that jansson, and Python's
 * json with surrogateescape, read back what was meant.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsonout.h"

#define UNUSED __attribute__((unused))

static char *dump(json_t *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_non_null(v);
	assert_int_equal(jsonout__dump(f, v), 0);
	assert_int_equal(fclose(f), 0);
	json_decref(v);
	return buf;
}

static void expect(const char *in, const char *want)
{
	char *out = dump(jsonout__string(in));

	assert_string_equal(out, want);
	free(out);
}

static void test_plain_strings_as_jansson_writes_them(void **state UNUSED)
{
	expect("big_lock", "\"big_lock\"");
	expect("caf\xc3\xa9 \"q\" \\", "\"caf\xc3\xa9 \\\"q\\\" \\\\\"");
	expect("a\tb\x01", "\"a\\tb\\u0001\"");
	expect(NULL, "null");
}

static void test_bytes_not_utf8_are_surrogate_escapes(void **state UNUSED)
{
	expect("a\xff" "b", "\"a\\udcffb\"");
	/* A cut sequence: each byte on its own. */
	expect("x\xc3", "\"x\\udcc3\"");
	/* Overlong '/' and a UTF-8-encoded surrogate: not UTF-8 either. */
	expect("\xc0\xaf", "\"\\udcc0\\udcaf\"");
	expect("\xed\xb3\xbf", "\"\\udced\\udcb3\\udcbf\"");
}

static void test_del_and_c1_controls_escaped(void **state UNUSED)
{
	expect("a\x7f" "b\xc2\x85" "c\xc2\x9f", "\"a\\u007fb\\u0085c\\u009f\"");
	/* U+00A0 is not a control. */
	expect("\xc2\xa0", "\"\xc2\xa0\"");
}

/*
 * The markers' own block (U+10FE00-U+10FFFF), really in a string: its
 * bytes one by one, which read back (surrogateescape) as the same bytes.
 */
static void test_marker_block_in_input_is_not_ambiguous(void **state UNUSED)
{
	expect("\xf4\x8f\xbf\xbf", "\"\\udcf4\\udc8f\\udcbf\\udcbf\"");
	expect("\xf4\x8f\xb8\x80" "z", "\"\\udcf4\\udc8f\\udcb8\\udc80z\"");
	/* Just below it: as it is. */
	expect("\xf4\x8f\xb7\xbf", "\"\xf4\x8f\xb7\xbf\"");
}

static void test_objects_keep_key_order_on_one_line(void **state UNUSED)
{
	json_t *o = json_object();
	int err = 0;
	char *out;

	jsonout__set(o, "b", jsonout__uint(UINT64_MAX), &err);
	jsonout__set(o, "a", jsonout__hex(true, 0xdead), &err);
	jsonout__set(o, "c", jsonout__hex(false, 1), &err);
	jsonout__set(o, "d", json_real(0.1), &err);
	jsonout__set(o, "e", jsonout__string("p\xffq"), &err);
	jsonout__set(o, "f", jsonout__uint_or_null(false, 3), &err);
	assert_int_equal(err, 0);
	out = dump(o);
	assert_string_equal(out, "{\"b\": 9223372036854775807, \"a\": \"0xdead\", "
				 "\"c\": null, \"d\": 0.1, \"e\": \"p\\udcffq\", "
				 "\"f\": null}");
	free(out);
}

static void test_a_failed_value_is_an_error(void **state UNUSED)
{
	json_t *o = json_object();
	int err = 0;

	jsonout__set(o, "x", NULL, &err);
	assert_int_equal(err, -ENOMEM);
	jsonout__set(o, "y", json_integer(1), &err);
	assert_int_equal(err, -ENOMEM);	/* the first failure stays */
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_strings_as_jansson_writes_them),
		cmocka_unit_test(test_bytes_not_utf8_are_surrogate_escapes),
		cmocka_unit_test(test_del_and_c1_controls_escaped),
		cmocka_unit_test(test_marker_block_in_input_is_not_ambiguous),
		cmocka_unit_test(test_objects_keep_key_order_on_one_line),
		cmocka_unit_test(test_a_failed_value_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
