// SPDX-License-Identifier: GPL-2.0
/*
 * folded: flame-graph lines byte for byte from stacks named by hand
 * (outermost first, the lock last, inlined and nameless frames, cut
 * stacks, threads, merging); then a whole report through a real
 * symbolizer, whose lines add up to the rows' waits.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "folded.h"
#include "stackfix.h"

#define UNUSED __attribute__((unused))

static const struct symbol_frame pop_frames[2] = {
	{ { "/opt/demo/libdemo.so", 0x1234, "queue_pop", 0, "/src/queue.c",
	    168 }, true, 160 },
	{ { "/opt/demo/libdemo.so", 0x1234, "drain", 0x24, "/src/drain.c",
	    190 }, false, 185 },
};
static const struct symbol_frame worker_frame = {
	{ "/opt/demo/demo", 0x99, "worker", 0x10, "/src/main.c", 201 }, false, 195,
};
static const struct symbol_frame rust_frame = {
	{ "/opt/demo/demo", 0x99, "<[u8; 4] as core::Foo>::bar", 0, NULL, 0 },
	false, 0,
};
static const struct symbol_frame nameless_frame = {
	{ "/usr/lib/libjit.so", 0x4000, NULL, 0, NULL, 0 }, false, 0,
};
static const struct symbol_frame unknown_frame;

static const struct rowstacks_pc pcs[] = {
	{ 0x7f0000001234, false, pop_frames, 2 },
	{ 0x5500000099, true, &worker_frame, 1 },
	{ 0x7f0000004000, false, &nameless_frame, 1 },
	{ 0x1000, true, &unknown_frame, 1 },
	{ 0x5500000099, true, &rust_frame, 1 },
};

static char *write_lines(struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(folded__write(f, out), 0);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static void test_lines(void **state UNUSED)
{
	struct rowstacks_stack stacks[] = {
		{ 0xaa, 620, 9884310000ull, 0, 0, &pcs[0], 2,
		  STACKTAB_END_COMPLETE },
		{ 0xbb, 200, 3000, 0, 0, &pcs[2], 2, STACKTAB_END_STOPPED },
		{ 0xcc, 2, 70, 0, 0, &pcs[4], 1, STACKTAB_END_TRUNCATED },
		{ 0xdd, 5, 0, 0, 5, &pcs[1], 1, STACKTAB_END_COMPLETE },
	};
	const struct rowstacks rs = { .stacks = stacks, .n_stacks = 4 };
	struct report_row row = {
		.type = SP_TYPE_CONDVAR, .object = 0x5500001000, .n_objects = 1,
		.tid = REPORT_NO_TID, .count = 827, .wait_ns = 9884313070ull,
	};
	struct folded *f;
	char *out;

	assert_int_equal(folded__new(&f), 0);
	/* Nothing added: nothing written. */
	out = write_lines(f);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(folded__add(f, &row, "queue+0x28", &rs), 0);
	out = write_lines(f);
	/* Sorted; the stack that waited no time is left out. */
	assert_string_equal(out,
		"[event];[truncated];<[u8, 4] as core::Foo>::bar;[condvar queue+0x28] 70\n"
		"[event];[unwinding stopped];[unknown];[libjit.so];[condvar queue+0x28] 3000\n"
		"[event];worker;drain;queue_pop_[i];[condvar queue+0x28] 9884310000\n");
	free(out);

	/* Nameless lock, coalesced locks, threads. */
	row.type = SP_TYPE_MUTEX;
	assert_int_equal(folded__add(f, &row, NULL,
				     &(struct rowstacks){ .stacks = stacks, .n_stacks = 1 }), 0);
	row.n_objects = 3;
	row.tid = 4242;
	assert_int_equal(folded__add(f, &row, "ignored",
				     &(struct rowstacks){ .stacks = stacks, .n_stacks = 1 }), 0);
	out = write_lines(f);
	assert_string_equal(out,
		"[lock];[tid 4242];worker;drain;queue_pop_[i];[mutex 3 objects] 9884310000\n"
		"[lock];worker;drain;queue_pop_[i];[mutex 0x5500001000] 9884310000\n");
	free(out);
	/* Written lines are gone. */
	out = write_lines(f);
	assert_string_equal(out, "");
	free(out);
	folded__free(f);
	folded__free(NULL);
}

/* Stacks that read the same (two rows, two objects) are one line. */
static void test_same_text_merges(void **state UNUSED)
{
	struct rowstacks_stack stack = { 0xaa, 1, 100, 0, 0, &pcs[1], 1,
					 STACKTAB_END_COMPLETE };
	const struct rowstacks rs = { .stacks = &stack, .n_stacks = 1 };
	struct report_row row = {
		.type = SP_TYPE_MUTEX, .n_objects = 1, .tid = REPORT_NO_TID,
	};
	struct folded *f;
	char *out;

	assert_int_equal(folded__new(&f), 0);
	assert_int_equal(folded__add(f, &row, "big_lock", &rs), 0);
	stack.wait_ns = 23;
	assert_int_equal(folded__add(f, &row, "big_lock", &rs), 0);
	assert_int_equal(folded__add(f, &row, "other", &rs), 0);
	out = write_lines(f);
	assert_string_equal(out,
		"[lock];worker;[mutex big_lock] 123\n"
		"[lock];worker;[mutex other] 23\n");
	free(out);
	folded__free(f);
}

/*
 * A report through a real symbolizer: the test's own functions, the
 * waits without a stack at the call site; every row's wait is in the
 * lines.
 */
static void test_report_adds_up(void **state UNUSED)
{
	struct symbolizer *sym = fix_symbolizer();
	struct stacktab *tab = fix_stacktab();
	struct report_stack stacks[2] = {
		{ FIX_STACK_ID, 3, 900, 500, 0 },
		{ FIX_SHORT_ID, 1, 100, 100, 0 },
	};
	struct report_row rows[2] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .n_objects = 1,
		  .callsite = FIX_MID_RET, .tid = REPORT_NO_TID, .count = 5,
		  .wait_ns = 1234, .max_ns = 500, .stacks = stacks,
		  .n_stacks = 2 },
		{ .type = SP_TYPE_SEM, .object = 0x20, .n_objects = 1,
		  .callsite = FIX_ROOT_RET, .tid = REPORT_NO_TID, .count = 1,
		  .wait_ns = 66, .max_ns = 66 },
	};
	const struct report_rows r = { rows, 2, 2 };
	const struct row_names names[2] = {
		{ .object_symbol = "big_lock" }, { .object_symbol = NULL },
	};
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	uint64_t total = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(sym);
	assert_non_null(tab);
	assert_non_null(out);
	assert_int_equal(folded__print(out, sym, tab, &r, names), 0);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(buf,
		"[lock];fix_root;fix_mid;fix_leaf;[mutex big_lock] 900\n"));
	assert_non_null(strstr(buf,
		"[lock];[truncated];fix_root;fix_mid;[mutex big_lock] 100\n"));
	assert_non_null(strstr(buf, "fix_mid;[mutex big_lock] 234\n"));
	assert_non_null(strstr(buf, "[lock];fix_root;[sem 0x20] 66\n"));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		total += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	assert_int_equal(total, 1234 + 66);
	free(buf);
	assert_int_equal(folded__print(stdout, NULL, tab, &r, names), -EINVAL);
	stacktab__free(tab);
	symbolizer__free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_same_text_merges),
		cmocka_unit_test(test_report_adds_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
