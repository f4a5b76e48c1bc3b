// SPDX-License-Identifier: GPL-2.0
/*
 * pprof: profiles read back (gunzip with zlib, unpack with protobuf-c)
 * and checked field by field: sample types, samples and their labels,
 * locations with inlined lines, functions with files, mappings with the
 * test binary's build ID; what --interval writes replaces the last.
 * go tool pprof reads real ones in tests/integration.
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
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "outfile.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "stackfix.h"

#define UNUSED __attribute__((unused))

typedef Perftools__Profiles__Profile Profile;

static const struct pprof_window meta = {
	.pid = 123,
	.comm = "demo",
	.mode = "contended",
	.start_ns = 5000000000ull,
	.end_ns = 7000000000ull,
};

/* gzip's magic, then the whole member inflated. */
static Profile *unpack(const uint8_t *gz, size_t len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	Profile *p;

	assert_non_null(raw);
	assert_true(len > 2 && gz[0] == 0x1f && gz[1] == 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	assert_non_null(p);
	return p;
}

static const char *str(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *location(const Profile *p,
						      uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %" PRIu64, id);
	return NULL;
}

static const Perftools__Profiles__Function *function(const Profile *p,
						      uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %" PRIu64, id);
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const Profile *p,
						    uint64_t id)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	fail_msg("no mapping %" PRIu64, id);
	return NULL;
}

/* The name of the outermost function of a location (its last line). */
static const char *location_function(const Profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *loc = location(p, id);

	assert_true(loc->n_line >= 1);
	return str(p, function(p, loc->line[loc->n_line - 1]->function_id)->name);
}

static const char *label(const Profile *p,
			 const Perftools__Profiles__Sample *s, const char *key,
			 int64_t *num)
{
	for (size_t i = 0; i < s->n_label; i++) {
		if (strcmp(str(p, s->label[i]->key), key))
			continue;
		if (num)
			*num = s->label[i]->num;
		return str(p, s->label[i]->str);
	}
	return NULL;
}

/* pp finished into memory (and freed), read back. */
static Profile *finish(struct pprof *pp)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream((char **)&buf, &len);
	Profile *p;

	assert_non_null(out);
	assert_int_equal(pprof__finish(pp, out), 0);
	pprof__free(pp);
	assert_int_equal(fclose(out), 0);
	p = unpack(buf, len);
	free(buf);
	return p;
}

static Profile *print_report(struct symbolizer *sym, struct stacktab *tab,
			     const struct report_rows *rows,
			     const struct row_names *names)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream((char **)&buf, &len);
	Profile *p;

	assert_non_null(out);
	assert_int_equal(pprof__print(out, sym, tab, &meta, rows, names), 0);
	assert_int_equal(fclose(out), 0);
	p = unpack(buf, len);
	free(buf);
	return p;
}

