// SPDX-License-Identifier: GPL-2.0
/*
 * modtable: --skip ranges marked on rows (split at their edges, gaps
 * filled by frame-pointer rows only in a frame-pointer module), and the
 * tables of real fixtures: one with CFI, one built without unwind tables.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "modtable.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SKIP SP_UNWIND_A_SKIP

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *dir = getenv("SYNCPROF_FIXTURES");

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "build/tests/fixtures",
		 name);
	return path;
}

static int group_setup(void **state UNUSED)
{
	if (access(fixture("libunwind-fixture.so"), R_OK) ||
	    access(fixture("libunwind-fponly.so"), R_OK)) {
		fprintf(stderr, "no fixtures in build/tests/fixtures: build them with "
			"'make test' from the repository root, or set SYNCPROF_FIXTURES\n");
		return -1;
	}
	return 0;
}

static struct sp_unwind_row rsp_row(uint64_t start, uint64_t end, int32_t off)
{
	return (struct sp_unwind_row){
		.start = start, .end = end, .cfa_reg = SP_UNWIND_CFA_RSP,
		.cfa_offset = off,
	};
}

struct expect {
	uint64_t start, end;
	int32_t cfa_offset;
	uint8_t cfa_reg;
	uint32_t attrs;
};

static void assert_rows(const struct sp_unwind_row *rows, size_t n,
			const struct expect *want, size_t n_want)
{
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rows[i].start, want[i].start);
		assert_int_equal(rows[i].end, want[i].end);
		assert_int_equal(rows[i].cfa_offset, want[i].cfa_offset);
		assert_int_equal(rows[i].cfa_reg, want[i].cfa_reg);
		assert_int_equal(rows[i].attrs, want[i].attrs);
	}
}

static void test_no_ranges_keeps_the_rows(void **state UNUSED)
{
	const struct sp_unwind_row rows[] = { rsp_row(0x10, 0x20, 8),
					      rsp_row(0x20, 0x40, 16) };
	const struct expect want[] = { { 0x10, 0x20, 8, SP_UNWIND_CFA_RSP, 0 },
				       { 0x20, 0x40, 16, SP_UNWIND_CFA_RSP, 0 } };
	struct sp_unwind_row *out;
	size_t n;

	assert_int_equal(modtable__mark(rows, 2, NULL, 0, false, &out, &n), 0);
	assert_rows(out, n, want, ARRAY_SIZE(want));
	free(out);
}

static void test_range_inside_a_row_splits_it(void **state UNUSED)
{
	const struct sp_unwind_row rows[] = { rsp_row(0x10, 0x40, 8) };
	const struct skiplist_range skip[] = { { 0x18, 0x30, SKIP, true } };
	const struct expect want[] = { { 0x10, 0x18, 8, SP_UNWIND_CFA_RSP, 0 },
				       { 0x18, 0x30, 8, SP_UNWIND_CFA_RSP, SKIP },
				       { 0x30, 0x40, 8, SP_UNWIND_CFA_RSP, 0 } };
	struct sp_unwind_row *out;
	size_t n;

	assert_int_equal(modtable__mark(rows, 1, skip, 1, false, &out, &n), 0);
	assert_rows(out, n, want, ARRAY_SIZE(want));
	free(out);
}

static void test_ranges_across_rows(void **state UNUSED)
{
	const struct sp_unwind_row rows[] = { rsp_row(0x10, 0x20, 8),
					      rsp_row(0x20, 0x30, 16),
					      rsp_row(0x40, 0x50, 24) };
	const struct skiplist_range skip[] = { { 0x18, 0x28, SKIP, true },
						{ 0x2c, 0x48, SKIP, true } };
	const struct expect want[] = {
		{ 0x10, 0x18, 8, SP_UNWIND_CFA_RSP, 0 },
		{ 0x18, 0x20, 8, SP_UNWIND_CFA_RSP, SKIP },
		{ 0x20, 0x28, 16, SP_UNWIND_CFA_RSP, SKIP },
		{ 0x28, 0x2c, 16, SP_UNWIND_CFA_RSP, 0 },
		{ 0x2c, 0x30, 16, SP_UNWIND_CFA_RSP, SKIP },
		/* the gap 0x30-0x40 has no rule: it stays a gap */
		{ 0x40, 0x48, 24, SP_UNWIND_CFA_RSP, SKIP },
		{ 0x48, 0x50, 24, SP_UNWIND_CFA_RSP, 0 },
	};
	struct sp_unwind_row *out;
	size_t n;

	assert_int_equal(modtable__mark(rows, 3, skip, 2, false, &out, &n), 0);
	assert_rows(out, n, want, ARRAY_SIZE(want));
	free(out);
}

