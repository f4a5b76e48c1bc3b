// SPDX-License-Identifier: GPL-2.0
/* request: --serve's request target, undecoded, parsed strictly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "request.h"

#define UNUSED __attribute__((unused))

static void accepts(const char *target, enum request_page page,
		    unsigned int seconds)
{
	struct request_target t;
	const char *why = "unset";

	assert_int_equal(request__parse(target, strlen(target), &t, &why), 0);
	assert_int_equal(t.page, page);
	assert_int_equal(t.seconds, seconds);
	assert_null(why);
}

static void refuses(const char *target, size_t len)
{
	struct request_target t;
	const char *why = NULL;

	assert_int_equal(request__parse(target, len, &t, &why), -EINVAL);
	assert_non_null(why);
	assert_true(strlen(why) > 0);
}

static void test_pages(void **state UNUSED)
{
	accepts("/", REQUEST_INDEX, 0);
	accepts("/metrics", REQUEST_METRICS, 0);
	accepts("/debug/pprof/block", REQUEST_BLOCK, 0);
	accepts("/debug/pprof/mutex", REQUEST_MUTEX, 0);
	accepts("/metrics/", REQUEST_NONE, 0);
	accepts("/debug/pprof/", REQUEST_NONE, 0);
	accepts("/%6detrics", REQUEST_NONE, 0);
	accepts("", REQUEST_NONE, 0);
	/* A scraper's own arguments are left alone. */
	accepts("/metrics?%zz&&=&x", REQUEST_METRICS, 0);
	accepts("/metrics?", REQUEST_METRICS, 0);
	assert_string_equal(request__path(REQUEST_MUTEX), "/debug/pprof/mutex");
}

static void test_seconds(void **state UNUSED)
{
	accepts("/debug/pprof/block?seconds=1", REQUEST_BLOCK, 1);
	accepts("/debug/pprof/block?seconds=3600", REQUEST_BLOCK, 3600);
	accepts("/debug/pprof/block?seconds=0030", REQUEST_BLOCK, 30);
	accepts("/debug/pprof/mutex?debug=1&seconds=5&gc=1", REQUEST_MUTEX, 5);
	/* A key that only starts or ends like it is another key. */
	accepts("/debug/pprof/block?secondsx=5&xseconds=7", REQUEST_BLOCK, 0);
}

static void test_strict(void **state UNUSED)
{
	static const char *const bad[] = {
		"/debug/pprof/block?seconds= 1",
		"/debug/pprof/block?seconds=+1",
		"/debug/pprof/block?seconds=1%00",
		"/debug/pprof/block?seconds=%31",
		"/debug/pprof/block?seconds=1+",
		"/debug/pprof/block?seconds=-1",
		"/debug/pprof/block?seconds=0",
		"/debug/pprof/block?seconds=",
		"/debug/pprof/block?seconds",
		"/debug/pprof/block?seconds=3601",
		"/debug/pprof/block?seconds=99999999999999999999",
		"/debug/pprof/block?seconds=1e3",
		"/debug/pprof/block?seconds=5x",
		"/debug/pprof/block?seconds=1&seconds=1",
		"/debug/pprof/block?seconds=1&seconds=2",
		"/debug/pprof/block?seconds=1;x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refuses(bad[i], strlen(bad[i]));
	/* A NUL inside the target: not a digit either. */
	refuses("/debug/pprof/block?seconds=1\0", 29);
}

/* Only len bytes are read: no terminating NUL needed. */
static void test_bounded(void **state UNUSED)
{
	char target[] = "/metrics?seconds=2XXXX";
	struct request_target t;
	const char *why;

	assert_int_equal(request__parse(target, 18, &t, &why), 0);
	assert_int_equal(t.seconds, 2);
	assert_int_equal(request__parse(target, 5, &t, &why), 0);
	assert_int_equal(t.page, REQUEST_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
