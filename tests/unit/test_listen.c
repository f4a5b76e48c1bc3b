// SPDX-License-Identifier: GPL-2.0
/* listen: --serve's [HOST:]PORT, and which addresses are loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "listen.h"

#define UNUSED __attribute__((unused))

static void text_of(const char *arg, const char *want, bool loopback)
{
	struct sockaddr_storage addr;
	socklen_t len;
	char buf[96];

	assert_int_equal(listen__parse(arg, &addr, &len), 0);
	listen__text((struct sockaddr *)&addr,
		     listen__port((struct sockaddr *)&addr), buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(listen__loopback((struct sockaddr *)&addr), loopback);
}

static void test_forms(void **state UNUSED)
{
	text_of("9100", "127.0.0.1:9100", true);
	text_of("0", "127.0.0.1:0", true);
	text_of("127.0.0.5:80", "127.0.0.5:80", true);
	text_of("0.0.0.0:9100", "0.0.0.0:9100", false);
	text_of("[::1]:9100", "[::1]:9100", true);
	text_of("[::]:9100", "[::]:9100", false);
	text_of(":9100", "127.0.0.1:9100", true);
}

static void test_bad(void **state UNUSED)
{
	static const char *const bad[] = {
		"", "x", "65536", "-1", "+5", "1.2.3.4:", "::1:9100", "[::1]9100",
		"[::1", "9100x",
	};
	struct sockaddr_storage addr;
	socklen_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(listen__parse(bad[i], &addr, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
