// SPDX-License-Identifier: GPL-2.0
/*
 * modindex: the symbol index's lookups, on symsizes.o
 * (tests/fixtures/symsizes.S): extents, aliases, symbols without a size,
 * objects, and a size past the end of the address space.  The object is
 * reported to libdwfl offline (its sections get addresses there) and
 * looked up in $SYNCPROF_FIXTURES, else build/tests/fixtures.  DWARF
 * scopes are covered through the symbolizer (test_symbolizer.c).
 */
#include <elfutils/libdwfl.h>
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

#include "modindex.h"

#define UNUSED __attribute__((unused))

static char *debuginfo_path = "/nonexistent";
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct fixture {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct modindex *idx;
};

static int setup(void **state)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");
	struct fixture *fx = calloc(1, sizeof(*fx));
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/symsizes.o",
		 dir && *dir ? dir : "build/tests/fixtures");
	if (!fx || access(path, R_OK)) {
		fprintf(stderr, "no fixture %s: build it with 'make %s' from the "
			"repository root, or set SYNCPROF_FIXTURES\n", path,
			"build/tests/fixtures/symsizes.o");
		free(fx);
		return -1;
	}
	fx->dwfl = dwfl_begin(&callbacks);
	fx->mod = fx->dwfl ? dwfl_report_offline(fx->dwfl, "symsizes", path, -1) : NULL;
	if (!fx->mod || dwfl_report_end(fx->dwfl, NULL, NULL) ||
	    modindex__build(fx->mod, &fx->idx)) {
		fprintf(stderr, "cannot index %s: %s\n", path, dwfl_errmsg(-1));
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	modindex__free(fx->idx);
	dwfl_end(fx->dwfl);
	free(fx);
	return 0;
}

/* The address libdwfl gave symbol NAME. */
static GElf_Addr addr_of(struct fixture *fx, const char *name)
{
	int n = dwfl_module_getsymtab(fx->mod);

	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(fx->mod, i, &sym, &addr,
							NULL, NULL, NULL);

		if (s && !strcmp(s, name))
			return addr;
	}
	fail_msg("no symbol %s", name);
	return 0;
}

static void expect(struct fixture *fx, GElf_Addr addr, const char *name,
		   GElf_Off offset, int type)
{
	GElf_Off off = 0xdead;
	int t = -1;
	const char *got = modindex__symbol(fx->idx, addr, &off, &t);

	if (!name) {
		if (got)
			fail_msg("0x%lx: %s+0x%lx, expected nothing",
				 (unsigned long)addr, got, (unsigned long)off);
		return;
	}
	if (!got)
		fail_msg("0x%lx: nothing, expected %s", (unsigned long)addr, name);
	assert_string_equal(got, name);
	assert_int_equal(off, offset);
	assert_int_equal(t, type);
}

static void test_extent(void **state)
{
	struct fixture *fx = *state;
	GElf_Addr plain = addr_of(fx, "mi_plain");

	expect(fx, plain, "mi_plain", 0, STT_FUNC);
	expect(fx, plain + 15, "mi_plain", 15, STT_FUNC);
}

static void test_global_alias_wins(void **state)
{
	struct fixture *fx = *state;
	GElf_Addr alias = addr_of(fx, "mi_global_alias");

	assert_int_equal(alias, addr_of(fx, "mi_local_alias"));
	assert_int_equal(alias, addr_of(fx, "mi_weak_alias"));
	expect(fx, alias, "mi_global_alias", 0, STT_FUNC);
	expect(fx, alias + 8, "mi_global_alias", 8, STT_FUNC);
}

/* Without a size, a symbol holds its own address and nothing after it. */
static void test_sizeless(void **state)
{
	struct fixture *fx = *state;
	GElf_Addr sizeless = addr_of(fx, "mi_sizeless");

	expect(fx, sizeless, "mi_sizeless", 0, STT_FUNC);
	expect(fx, sizeless + 1, NULL, 0, 0);
}

static void test_object(void **state)
{
	struct fixture *fx = *state;
	GElf_Addr object = addr_of(fx, "mi_object");

	expect(fx, object, "mi_object", 0, STT_OBJECT);
	expect(fx, object + 8, "mi_object", 8, STT_OBJECT);
}

/*
 * A size that runs past the end of the address space (the fuzzer's find,
 * tests/fuzz/fuzz_modindex.c): start + size wrapped around, and the
 * symbol was not found even at its own start.
 */
static void test_size_past_the_end_of_the_address_space(void **state)
{
	struct fixture *fx = *state;
	GElf_Addr huge = addr_of(fx, "mi_huge");

	expect(fx, huge, "mi_huge", 0, STT_FUNC);
	expect(fx, huge + 0x100, "mi_huge", 0x100, STT_FUNC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extent),
		cmocka_unit_test(test_global_alias_wins),
		cmocka_unit_test(test_sizeless),
		cmocka_unit_test(test_object),
		cmocka_unit_test(test_size_past_the_end_of_the_address_space),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
