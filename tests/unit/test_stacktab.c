// SPDX-License-Identifier: GPL-2.0
/* stacktab: stacks by id, through growth and replacement; array__grow. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "array.h"
#include "stacktab.h"

#define UNUSED __attribute__((unused))

static void test_ids_find_their_frames_through_growth(void **state UNUSED)
{
	struct stacktab *tab;
	const uint64_t *frames;
	enum stacktab_end end;
	uint32_t n;

	assert_int_equal(stacktab__new(&tab), 0);
	for (uint64_t id = 1; id <= 1000; id++) {
		uint64_t f[3] = { id * 16, id * 16 + 1, id * 16 + 2 };

		assert_int_equal(stacktab__add(tab, id << 40, f, (uint32_t)(id % 4),
					       id % 3), 0);
	}
	assert_int_equal(stacktab__count(tab), 1000);
	for (uint64_t id = 1; id <= 1000; id++) {
		assert_int_equal(stacktab__get(tab, id << 40, &frames, &n, &end), 0);
		assert_int_equal(n, id % 4);
		assert_int_equal(end, id % 3);
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(frames[i], id * 16 + i);
	}
	assert_int_equal(stacktab__get(tab, 7, &frames, &n, &end), -ENOENT);
	assert_int_equal(stacktab__get(tab, 0, &frames, &n, &end), -ENOENT);
	stacktab__free(tab);
}

static void test_adding_an_id_again_replaces_it(void **state UNUSED)
{
	const uint64_t a[2] = { 1, 2 }, b[1] = { 9 };
	struct stacktab *tab;
	const uint64_t *frames;
	enum stacktab_end end;
	uint32_t n;

	assert_int_equal(stacktab__new(&tab), 0);
	assert_int_equal(stacktab__add(tab, 42, a, 2, STACKTAB_END_COMPLETE), 0);
	assert_int_equal(stacktab__add(tab, 42, b, 1, STACKTAB_END_STOPPED), 0);
	assert_int_equal(stacktab__count(tab), 1);
	assert_int_equal(stacktab__get(tab, 42, &frames, &n, &end), 0);
	assert_int_equal(n, 1);
	assert_int_equal(frames[0], 9);
	assert_int_equal(end, STACKTAB_END_STOPPED);
	assert_int_equal(stacktab__add(tab, 0, a, 2, 0), -EINVAL);
	stacktab__free(tab);
	stacktab__free(NULL);
}

/* Whether id is in tab with the frame it was added with (id + 1). */
static int has(const struct stacktab *tab, uint64_t id)
{
	const uint64_t *frames;
	enum stacktab_end end;
	uint32_t n;

	if (stacktab__get(tab, id, &frames, &n, &end))
		return 0;
	assert_int_equal(n, 1);
	assert_int_equal(frames[0], id + 1);
	return 1;
}

/*
 * Removal moves the entries that probed past the emptied slot back: ids
 * sharing one home slot (k << 40: the low bits mix to 0), one homed at
 * the last slot that wraps around to the first, and a churn against a
 * reference of which ids are in.
 */
static void test_removed_ids_go_and_the_others_stay_found(void **state UNUSED)
{
	static uint8_t in[4096];
	struct stacktab *tab;
	uint64_t seed = 88172645463325252ull;

	assert_int_equal(stacktab__new(&tab), 0);
	for (uint64_t k = 1; k <= 20; k++) {
		uint64_t id = k << 40, f = id + 1;

		assert_int_equal(stacktab__add(tab, id, &f, 1, 0), 0);
	}
	uint64_t last = 63, f_last = last + 1;	/* home: the last slot */

	assert_int_equal(stacktab__add(tab, last, &f_last, 1, 0), 0);
	for (uint64_t k = 1; k <= 20; k += 3)
		assert_int_equal(stacktab__remove(tab, k << 40), 0);
	assert_int_equal(stacktab__remove(tab, 1ull << 40), -ENOENT);
	assert_int_equal(stacktab__remove(tab, 0), -ENOENT);
	for (uint64_t k = 1; k <= 20; k++)
		assert_int_equal(has(tab, k << 40), (k - 1) % 3 != 0);
	assert_true(has(tab, last));
	assert_int_equal(stacktab__count(tab), 20 - 7 + 1);
	stacktab__free(tab);

	assert_int_equal(stacktab__new(&tab), 0);
	size_t count = 0;

	for (int step = 0; step < 20000; step++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		/* Clustered: (i + 1) << 40 homes at ((i + 1) << 8) & mask. */
		uint64_t i = seed % 4096, id = (i + 1) << 40, f = id + 1;

		if (in[i]) {
			assert_int_equal(stacktab__remove(tab, id), 0);
			in[i] = 0;
			count--;
		} else {
			assert_int_equal(stacktab__add(tab, id, &f, 1, 0), 0);
			in[i] = 1;
			count++;
		}
	}
	assert_int_equal(stacktab__count(tab), count);
	for (uint64_t i = 0; i < 4096; i++)
		assert_int_equal(has(tab, (i + 1) << 40), in[i]);
	stacktab__free(tab);
}

static void test_array_grows_by_doubling_and_refuses_overflow(void **state UNUSED)
{
	uint32_t *items = NULL;
	size_t cap = 0;

	assert_int_equal(array__grow(&items, &cap, 1, sizeof(*items)), 0);
	assert_int_equal(cap, 16);
	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(array__grow(&items, &cap, i + 1, sizeof(*items)), 0);
		items[i] = i;
	}
	assert_int_equal(cap, 128);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(items[i], i);
	assert_int_equal(array__grow(&items, &cap, SIZE_MAX / 2 + 2, 8), -ENOMEM);
	assert_int_equal(cap, 128);
	assert_int_equal(items[99], 99);
	free(items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_find_their_frames_through_growth),
		cmocka_unit_test(test_adding_an_id_again_replaces_it),
		cmocka_unit_test(test_removed_ids_go_and_the_others_stay_found),
		cmocka_unit_test(test_array_grows_by_doubling_and_refuses_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
