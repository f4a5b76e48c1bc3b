// SPDX-License-Identifier: GPL-2.0
/*
 * callarg__parse: the DWARF expressions a call site's argument and a
 * variable's location are read as register + offset from, as GCC emits
 * them (DW_OP_breg3 0; DW_OP_entry_value(DW_OP_reg5) DW_OP_plus_uconst
 * 0x30; DW_OP_breg3 -8 DW_OP_stack_value), and the forms that must
 * not be read so: memory (a breg location without stack_value, a
 * deref), the frame base, constants.  The names themselves, through
 * real DWARF, are tests/integration/test_members.py's.
 */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "callarg.h"

#define UNUSED __attribute__((unused))
#define N(ops) (sizeof(ops) / sizeof((ops)[0]))

static void test_call_values(void **state UNUSED)
{
	Dwarf_Op breg[] = { { .atom = DW_OP_breg3, .number = 0 } };
	Dwarf_Op entry[] = { { .atom = DW_OP_entry_value, .number = 1 },
			     { .atom = DW_OP_plus_uconst, .number = 0x30 } };
	Dwarf_Op sum[] = { { .atom = DW_OP_bregx, .number = 40, .number2 = 16 },
			   { .atom = DW_OP_lit8 }, { .atom = DW_OP_minus },
			   { .atom = DW_OP_constu, .number = 0x100 },
			   { .atom = DW_OP_plus } };
	struct callarg_value v;

	assert_int_equal(callarg__parse(breg, N(breg), -1, false, &v), 0);
	assert_int_equal(v.reg, 3);
	assert_false(v.entry);
	assert_int_equal(v.offset, 0);
	assert_int_equal(callarg__parse(entry, N(entry), 5, false, &v), 0);
	assert_int_equal(v.reg, 5);
	assert_true(v.entry);
	assert_int_equal(v.offset, 0x30);
	/* An entry value of anything but one register: not read. */
	assert_int_equal(callarg__parse(entry, N(entry), -1, false, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(sum, N(sum), -1, false, &v), 0);
	assert_int_equal(v.reg, 40);
	assert_int_equal(v.offset, 16 - 8 + 0x100);
}

static void test_locations(void **state UNUSED)
{
	Dwarf_Op reg[] = { { .atom = DW_OP_reg5 } };
	Dwarf_Op regx[] = { { .atom = DW_OP_regx, .number = 17 } };
	Dwarf_Op value[] = { { .atom = DW_OP_breg3, .number = (Dwarf_Word)-8 },
			     { .atom = DW_OP_stack_value } };
	Dwarf_Op entry[] = { { .atom = DW_OP_GNU_entry_value, .number = 1 },
			     { .atom = DW_OP_stack_value } };
	struct callarg_value v;

	assert_int_equal(callarg__parse(reg, N(reg), -1, true, &v), 0);
	assert_int_equal(v.reg, 5);
	assert_int_equal(v.offset, 0);
	assert_int_equal(callarg__parse(regx, N(regx), -1, true, &v), 0);
	assert_int_equal(v.reg, 17);
	assert_int_equal(callarg__parse(value, N(value), -1, true, &v), 0);
	assert_int_equal(v.reg, 3);
	assert_int_equal(v.offset, -8);
	assert_int_equal(callarg__parse(entry, N(entry), 5, true, &v), 0);
	assert_true(v.entry);
	assert_int_equal(v.reg, 5);
}

static void test_other_forms_refused(void **state UNUSED)
{
	/* A variable in memory at rbx-8: not its value. */
	Dwarf_Op memory[] = { { .atom = DW_OP_breg3, .number = (Dwarf_Word)-8 } };
	Dwarf_Op deref[] = { { .atom = DW_OP_breg3, .number = 0 },
			     { .atom = DW_OP_deref } };
	Dwarf_Op fbreg[] = { { .atom = DW_OP_fbreg, .number = (Dwarf_Word)-24 } };
	Dwarf_Op addr[] = { { .atom = DW_OP_addr, .number = 0x4228 } };
	Dwarf_Op lit[] = { { .atom = DW_OP_lit0 }, { .atom = DW_OP_stack_value } };
	Dwarf_Op reg_plus[] = { { .atom = DW_OP_reg5 },
				{ .atom = DW_OP_plus_uconst, .number = 8 } };
	Dwarf_Op early[] = { { .atom = DW_OP_breg3, .number = 0 },
			     { .atom = DW_OP_stack_value },
			     { .atom = DW_OP_plus_uconst, .number = 8 } };
	Dwarf_Op dangling[] = { { .atom = DW_OP_breg3, .number = 0 },
				{ .atom = DW_OP_lit8 } };
	struct callarg_value v;

	assert_int_equal(callarg__parse(memory, N(memory), -1, true, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(deref, N(deref), -1, false, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(fbreg, N(fbreg), -1, false, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(addr, N(addr), -1, false, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(lit, N(lit), -1, true, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(reg_plus, N(reg_plus), -1, true, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(early, N(early), -1, true, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(dangling, N(dangling), -1, false, &v), -ENOTSUP);
	/* A call value is an expression: stack_value has no place there. */
	assert_int_equal(callarg__parse(early, 2, -1, false, &v), -ENOTSUP);
	assert_int_equal(callarg__parse(memory, 0, -1, false, &v), -ENOTSUP);
}

static void test_abi(void **state UNUSED)
{
	struct callarg_abi abi;

	assert_int_equal(callarg__abi(EM_X86_64, &abi), 0);
	assert_int_equal(abi.arg_reg[0], 5);	/* rdi */
	assert_int_equal(abi.arg_reg[1], 4);	/* rsi */
	assert_int_equal(callarg__abi(EM_AARCH64, &abi), 0);
	assert_int_equal(abi.arg_reg[0], 0);
	assert_int_equal(callarg__abi(EM_386, &abi), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_values),
		cmocka_unit_test(test_locations),
		cmocka_unit_test(test_other_forms_refused),
		cmocka_unit_test(test_abi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
