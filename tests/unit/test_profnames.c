// SPDX-License-Identifier: GPL-2.0
/*
 * profnames: rows named through a symbolizer and kept as copies make,
 * through pprof__add_from, the very profile pprof__print makes from the
 * symbolizer itself; and they still do once the symbolizer and the stack
 * table are freed (nothing in the copies points into them).  The stacks
 * are the test's own functions (stackfix.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "pprof.h"
#include "profile.pb-c.h"
#include "profnames.h"
#include "stackfix.h"

#define UNUSED __attribute__((unused))

typedef Perftools__Profiles__Profile Profile;

static const struct pprof_window window = {
	.pid = 321,
	.comm = "demo",
	.mode = "full",
	.start_ns = 1000000000ull,
	.end_ns = 4000000000ull,
	.symbolized = true,
};

/* gzip's member inflated and unpacked. */
static Profile *unpack(const char *gz, size_t len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	Profile *p;

	assert_non_null(raw);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	assert_non_null(p);
	return p;
}

/* p packed again with its start time left out (the clock's, at make). */
static uint8_t *repack(Profile *p, size_t *len)
{
	uint8_t *buf;

	p->time_nanos = 0;
	*len = perftools__profiles__profile__get_packed_size(p);
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	perftools__profiles__profile__pack(p, buf);
	return buf;
}

static void test_copies_make_the_same_profile(void **state UNUSED)
{
	struct symbolizer *sym = fix_symbolizer();
	struct stacktab *tab = fix_stacktab();
	struct report_stack stacks[2] = {
		{ FIX_STACK_ID, 3, 900, 500, 0 },
		{ FIX_SHORT_ID, 1, 100, 100, 0 },
	};
	struct report_row rows[2] = {
		{ .type = SP_TYPE_MUTEX, .object = 0x10, .n_objects = 1,
		  .callsite = FIX_MID_RET, .tid = REPORT_NO_TID, .pid = 321,
		  .count = 5, .wait_ns = 1234, .max_ns = 500,
		  .stacks = stacks, .n_stacks = 2 },
		{ .type = SP_TYPE_CONDVAR, .object = 0x20, .n_objects = 4,
		  .callsite = FIX_ROOT_RET, .tid = 77, .pid = 321, .count = 2,
		  .wait_ns = 66, .max_ns = 66 },
	};
	const struct report_rows r = { rows, 2, 2 };
	struct row_names *names = NULL;
	struct profnames *pn = NULL;
	struct pprof *pp = NULL;
	char *direct = NULL, *copied = NULL;
	size_t direct_len = 0, copied_len = 0, a_len, b_len;
	FILE *out;
	Profile *a, *b;
	uint8_t *a_bytes, *b_bytes;

	assert_non_null(sym);
	assert_non_null(tab);
	/* From the symbolizer, as -f pprof makes it. */
	assert_int_equal(names__rows(sym, &r, &names), 0);
	out = open_memstream(&direct, &direct_len);
	assert_non_null(out);
	assert_int_equal(pprof__print(out, sym, tab, &window, &r, names), 0);
	assert_int_equal(fclose(out), 0);
	free(names);

	/* From the copies, with the symbolizer and the stacks gone. */
	assert_int_equal(profnames__new(2, &pn), 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(profnames__name(pn, i, sym, tab, &rows[i],
						 NULL, NULL), 0);
	assert_true(profnames__bytes(pn) > 0);
	symbolizer__free(sym);
	stacktab__free(tab);
	assert_int_equal(profnames__stacks(pn, 0)->n_stacks, 3);
	assert_int_equal(profnames__stacks(pn, 1)->n_stacks, 1);
	assert_int_equal(pprof__new(&window, &pp), 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(pprof__add_from(pp, profnames__source(pn),
				&rows[i], profnames__names(pn)[i].object_symbol,
				profnames__stacks(pn, i)), 0);
	out = open_memstream(&copied, &copied_len);
	assert_non_null(out);
	assert_int_equal(pprof__finish(pp, out), 0);
	assert_int_equal(fclose(out), 0);
	pprof__free(pp);
	profnames__free(pn);

	a = unpack(direct, direct_len);
	b = unpack(copied, copied_len);
	/* Named frames and a mapping with its build ID, not bare addresses. */
	assert_int_equal(b->n_sample, 4);
	assert_true(b->n_function >= 2);
	assert_true(b->n_mapping >= 1);
	assert_true(b->mapping[0]->build_id > 0);
	assert_true(b->mapping[0]->has_line_numbers);
	a_bytes = repack(a, &a_len);
	b_bytes = repack(b, &b_len);
	assert_int_equal(a_len, b_len);
	assert_memory_equal(a_bytes, b_bytes, a_len);
	free(a_bytes);
	free(b_bytes);
	perftools__profiles__profile__free_unpacked(a, NULL);
	perftools__profiles__profile__free_unpacked(b, NULL);
	free(direct);
	free(copied);
}

/* A row asked past the rows made room for is refused. */
static void test_row_out_of_range(void **state UNUSED)
{
	struct profnames *pn = NULL;
	const struct report_row row = { .tid = REPORT_NO_TID,
					.pid = REPORT_NO_TID };

	assert_int_equal(profnames__new(1, &pn), 0);
	assert_int_equal(profnames__name(pn, 1, NULL, NULL, &row, NULL, NULL),
			 -EINVAL);
	profnames__free(pn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_make_the_same_profile),
		cmocka_unit_test(test_row_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
