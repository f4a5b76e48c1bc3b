// SPDX-License-Identifier: GPL-2.0
/*
 * Probe placement on real instruction bytes: glibc 2.36's lock functions
 * as Debian ships them, and prefixes that must keep the probe at entry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "calibrate.h"
#include "probesite.h"

#define UNUSED __attribute__((unused))
#define FIND(bytes, site) \
	assert_int_equal(probesite__find(bytes, sizeof(bytes), 0x8c370, site), 0)

static void test_mutex_lock_skips_three_stepped_instructions(void **state UNUSED)
{
	/* mov 0x10(%rdi),%eax; mov %eax,%edx; and $0x17f,%edx; and $0x7c,%eax;
	 * jne +0xac; push %rbx */
	static const uint8_t code[] = {
		0x8b, 0x47, 0x10, 0x89, 0xc2, 0x81, 0xe2, 0x7f, 0x01, 0x00, 0x00,
		0x83, 0xe0, 0x7c, 0x0f, 0x85, 0xac, 0x00, 0x00, 0x00, 0x53,
	};
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_int_equal(site.offset, 0xe);
	assert_string_equal(site.insn, "jne 0x8c430");
}

static void test_push_at_entry_stays_at_entry(void **state UNUSED)
{
	/* pthread_mutex_trylock: push %r14; push %r13 */
	static const uint8_t code[] = { 0x41, 0x56, 0x41, 0x55 };
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_int_equal(site.offset, 0);
	assert_string_equal(site.insn, "push r14");
}

static void test_timedlock_moves_other_registers_then_jumps(void **state UNUSED)
{
	/* mov %rsi,%rdx; xor %esi,%esi; jmp rel32: rdi and rsp untouched */
	static const uint8_t code[] = {
		0x48, 0x89, 0xf2, 0x31, 0xf6, 0xe9, 0x26, 0xf6, 0xff, 0xff,
	};
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_int_equal(site.offset, 5);
}

static void test_compare_then_branch(void **state UNUSED)
{
	/* pthread_mutex_clocklock: cmp $0x1,%esi; ja +0xb */
	static const uint8_t code[] = { 0x83, 0xfe, 0x01, 0x77, 0x0b, 0xe9, 0, 0, 0, 0 };
	struct probesite site;

	FIND(code, &site);
	assert_int_equal(site.offset, 3);
}

static void test_stack_change_before_branch_keeps_entry(void **state UNUSED)
{
	/* sub $0x10,%rsp; jne: [rsp] is no longer the return address */
	static const uint8_t code[] = { 0x48, 0x83, 0xec, 0x10, 0x75, 0x02, 0x90, 0xc3 };
	struct probesite site;

	FIND(code, &site);
	assert_false(site.emulated);
	assert_int_equal(site.offset, 0);
}

static void test_first_argument_clobbered_keeps_entry(void **state UNUSED)
{
	/* mov %rsi,%rdi; jmp: the object would be lost */
	static const uint8_t code[] = { 0x48, 0x89, 0xf7, 0xeb, 0x00, 0xc3 };
	struct probesite site;

	FIND(code, &site);
	assert_false(site.emulated);
	assert_int_equal(site.offset, 0);
}

static void test_branch_into_prefix_is_a_rehit_site(void **state UNUSED)
{
	/*
	 * 0: mov %edi,%eax   2: mov %eax,%edx   4: jne 0x8c372 (back into the
	 * prefix: a probe at 4 fires once per pass, marked rehit)
	 */
	static const uint8_t code[] = { 0x89, 0xf8, 0x89, 0xc2, 0x75, 0xfc, 0xc3 };
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_true(site.rehit);
	assert_int_equal(site.offset, 4);
}

static void test_trywrlock_probed_in_its_retry_loop(void **state UNUSED)
{
	/*
	 * pthread_rwlock_trywrlock: mov (%rdi),%eax; mov 0x30(%rdi),%ecx;
	 * test $2,%al; jne +0x37; ... lock cmpxchg %edx,(%rdi); jne <+5>
	 */
	static const uint8_t code[] = {
		0x8b, 0x07, 0x8b, 0x4f, 0x30, 0xa8, 0x02, 0x75, 0x37,
		0x89, 0xc6, 0xc1, 0xee, 0x03, 0x75, 0x28, 0x89, 0xc2,
		0x83, 0xca, 0x03, 0xf0, 0x0f, 0xb1, 0x17, 0x75, 0xea,
	};
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_true(site.rehit);
	assert_int_equal(site.offset, 7);
}

static void test_call_before_site_keeps_entry(void **state UNUSED)
{
	/* test %edi,%edi; (a call would run other code first) ret; nop */
	static const uint8_t code[] = { 0x85, 0xff, 0xc3, 0x90 };
	struct probesite site;

	FIND(code, &site);
	assert_false(site.emulated);
	assert_int_equal(site.offset, 0);
}

static void test_store_before_branch_keeps_entry(void **state UNUSED)
{
	/* mov %rdi,(%rsp): the return address is overwritten; then jne */
	static const uint8_t code[] = { 0x48, 0x89, 0x3c, 0x24, 0x75, 0x02, 0x90, 0xc3 };
	struct probesite site;

	FIND(code, &site);
	assert_false(site.emulated);
	assert_int_equal(site.offset, 0);
}

