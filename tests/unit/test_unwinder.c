// SPDX-License-Identifier: GPL-2.0
/*
 * unwinder: how a mapping is walked, from its file's name and identity.
 * Loading tables takes BPF (root): the integration tests do that.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unwinder.h"

#define UNUSED __attribute__((unused))

static struct procmaps_entry entry(const char *path, uint64_t dev, uint64_t inode)
{
	return (struct procmaps_entry){
		.start = 0x1000, .end = 0x2000, .exec = true, .path = path,
		.dev = dev, .inode = inode,
	};
}

static void test_lock_implementation_by_name(void **state UNUSED)
{
	struct procmaps_entry e = entry("/lib/x86_64-linux-gnu/libc.so.6", 1, 2);

	assert_int_equal(unwinder__mapping_flags(&e, 0, 0), SP_MAP_F_LIBC);
	e.path = "/lib64/libpthread-2.28.so";
	assert_int_equal(unwinder__mapping_flags(&e, 0, 0), SP_MAP_F_LIBC);
	e.path = "/usr/lib/libcrypto.so.3";
	assert_int_equal(unwinder__mapping_flags(&e, 0, 0), 0);
	e.path = "/usr/bin/libc-tool";
	assert_int_equal(unwinder__mapping_flags(&e, 0, 0), 0);
}

static void test_modelled_libc_by_identity(void **state UNUSED)
{
	/* Whatever its name: a container's libc under another path. */
	struct procmaps_entry e = entry("/opt/rt/lib/c.so", 8, 99);

	assert_int_equal(unwinder__mapping_flags(&e, 8, 99),
			 SP_MAP_F_LIBC | SP_MAP_F_LIBC_MODEL);
	assert_int_equal(unwinder__mapping_flags(&e, 8, 98), 0);
	assert_int_equal(unwinder__mapping_flags(&e, 7, 99), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_implementation_by_name),
		cmocka_unit_test(test_modelled_libc_by_identity),
	};

	return cmocka_run_group_tests_name("unwinder", tests, NULL, NULL);
}