static void test_frame_pointer_module_fills_the_gaps_it_skips(void **state UNUSED)
{
	const struct sp_unwind_row rows[] = { rsp_row(0x20, 0x30, 8) };
	const struct skiplist_range skip[] = { { 0x10, 0x40, SKIP, true },
						{ 0x80, 0x90, SKIP, true } };
	const struct expect want[] = {
		{ 0x10, 0x20, 16, SP_UNWIND_CFA_RBP, SKIP },
		{ 0x20, 0x30, 8, SP_UNWIND_CFA_RSP, SKIP },
		{ 0x30, 0x40, 16, SP_UNWIND_CFA_RBP, SKIP },
		{ 0x80, 0x90, 16, SP_UNWIND_CFA_RBP, SKIP },
	};
	struct sp_unwind_row *out;
	size_t n;

	assert_int_equal(modtable__mark(rows, 1, skip, 2, true, &out, &n), 0);
	assert_rows(out, n, want, ARRAY_SIZE(want));
	for (size_t i = 0; i < n; i++) {
		if (out[i].cfa_reg != SP_UNWIND_CFA_RBP)
			continue;
		assert_int_equal(out[i].rbp_rule, SP_UNWIND_RBP_AT_CFA);
		assert_int_equal(out[i].rbp_offset, -16);
	}
	free(out);
}

static void test_no_rows_no_ranges(void **state UNUSED)
{
	struct sp_unwind_row *out = (void *)1;
	size_t n = 5;

	assert_int_equal(modtable__mark(NULL, 0, NULL, 0, true, &out, &n), 0);
	assert_null(out);
	assert_int_equal(n, 0);
}

static struct modtable *build(const char *name, const char *glob)
{
	struct skiplist *skip = NULL;
	struct elfimage *image;
	struct modtable *t;

	if (glob)
		assert_int_equal(skiplist__new(&glob, 1, &skip), 0);
	assert_int_equal(elfimage__open(fixture(name), &image), 0);
	assert_int_equal(modtable__build(image, skip, &t), 0);
	elfimage__close(image);
	skiplist__free(skip);
	return t;
}

static void test_module_with_cfi(void **state UNUSED)
{
	struct modtable *t = build("libunwind-fixture.so", NULL);
	size_t n;

	assert_false(modtable__frame_pointers(t));
	assert_non_null(modtable__rows(t, &n));
	assert_true(n > 10);
	assert_int_equal(modtable__skipped(t), 0);
	modtable__free(t);
}

static void test_skip_marks_only_the_function(void **state UNUSED)
{
	struct modtable *t = build("libunwind-fixture.so", "uw_asm_frame");
	struct elfimage_func f;
	struct elfimage *image;
	const struct sp_unwind_row *rows;
	size_t n, marked = 0;

	assert_int_equal(modtable__skipped(t), 1);
	assert_int_equal(elfimage__open(fixture("libunwind-fixture.so"), &image), 0);
	assert_int_equal(elfimage__find_func(image, "uw_asm_frame", &f), 0);
	elfimage__close(image);
	rows = modtable__rows(t, &n);
	for (size_t i = 0; i < n; i++) {
		bool inside = rows[i].start >= f.vaddr &&
			      rows[i].end <= f.vaddr + f.size;

		assert_int_equal(!!(rows[i].attrs & SKIP), inside);
		marked += inside;
		if (i)
			assert_true(rows[i - 1].end <= rows[i].start);
	}
	assert_true(marked > 0);
	modtable__free(t);
}

static void test_module_without_unwind_tables_uses_frame_pointers(void **state UNUSED)
{
	struct modtable *t = build("libunwind-fponly.so", NULL);
	const struct sp_unwind_row *rows;
	size_t n;

	assert_true(modtable__frame_pointers(t));
	rows = modtable__rows(t, &n);
	assert_int_equal(n, 0);
	assert_null(rows);
	modtable__free(t);

	t = build("libunwind-fponly.so", "uw_fp_*");
	rows = modtable__rows(t, &n);
	assert_true(modtable__frame_pointers(t));
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].attrs, SKIP);
	assert_int_equal(rows[0].cfa_reg, SP_UNWIND_CFA_RBP);
	assert_int_equal(rows[0].cfa_offset, 16);
	modtable__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_ranges_keeps_the_rows),
		cmocka_unit_test(test_range_inside_a_row_splits_it),
		cmocka_unit_test(test_ranges_across_rows),
		cmocka_unit_test(test_frame_pointer_module_fills_the_gaps_it_skips),
		cmocka_unit_test(test_no_rows_no_ranges),
		cmocka_unit_test(test_module_with_cfi),
		cmocka_unit_test(test_skip_marks_only_the_function),
		cmocka_unit_test(test_module_without_unwind_tables_uses_frame_pointers),
	};

	return cmocka_run_group_tests_name("modtable", tests, group_setup, NULL);
}
