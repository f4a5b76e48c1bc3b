// SPDX-License-Identifier: GPL-2.0
/*
 * rowstacks: a row's stacks named through a real symbolizer (of this test
 * process), in the row's order, adding up to the row: waits without a
 * known stack become a stack of the row's call site.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rowstacks.h"
#include "stackfix.h"

#define UNUSED __attribute__((unused))

static struct symbolizer *sym;
static struct stacktab *tab;

static int group_setup(void **state UNUSED)
{
	sym = fix_symbolizer();
	tab = fix_stacktab();
	return sym && tab ? 0 : -1;
}

static int group_teardown(void **state UNUSED)
{
	symbolizer__free(sym);
	stacktab__free(tab);
	return 0;
}

static void assert_function(const struct rowstacks_pc *pc, const char *name)
{
	const struct symbol_info *info = &pc->frames[pc->n_frames - 1].info;

	assert_non_null(info->function);
	assert_string_equal(info->function, name);
	assert_non_null(info->file);
	assert_non_null(strstr(info->file, "stackfix.h"));
	assert_true(info->line > 0);
}

static void test_stacks_named_innermost_first(void **state UNUSED)
{
	struct report_stack stacks[2] = {
		{ FIX_STACK_ID, 3, 900, 500, 0 },
		{ FIX_SHORT_ID, 1, 100, 100, 1 },
	};
	struct report_row row = {
		.callsite = FIX_MID_RET, .count = 4, .wait_ns = 1000,
		.max_ns = 500, .failed = 1, .stacks = stacks, .n_stacks = 2,
	};
	struct rowstacks rs = { 0 };

	assert_int_equal(rowstacks__name(&rs, sym, tab, &row), 0);
	/* All waits have a stack: no call-site stack. */
	assert_int_equal(rs.n_stacks, 2);
	assert_int_equal(rs.stacks[0].stack_id, FIX_STACK_ID);
	assert_int_equal(rs.stacks[0].count, 3);
	assert_int_equal(rs.stacks[0].wait_ns, 900);
	assert_int_equal(rs.stacks[0].max_ns, 500);
	assert_int_equal(rs.stacks[0].end, STACKTAB_END_COMPLETE);
	assert_int_equal(rs.stacks[0].n_pcs, 3);
	assert_int_equal(rs.stacks[0].pcs[0].pc, FIX_LEAF_RET);
	for (size_t i = 0; i < 3; i++)
		assert_true(rs.stacks[0].pcs[i].is_return_address);
	assert_function(&rs.stacks[0].pcs[0], "fix_leaf");
	assert_function(&rs.stacks[0].pcs[1], "fix_mid");
	assert_function(&rs.stacks[0].pcs[2], "fix_root");
	/* A return address is one past the call, looked up at the call. */
	assert_int_equal(rs.stacks[0].pcs[0].frames[0].info.function_offset, 1);
	assert_int_equal(rs.stacks[0].pcs[1].frames[0].info.function_offset, 1);

	assert_int_equal(rs.stacks[1].stack_id, FIX_SHORT_ID);
	assert_int_equal(rs.stacks[1].failed, 1);
	assert_int_equal(rs.stacks[1].end, STACKTAB_END_TRUNCATED);
	assert_int_equal(rs.stacks[1].n_pcs, 2);
	assert_function(&rs.stacks[1].pcs[0], "fix_mid");
	assert_function(&rs.stacks[1].pcs[1], "fix_root");
	rowstacks__release(&rs);
}

/* Waits without a stack, or with one the table lacks: the call site. */
static void test_the_rest_at_the_call_site(void **state UNUSED)
{
	struct report_stack stacks[2] = {
		{ FIX_STACK_ID, 3, 900, 500, 0 },
		{ 0x777, 2, 50, 40, 0 },	/* not in the table */
	};
	struct report_row row = {
		.callsite = FIX_MID_RET, .count = 10, .wait_ns = 2000,
		.max_ns = 700, .failed = 2, .stacks = stacks, .n_stacks = 2,
	};
	struct rowstacks rs = { 0 };

	assert_int_equal(rowstacks__name(&rs, sym, tab, &row), 0);
	assert_int_equal(rs.n_stacks, 2);
	assert_int_equal(rs.stacks[0].stack_id, FIX_STACK_ID);
	assert_int_equal(rs.stacks[1].stack_id, 0);
	assert_int_equal(rs.stacks[1].count, 7);
	assert_int_equal(rs.stacks[1].wait_ns, 1100);
	assert_int_equal(rs.stacks[1].failed, 2);
	/* The row's longest wait was not in a known stack. */
	assert_int_equal(rs.stacks[1].max_ns, 700);
	assert_int_equal(rs.stacks[1].end, STACKTAB_END_COMPLETE);
	assert_int_equal(rs.stacks[1].n_pcs, 1);
	assert_int_equal(rs.stacks[1].pcs[0].pc, FIX_MID_RET);
	assert_true(rs.stacks[1].pcs[0].is_return_address);
	assert_function(&rs.stacks[1].pcs[0], "fix_mid");

	/* Reused for a row without stacks, or without a table. */
	row.stacks = NULL;
	row.n_stacks = 0;
	row.callsite = FIX_ROOT_RET;
	assert_int_equal(rowstacks__name(&rs, sym, NULL, &row), 0);
	assert_int_equal(rs.n_stacks, 1);
	assert_int_equal(rs.stacks[0].stack_id, 0);
	assert_int_equal(rs.stacks[0].count, 10);
	assert_int_equal(rs.stacks[0].wait_ns, 2000);
	assert_int_equal(rs.stacks[0].max_ns, 700);
	assert_int_equal(rs.stacks[0].n_pcs, 1);
	assert_function(&rs.stacks[0].pcs[0], "fix_root");
	rowstacks__release(&rs);
	rowstacks__release(&rs);
}

/* An address no module maps is a frame still: its address. */
static void test_unmapped_pc(void **state UNUSED)
{
	const uint64_t frames[2] = { 0x10, 0x20 };
	struct stacktab *t;
	struct report_stack stacks[1] = { { 9, 1, 10, 10, 0 } };
	struct report_row row = {
		.callsite = 0x20, .count = 1, .wait_ns = 10, .max_ns = 10,
		.stacks = stacks, .n_stacks = 1,
	};
	struct rowstacks rs = { 0 };

	assert_int_equal(stacktab__new(&t), 0);
	assert_int_equal(stacktab__add(t, 9, frames, 2, STACKTAB_END_STOPPED), 0);
	assert_int_equal(rowstacks__name(&rs, sym, t, &row), 0);
	assert_int_equal(rs.n_stacks, 1);
	assert_int_equal(rs.stacks[0].end, STACKTAB_END_STOPPED);
	assert_int_equal(rs.stacks[0].n_pcs, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(rs.stacks[0].pcs[i].n_frames, 1);
		assert_null(rs.stacks[0].pcs[i].frames[0].info.module);
		assert_null(rs.stacks[0].pcs[i].frames[0].info.function);
	}
	rowstacks__release(&rs);
	stacktab__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_named_innermost_first),
		cmocka_unit_test(test_the_rest_at_the_call_site),
		cmocka_unit_test(test_unmapped_pc),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
