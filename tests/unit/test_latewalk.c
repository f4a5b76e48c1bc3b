// SPDX-License-Identifier: GPL-2.0
/*
 * latewalk: a stack the kernel cut at a module whose table came late,
 * finished over the copied stack bytes with the kernel's rules, filed
 * under the wait's id as an alias of the kernel's id for the same frames;
 * kept while a table is missing, given up (counted) at the end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "latewalk.h"

#define UNUSED __attribute__((unused))

/* Code at 0x1000-0x2000 (CFA = rsp + 16), 0x3000-0x4000 (the outermost
 * frame), 0x5000-0x6000 (rbp-based: CFA = rbp + 16, rbp at CFA - 16). */
struct rules {
	bool late_module_read;	/* 0x1000-0x2000: its table has come */
};

static int rule(void *ctx, pid_t pid UNUSED, uint64_t addr,
		struct sp_unwind_row *row, uint32_t *flags)
{
	const struct rules *r = ctx;

	*flags = 0;
	memset(row, 0, sizeof(*row));
	if (addr >= 0x1000 && addr < 0x2000) {
		if (!r->late_module_read)
			return -EAGAIN;
		row->cfa_reg = SP_UNWIND_CFA_RSP;
		row->cfa_offset = 16;
		return 0;
	}
	if (addr >= 0x5000 && addr < 0x6000) {
		row->cfa_reg = SP_UNWIND_CFA_RBP;
		row->cfa_offset = 16;
		row->rbp_rule = SP_UNWIND_RBP_AT_CFA;
		row->rbp_offset = -16;
		return 0;
	}
	if (addr >= 0x3000 && addr < 0x4000) {
		row->flags = SP_UNWIND_F_UNSUPPORTED | SP_UNWIND_F_RA_UNDEFINED;
		return 0;
	}
	return -EAGAIN;
}

static void put(struct sp_late_walk *rec, uint64_t at, uint64_t v)
{
	memcpy(rec->stack + (at - rec->sp), &v, 8);
}

/*
 * Kept by the kernel: 0x9000 (in libc's caller, already walked) and the
 * cut frame 0x1234, whose caller is 0x5678 (rbp-based), whose caller is
 * 0x3456, the thread's start.
 */
static struct sp_late_walk *cut_record(uint64_t id)
{
	struct sp_late_walk *rec = calloc(1, sizeof(*rec));

	rec->id = id;
	rec->tgid = 42;
	rec->n = 2;
	rec->pcs[0] = 0x9000;
	rec->pcs[1] = 0x1234;
	rec->pc = 0x1234;
	rec->sp = 0x7000;
	rec->bp = 0;
	rec->bp_known = 1;
	rec->lookup_ret = 1;
	rec->bytes = 256;
	/* 0x1234's frame (rsp-based): CFA 0x7010, its ra at 0x7008. */
	put(rec, 0x7008, 0x5678);
	/* 0x5678's (rbp-based; 0x1234 left rbp as it was): CFA = rbp + 16
	   = 0x7030, its ra at 0x7028, the caller's rbp at 0x7020. */
	rec->bp = 0x7020;
	put(rec, 0x7028, 0x3456);
	put(rec, 0x7020, 0);
	return rec;
}

static void test_a_cut_stack_is_finished_when_its_table_comes(void **state UNUSED)
{
	struct rules r = { .late_module_read = false };
	struct sp_late_walk *rec = cut_record(0xabc);
	struct latewalk_stats st;
	struct latewalks *lw;
	struct stacktab *tab;
	const uint64_t *frames;
	enum stacktab_end end;
	uint64_t want[4] = { 0x9000, 0x1234, 0x5678, 0x3456 };
	uint32_t n;

	assert_int_equal(stacktab__new(&tab), 0);
	assert_int_equal(latewalks__new(32, &lw), 0);
	assert_int_equal(latewalks__add(lw, rec, sizeof(*rec)), 0);
	/* The table is not read yet: kept. */
	assert_int_equal(latewalks__finish(lw, rule, &r, NULL, NULL, tab, false), 0);
	assert_int_equal(latewalks__pending(lw), 1);
	assert_int_equal(stacktab__get(tab, 0xabc, &frames, &n, &end), -ENOENT);
	/* Read: the whole stack, under the wait's id and the kernel's. */
	r.late_module_read = true;
	assert_int_equal(latewalks__finish(lw, rule, &r, NULL, NULL, tab, false), 0);
	assert_int_equal(latewalks__pending(lw), 0);
	assert_int_equal(stacktab__get(tab, 0xabc, &frames, &n, &end), 0);
	assert_int_equal(n, 4);
	assert_int_equal(end, STACKTAB_END_COMPLETE);
	assert_memory_equal(frames, want, sizeof(want));
	assert_int_equal(stacktab__canonical(tab, 0xabc),
			 latewalk__stack_id(want, 4, SP_STACK_COMPLETE));
	assert_int_equal(stacktab__get(tab, stacktab__canonical(tab, 0xabc),
				       &frames, &n, &end), 0);
	assert_int_equal(n, 4);
	latewalks__stats(lw, &st);
	assert_int_equal(st.kept, 1);
	assert_int_equal(st.finished, 1);
	assert_int_equal(st.cut, 0);
	latewalks__free(lw);
	stacktab__free(tab);
	free(rec);
}

static void test_a_walk_past_the_bytes_kept_or_never_read_is_cut(void **state UNUSED)
{
	struct rules r = { .late_module_read = true };
	struct sp_late_walk *rec = cut_record(0xdef);
	struct latewalk_stats st;
	struct latewalks *lw;
	struct stacktab *tab;
	const uint64_t *frames;
	enum stacktab_end end;
	uint32_t n;

	assert_int_equal(stacktab__new(&tab), 0);
	assert_int_equal(latewalks__new(32, &lw), 0);
	rec->bytes = 16;	/* the second frame's return address is beyond */
	assert_int_equal(latewalks__add(lw, rec, sizeof(*rec)), 0);
	r.late_module_read = false;
	rec->bytes = 256;
	rec->id = 0x123;
	assert_int_equal(latewalks__add(lw, rec, sizeof(*rec)), 0);
	r.late_module_read = true;
	/* The first runs out of bytes at once (cut); the second walks. */
	assert_int_equal(latewalks__finish(lw, rule, &r, NULL, NULL, tab, false), 0);
	assert_int_equal(stacktab__get(tab, 0xdef, &frames, &n, &end), -ENOENT);
	assert_int_equal(stacktab__canonical(tab, 0xdef), 0xdef);
	assert_int_equal(stacktab__get(tab, 0x123, &frames, &n, &end), 0);
	latewalks__stats(lw, &st);
	assert_int_equal(st.finished, 1);
	assert_int_equal(st.cut, 1);
	/* A table that never comes: given up at the end. */
	r.late_module_read = false;
	rec->id = 0x456;
	assert_int_equal(latewalks__add(lw, rec, sizeof(*rec)), 0);
	assert_int_equal(latewalks__finish(lw, rule, &r, NULL, NULL, tab, true), 0);
	assert_int_equal(latewalks__pending(lw), 0);
	latewalks__stats(lw, &st);
	assert_int_equal(st.cut, 2);
	assert_int_equal(st.kept, 3);
	latewalks__free(lw);
	stacktab__free(tab);
	free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_cut_stack_is_finished_when_its_table_comes),
		cmocka_unit_test(test_a_walk_past_the_bytes_kept_or_never_read_is_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