static void test_report(void **state UNUSED)
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
		{ .type = SP_TYPE_CONDVAR, .object = 0x20, .n_objects = 4,
		  .callsite = FIX_ROOT_RET, .tid = 77, .count = 2,
		  .wait_ns = 66, .max_ns = 66 },
	};
	const struct report_rows r = { rows, 2, 2 };
	const struct row_names names[2] = {
		{ .object_symbol = "big_lock" }, { .object_symbol = "x" },
	};
	Profile *p = print_report(sym, tab, &r, names);
	uint64_t count = 0, delay = 0;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(str(p, p->sample_type[0]->type), "contentions");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(str(p, p->sample_type[1]->type), "delay");
	assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(str(p, p->default_sample_type), "delay");
	assert_non_null(p->period_type);
	assert_string_equal(str(p, p->period_type->type), "contentions");
	assert_int_equal(p->period, 1);
	assert_int_equal(p->duration_nanos, 2000000000);
	assert_true(p->time_nanos > 1600000000ll * 1000000000ll);
	assert_int_equal(p->n_comment, 2);
	assert_non_null(strstr(str(p, p->comment[0]), "pid 123 (demo)"));
	assert_non_null(strstr(str(p, p->comment[1]), "-tagfocus=class=lock"));

	/* Three stacks of the first row, the call site of the second. */
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < p->n_sample; i++) {
		assert_int_equal(p->sample[i]->n_value, 2);
		count += (uint64_t)p->sample[i]->value[0];
		delay += (uint64_t)p->sample[i]->value[1];
	}
	assert_int_equal(count, 5 + 2);
	assert_int_equal(delay, 1234 + 66);

	const Perftools__Profiles__Sample *s = p->sample[0];
	int64_t tid = 0;

	assert_int_equal(s->value[0], 3);
	assert_int_equal(s->value[1], 900);
	/* The stack starts at the row's call site (fix_mid's call): the
	   frame inside it (fix_leaf, a wrapper's) is folded away. */
	assert_int_equal(s->n_location_id, 2);
	assert_string_equal(location_function(p, s->location_id[0]), "fix_mid");
	assert_string_equal(location_function(p, s->location_id[1]), "fix_root");
	/* A return address is recorded at its call, where it was named. */
	assert_int_equal(location(p, s->location_id[0])->address,
			 FIX_MID_RET - 1);
	assert_int_equal(location(p, s->location_id[1])->address,
			 FIX_ROOT_RET - 1);
	assert_string_equal(label(p, s, "type", NULL), "mutex");
	assert_string_equal(label(p, s, "object", NULL), "big_lock");
	assert_null(label(p, s, "tid", NULL));
	/* The function's file is this header, where the fixture lives. */
	const Perftools__Profiles__Location *loc = location(p, s->location_id[0]);
	const Perftools__Profiles__Function *fn =
		function(p, loc->line[loc->n_line - 1]->function_id);

	assert_non_null(strstr(str(p, fn->filename), "stackfix.h"));
	assert_true(loc->line[loc->n_line - 1]->line > 0);
	/* It begins at or before that line. */
	assert_true(fn->start_line > 0);
	assert_true(fn->start_line <= loc->line[loc->n_line - 1]->line);
	/* The waits without a stack: at the call site. */
	assert_int_equal(p->sample[2]->value[0], 1);
	assert_int_equal(p->sample[2]->value[1], 234);
	assert_int_equal(p->sample[2]->n_location_id, 1);
	assert_int_equal(p->sample[2]->location_id[0], s->location_id[0]);
	/* Coalesced locks, per thread. */
	s = p->sample[3];
	assert_string_equal(label(p, s, "type", NULL), "condvar");
	assert_string_equal(label(p, s, "object", NULL), "4 objects");
	label(p, s, "tid", &tid);
	assert_int_equal(tid, 77);

	/* The test binary's mapping, its offset and build ID. */
	const Perftools__Profiles__Mapping *m = mapping(p, loc->mapping_id);
	struct symbol_module mod;

	assert_int_equal(symbolizer__module(sym, FIX_LEAF_RET, &mod), 0);
	assert_string_equal(str(p, m->filename), exe);
	assert_int_equal(m->memory_start, mod.start);
	assert_int_equal(m->memory_limit, mod.end);
	assert_int_equal(m->file_offset, mod.offset);
	assert_true(FIX_LEAF_RET >= m->memory_start &&
		    FIX_LEAF_RET < m->memory_limit);
	assert_non_null(mod.build_id);
	assert_int_equal(strlen(str(p, m->build_id)), 2 * mod.build_id_len);
	assert_true(m->has_functions);
	assert_true(m->has_filenames);
	assert_true(m->has_line_numbers);
	for (size_t i = 1; i < p->n_mapping; i++)
		assert_true(p->mapping[i - 1]->memory_start <
			    p->mapping[i]->memory_start);
	perftools__profiles__profile__free_unpacked(p, NULL);
	stacktab__free(tab);
	symbolizer__free(sym);
}