static void test_spin_lock_probed_inside_its_loop(void **state UNUSED)
{
	/*
	 * pthread_spin_lock: lock decl (%rdi) (refused by the kernel);
	 * jne +0xb; xor; ret; nopl; pause; cmpl $0,(%rdi); jg <start>;
	 * jmp <pause>.  The jne is hit on every attempt: rehit.
	 */
	static const uint8_t code[] = {
		0xf0, 0xff, 0x0f, 0x75, 0x0b, 0x31, 0xc0, 0xc3,
		0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xf3, 0x90, 0x83, 0x3f, 0x00, 0x7f, 0xe9, 0xeb, 0xf7,
	};
	struct probesite site;

	FIND(code, &site);
	assert_true(site.emulated);
	assert_false(site.refused);
	assert_true(site.rehit);
	assert_int_equal(site.offset, 3);
}

static void test_refused_entry_with_no_site_is_refused(void **state UNUSED)
{
	/* lock incl (%rdi); mov %rsi,(%rsp); jne: the store hides [rsp] */
	static const uint8_t code[] = {
		0xf0, 0xff, 0x07, 0x48, 0x89, 0x34, 0x24, 0x75, 0x00, 0xc3,
	};
	struct probesite site;

	FIND(code, &site);
	assert_true(site.refused);
	assert_false(site.rehit);
}

static void test_ordinary_sites_are_not_rehit(void **state UNUSED)
{
	/* pthread_mutex_clocklock: cmp $0x1,%esi; ja +0xb */
	static const uint8_t code[] = { 0x83, 0xfe, 0x01, 0x77, 0x0b, 0xe9, 0, 0, 0, 0 };
	struct probesite site;

	FIND(code, &site);
	assert_false(site.rehit);
	assert_false(site.refused);
}

static void test_emulated_opcodes(void **state UNUSED)
{
	assert_true(probesite__is_emulated((const uint8_t *)"\x55", 1));
	assert_true(probesite__is_emulated((const uint8_t *)"\x41\x57", 2));
	assert_true(probesite__is_emulated((const uint8_t *)"\x90", 1));
	assert_true(probesite__is_emulated((const uint8_t *)"\xeb\x05", 2));
	assert_true(probesite__is_emulated((const uint8_t *)"\x74\x05", 2));
	assert_true(probesite__is_emulated((const uint8_t *)"\x0f\x84\0\0\0\0", 6));
	assert_true(probesite__is_emulated((const uint8_t *)"\xe8\0\0\0\0", 5));
	assert_true(probesite__is_emulated((const uint8_t *)"\x0f\x1f\x44\x00\x00", 5));
	/* Single-stepped: mov, test, lea, endbr64, prefixed branches. */
	assert_false(probesite__is_emulated((const uint8_t *)"\x48\x89\xe5", 3));
	assert_false(probesite__is_emulated((const uint8_t *)"\x85\xff", 2));
	assert_false(probesite__is_emulated((const uint8_t *)"\xf3\x0f\x1e\xfa", 4));
	assert_false(probesite__is_emulated((const uint8_t *)"\x66\x90", 2));
	assert_false(probesite__is_emulated((const uint8_t *)"\xf2\xe9\0\0\0\0", 6));
	assert_false(probesite__is_emulated((const uint8_t *)"", 0));
}

static void test_undecodable_bytes_keep_entry(void **state UNUSED)
{
	static const uint8_t code[] = { 0x0f, 0x0b, 0x0f, 0x0b };	/* ud2 ud2 */
	struct probesite site;

	FIND(code, &site);
	assert_false(site.emulated);
	assert_int_equal(site.offset, 0);
}

static void test_median(void **state UNUSED)
{
	uint64_t odd[] = { 9, 1, 5, 7, 3 };
	uint64_t even[] = { 40, 10, 30, 20 };
	uint64_t one[] = { 42 };

	assert_int_equal(calibrate__median(odd, 5), 5);
	assert_int_equal(odd[0], 1);	/* sorted in place */
	assert_int_equal(odd[4], 9);
	assert_int_equal(calibrate__median(even, 4), 25);
	assert_int_equal(calibrate__median(one, 1), 42);
	assert_int_equal(calibrate__median(NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_lock_skips_three_stepped_instructions),
		cmocka_unit_test(test_push_at_entry_stays_at_entry),
		cmocka_unit_test(test_timedlock_moves_other_registers_then_jumps),
		cmocka_unit_test(test_compare_then_branch),
		cmocka_unit_test(test_stack_change_before_branch_keeps_entry),
		cmocka_unit_test(test_first_argument_clobbered_keeps_entry),
		cmocka_unit_test(test_branch_into_prefix_is_a_rehit_site),
		cmocka_unit_test(test_trywrlock_probed_in_its_retry_loop),
		cmocka_unit_test(test_call_before_site_keeps_entry),
		cmocka_unit_test(test_store_before_branch_keeps_entry),
		cmocka_unit_test(test_spin_lock_probed_inside_its_loop),
		cmocka_unit_test(test_refused_entry_with_no_site_is_refused),
		cmocka_unit_test(test_ordinary_sites_are_not_rehit),
		cmocka_unit_test(test_emulated_opcodes),
		cmocka_unit_test(test_undecodable_bytes_keep_entry),
		cmocka_unit_test(test_median),
	};

	return cmocka_run_group_tests_name("probesite", tests, NULL, NULL);
}
