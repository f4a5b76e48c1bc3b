// SPDX-License-Identifier: GPL-2.0
/*
 * locktype: every lock type's name and class, spelled out, so that a new
 * type cannot arrive without a decided class (the table must cover
 * SP_TYPE__COUNT).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "array.h"
#include "locktype.h"

#define UNUSED __attribute__((unused))

static const struct {
	uint32_t type;
	const char *name;
	const char *class;
} types[] = {
	{ SP_TYPE_MUTEX, "mutex", "lock" },
	{ SP_TYPE_REC_MUTEX, "rec_mutex", "lock" },
	/* The wait for the signal; taking the mutex back is a mutex row. */
	{ SP_TYPE_CONDVAR, "condvar", "event" },
	{ SP_TYPE_RWLOCK_R, "rwlock-r", "lock" },
	{ SP_TYPE_RWLOCK_W, "rwlock-w", "lock" },
	{ SP_TYPE_SEM, "sem", "lock" },
	{ SP_TYPE_LIBC_LOCK, "libc-lock", "lock" },
	{ SP_TYPE_FUTEX, "futex", "lock" },
	{ SP_TYPE_BARRIER, "barrier", "event" },
	{ SP_TYPE_SPINLOCK, "spinlock", "lock" },
	{ SP_TYPE_JOIN, "join", "event" },
	{ SP_TYPE_PARK, "park", "event" },
	{ SP_TYPE_POLL, "poll", "event" },
	{ SP_TYPE_IO, "io", "event" },
	{ SP_TYPE_SLEEP, "sleep", "event" },
	{ SP_TYPE_CHILD, "child", "event" },
	/* flock waits for another process's lock. */
	{ SP_TYPE_FLOCK, "flock", "lock" },
	{ SP_TYPE_SYSCALL, "syscall", "event" },
	{ SP_TYPE_FAULT, "fault", "event" },
};

static void test_every_type_has_its_name_and_class(void **state UNUSED)
{
	assert_int_equal(ARRAY_SIZE(types), SP_TYPE__COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		uint32_t t = types[i].type;

		assert_string_equal(locktype__name(t), types[i].name);
		assert_string_equal(locktype__class(t), types[i].class);
		assert_string_equal(locktype__class_name(locktype__class_of(t)),
				    types[i].class);
	}
}

static void test_unknown_type_and_class(void **state UNUSED)
{
	assert_string_equal(locktype__name(SP_TYPE__COUNT), "unknown");
	assert_int_equal(locktype__class_of(SP_TYPE__COUNT), LOCK_CLASS_LOCK);
	assert_string_equal(locktype__class_name(LOCK_CLASS__COUNT), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_has_its_name_and_class),
		cmocka_unit_test(test_unknown_type_and_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