/* Inlined calls are lines of one location, innermost first. */
static void test_inlined_lines(void **state UNUSED)
{
	static const struct symbol_frame frames[3] = {
		{ { "/x/lib.so", 0x10, "__gthread_mutex_lock", 0,
		    "/usr/include/gthr.h", 749 }, true, 745 },
		{ { "/x/lib.so", 0x10, "std::mutex::lock()", 0,
		    "/usr/include/std_mutex.h", 100 }, true, 96 },
		{ { "/x/lib.so", 0x10, "app::add()", 0xe, "/src/app.cc", 89 },
		  false, 80 },
	};
	static const struct symbol_frame nameless = {
		{ "/x/lib.so", 0x40, NULL, 0, NULL, 0 }, false, 0,
	};
	const struct rowstacks_pc pcs[2] = {
		{ 0x7000, true, frames, 3 }, { 0x7040, true, &nameless, 1 },
	};
	struct rowstacks_stack stack = { 1, 2, 30, 20, 0, pcs, 2,
					 STACKTAB_END_COMPLETE };
	const struct rowstacks rs = { .stacks = &stack, .n_stacks = 1 };
	const struct report_row row = {
		.type = SP_TYPE_MUTEX, .object = 0xbeef, .n_objects = 1,
		.tid = REPORT_NO_TID, .count = 2, .wait_ns = 30,
	};
	const Perftools__Profiles__Location *loc;
	struct pprof *pp;
	Profile *p;

	assert_int_equal(pprof__new(&meta, &pp), 0);
	assert_int_equal(pprof__add(pp, NULL, &row, NULL, &rs), 0);
	/* The same pcs again: the same locations and functions. */
	assert_int_equal(pprof__add(pp, NULL, &row, NULL, &rs), 0);
	p = finish(pp);
	assert_int_equal(p->n_sample, 2);
	assert_int_equal(p->n_location, 2);
	assert_int_equal(p->n_function, 3);
	assert_int_equal(p->n_mapping, 0);
	assert_string_equal(label(p, p->sample[0], "object", NULL), "0xbeef");
	loc = location(p, p->sample[0]->location_id[0]);
	assert_int_equal(loc->address, 0x6fff);
	assert_int_equal(loc->mapping_id, 0);
	assert_int_equal(loc->n_line, 3);
	for (size_t i = 0; i < 3; i++) {
		const Perftools__Profiles__Function *fn =
			function(p, loc->line[i]->function_id);

		assert_string_equal(str(p, fn->name), frames[i].info.function);
		assert_string_equal(str(p, fn->system_name),
				    frames[i].info.function);
		assert_string_equal(str(p, fn->filename), frames[i].info.file);
		assert_int_equal(fn->start_line, frames[i].decl_line);
		assert_int_equal(loc->line[i]->line, frames[i].info.line);
	}
	/* No name: no line; pprof shows the address. */
	loc = location(p, p->sample[0]->location_id[1]);
	assert_int_equal(loc->n_line, 0);
	assert_int_equal(loc->address, 0x703f);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* --why: each stack split by its roots, the rest labelled root=none. */
static void test_why_splits_each_stack_by_its_roots(void **state UNUSED)
{
	static const struct symbol_frame unknown;
	const struct report_settings by = { .coalesce = true };
	const struct rowstacks_pc pcs[2] = {
		{ 0x5000, true, &unknown, 1 }, { 0x6000, true, &unknown, 1 },
	};
	/* Stack 9, then the waits without a stack. */
	struct rowstacks_stack stacks[2] = {
		{ 9, 2, 1000, 0, 0, &pcs[0], 1, STACKTAB_END_COMPLETE },
		{ 0, 1, 100, 0, 0, &pcs[1], 1, STACKTAB_END_COMPLETE },
	};
	const struct rowstacks rs = { .stacks = stacks, .n_stacks = 2 };
	const struct report_row row = {
		.type = SP_TYPE_MUTEX, .object = 0xbeef, .n_objects = 1,
		.callsite = 0x400, .tid = REPORT_NO_TID, .pid = REPORT_NO_TID,
		.owner_tid = REPORT_NO_TID, .count = 3, .wait_ns = 1100,
	};
	struct sp_why_key k = {
		.row = { .object = 0xbeef, .callsite = 0x400, .stack_id = 9,
			 .type = SP_TYPE_MUTEX },
		.site = 0x700, .kind = SP_WHY_ROOT,
	};
	struct sp_why_value v = { 0 };
	struct pprof_window window = meta;
	static const struct {
		const char *root, *state;
		int64_t count, ns;
	} want[] = {
		{ "0x700", "sleep", 1, 600 },
		{ "0x800", "running", 1, 300 },
		{ "none", NULL, 0, 100 },
		{ "none", NULL, 1, 100 },
	};
	struct pprof *pp;
	struct why *w;
	Profile *p;

	assert_int_equal(why__new(&w), 0);
	v.ns[SP_WHY_SLEEP] = 600;
	v.waits[SP_WHY_SLEEP] = 2;
	assert_int_equal(why__add(w, &k, &v), 0);
	k.site = 0x800;
	v = (struct sp_why_value){ 0 };
	v.ns[SP_WHY_RUNNING] = 300;
	v.waits[SP_WHY_RUNNING] = 1;
	assert_int_equal(why__add(w, &k, &v), 0);
	why__seal(w);
	window.why = w;
	window.why_rows_by = &by;
	assert_int_equal(pprof__new(&window, &pp), 0);
	assert_int_equal(pprof__add(pp, NULL, &row, NULL, &rs), 0);
	p = finish(pp);
	why__free(w);
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < 4; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *root_state = label(p, s, "root_state", NULL);

		assert_string_equal(label(p, s, "root", NULL), want[i].root);
		if (want[i].state)
			assert_string_equal(root_state, want[i].state);
		else
			assert_null(root_state);
		assert_int_equal(s->value[0], want[i].count);
		assert_int_equal(s->value[1], want[i].ns);
		assert_int_equal(s->location_id[0], i < 3 ? 1 : 2);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* --interval: each report replaces the one before in the file (main.c
 * puts each in place whole, outfile__commit). */
static void test_next_report_replaces_the_file(void **state UNUSED)
{
	struct report_row row = {
		.type = SP_TYPE_MUTEX, .n_objects = 1, .tid = REPORT_NO_TID,
		.count = 1, .wait_ns = 10,
	};
	struct rowstacks_pc pc = { 0x5000, true, NULL, 0 };
	struct rowstacks_stack stack = { 0, 1, 10, 10, 0, &pc, 1,
					 STACKTAB_END_COMPLETE };
	const struct rowstacks rs = { .stacks = &stack, .n_stacks = 1 };
	static const struct symbol_frame unknown;
	char name[] = "/tmp/syncprof-unit-pprof-XXXXXX";
	struct outfile *out;
	uint8_t buf[65536];
	size_t len;
	Profile *p;
	FILE *f;

	pc.frames = &unknown;
	pc.n_frames = 1;
	close(mkstemp(name));
	assert_int_equal(outfile__open(NULL, name, OUTFILE_WHOLE, &out), 0);
	for (int round = 1; round <= 3; round++) {
		struct pprof *pp;

		row.count = stack.count = (uint64_t)round;
		assert_int_equal(pprof__new(&meta, &pp), 0);
		for (int i = 0; i < round; i++)
			assert_int_equal(pprof__add(pp, NULL, &row, NULL, &rs), 0);
		assert_int_equal(pprof__finish(pp, outfile__stream(out)), 0);
		assert_int_equal(outfile__commit(out), 0);
		pprof__free(pp);
	}
	assert_int_equal(outfile__close(out), 0);
	f = fopen(name, "rb");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	unlink(name);
	p = unpack(buf, len);
	assert_int_equal(p->n_sample, 3);
	assert_int_equal(p->sample[0]->value[0], 3);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_inlined_lines),
		cmocka_unit_test(test_next_report_replaces_the_file),
		cmocka_unit_test(test_why_splits_each_stack_by_its_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
