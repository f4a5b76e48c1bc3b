// SPDX-License-Identifier: GPL-2.0
/*
 * callgraph: the -g text under a row, byte for byte, from stacks named by
 * hand: shares, inlined frames, frames without names, how stacks end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "callgraph.h"
#include "names.h"

#define UNUSED __attribute__((unused))

static char *print(const struct report_row *row, const struct rowstacks *rs,
		   const char *root)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	callgraph__print(f, row, rs, root, root ? strlen(root) : 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* worker -> drain (inlined) -> queue_pop, in libdemo; then libc. */
static const struct symbol_frame pop_frames[2] = {
	{ { "/opt/demo/libdemo.so", 0x1234, "queue_pop", 0, "/src/demo/queue.c",
	    168 }, true, 160 },
	{ { "/opt/demo/libdemo.so", 0x1234, "drain", 0x24, "/src/demo/drain.c",
	    190 }, false, 185 },
};
static const struct symbol_frame worker_frame = {
	{ "/opt/demo/demo", 0x99, "worker", 0x10, "/src/demo/main.c", 201 },
	false, 195,
};
static const struct symbol_frame libc_frame = {
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x8e3a, "start_thread", 0x2a,
	  NULL, 0 }, false, 0,
};
static const struct symbol_frame nameless_frame = {
	{ "/usr/lib/libjit.so", 0x4000, NULL, 0, NULL, 0 }, false, 0,
};
static const struct symbol_frame unknown_frame;

static void test_stacks_under_a_row(void **state UNUSED)
{
	const struct rowstacks_pc pcs[] = {
		{ 0x7f0000001234, false, pop_frames, 2 },
		{ 0x5500000099, true, &worker_frame, 1 },
		{ 0x7f0000008e3a, true, &libc_frame, 1 },
		/* the second stack */
		{ 0x7f0000004000, false, &nameless_frame, 1 },
		{ 0x1000, true, &unknown_frame, 1 },
		/* the call site alone */
		{ 0x5500000099, true, &worker_frame, 1 },
	};
	struct rowstacks_stack stacks[] = {
		{ 0xaa, 620, 9884310000ull, 18513470, 0, &pcs[0], 3,
		  STACKTAB_END_COMPLETE },
		{ 0xbb, 200, 3000000000ull, 0, 2, &pcs[3], 2,
		  STACKTAB_END_STOPPED },
		{ 0, 50, 974000000ull, 0, 0, &pcs[5], 1, STACKTAB_END_COMPLETE },
	};
	const struct rowstacks rs = { .stacks = stacks, .n_stacks = 3 };
	const struct report_row row = {
		.count = 870, .wait_ns = 13858310000ull, .failed = 2,
	};
	char *out = print(&row, &rs, "/src/demo/");

	assert_string_equal(out,
		"    --71.32%-- 620 waits (71.26%)  9.88431 s  max 18513.47 us\n"
		"            queue_pop (queue.c:168) [inlined]\n"
		"            drain (drain.c:190)\n"
		"            worker (main.c:201)\n"
		"            start_thread (libc.so.6)\n"
		"    --21.65%-- 200 waits (22.99%)  3.00000 s  failed 2\n"
		"            libjit.so+0x4000\n"
		"            0x1000\n"
		"            ... (the unwinding stopped here)\n"
		"    --7.03%-- 50 waits (5.75%)  0.97400 s  (no stack kept: the call site)\n"
		"            worker (main.c:201)\n");
	free(out);

	/* Without a root, files are whole; a cut stack says so. */
	stacks[0].end = STACKTAB_END_TRUNCATED;
	rs.stacks[0].n_pcs = 1;
	out = print(&row, &(struct rowstacks){ .stacks = stacks, .n_stacks = 1 },
		    NULL);
	assert_string_equal(out,
		"    --71.32%-- 620 waits (71.26%)  9.88431 s  max 18513.47 us\n"
		"            queue_pop (/src/demo/queue.c:168) [inlined]\n"
		"            drain (/src/demo/drain.c:190)\n"
		"            ... (--stack-depth reached)\n");
	free(out);
}

/* A row that waited no time (failures only) shares by count. */
static void test_share_by_count_without_wait(void **state UNUSED)
{
	const struct rowstacks_pc pc = { 0x5500000099, true, &worker_frame, 1 };
	struct rowstacks_stack stack = { 0xaa, 1, 0, 0, 3, &pc, 1,
					 STACKTAB_END_COMPLETE };
	const struct rowstacks rs = { .stacks = &stack, .n_stacks = 1 };
	const struct report_row row = { .count = 4, .failed = 3 };
	char *out = print(&row, &rs, NULL);

	assert_string_equal(out,
		"    --25.00%-- 1 wait (25.00%)  0.00000 s  failed 3\n"
		"            worker (/src/demo/main.c:201)\n");
	free(out);
}

static void test_frame_text(void **state UNUSED)
{
	char buf[64];
	struct symbol_frame f = worker_frame;

	names__frame_text(&f, 0x99, "/src/", 5, buf, sizeof(buf));
	assert_string_equal(buf, "worker (demo/main.c:201)");
	/* A root that is not the file's is not cut. */
	names__frame_text(&f, 0x99, "/other/", 7, buf, sizeof(buf));
	assert_string_equal(buf, "worker (/src/demo/main.c:201)");
	f.inlined = true;
	names__frame_text(&f, 0x99, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "worker (/src/demo/main.c:201) [inlined]");
	f = (struct symbol_frame){ .info = { .function = "f\x1b[2Jx" } };
	names__frame_text(&f, 0x99, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "f?[2Jx");
	f = (struct symbol_frame){ .info = { .file = "/a.c", .line = 3 } };
	names__frame_text(&f, 0x99, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "/a.c:3");
	names__frame_text(&unknown_frame, 0xabc, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "0xabc");
}

/* Two stacks apart only by return addresses in the same lines: one. */
static void test_stacks_alike_on_screen_print_once(void **state UNUSED)
{
	const struct rowstacks_pc pcs[] = {
		{ 0x5500000099, true, &worker_frame, 1 },
		{ 0x7f0000008e3a, true, &libc_frame, 1 },
		{ 0x55000000a1, true, &worker_frame, 1 },
		{ 0x7f0000008e3a, true, &libc_frame, 1 },
	};
	struct rowstacks_stack stacks[] = {
		{ 0xaa, 6, 3000, 900, 1, &pcs[0], 2, STACKTAB_END_COMPLETE },
		{ 0xbb, 4, 1000, 700, 0, &pcs[2], 2, STACKTAB_END_COMPLETE },
	};
	const struct rowstacks rs = { .stacks = stacks, .n_stacks = 2 };
	const struct report_row row = { .count = 10, .wait_ns = 4000, .failed = 1 };
	char *out = print(&row, &rs, "/src/demo/");

	assert_non_null(strstr(out, "--100.00%-- 10 waits (100.00%)"));
	assert_non_null(strstr(out, "max 0.90 us  failed 1"));
	assert_null(strstr(strstr(out, "start_thread") + 1, "worker"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_under_a_row),
		cmocka_unit_test(test_stacks_alike_on_screen_print_once),
		cmocka_unit_test(test_share_by_count_without_wait),
		cmocka_unit_test(test_frame_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
