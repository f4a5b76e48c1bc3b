// SPDX-License-Identifier: GPL-2.0
/*
 * modshare: two copies of one build (libsharedlock.so, written to two
 * files) reported as two libdwfl modules share one DWARF index, which
 * names the copy still held after the first is freed, and goes with the
 * last; another build, or the same build with other DWARF, is kept
 * apart, and a module without a build ID shares nothing.  The library is
 * looked up in $SYNCPROF_TARGETS, else build/tests/targets.
 */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "modindex.h"
#include "modshare.h"

static char *debuginfo_path = "/nonexistent";
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct fixture {
	char dir[64];
	char copy[2][PATH_MAX];
	Dwfl *dwfl;
	Dwfl_Module *mod[2];
};

static int copy_file(const char *from, const char *to)
{
	struct stat st;
	int in = open(from, O_RDONLY), out;
	ssize_t n = -1;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out >= 0 && !fstat(in, &st))
		n = sendfile(out, in, NULL, (size_t)st.st_size);
	close(in);
	if (out >= 0)
		close(out);
	return n == (ssize_t)st.st_size ? 0 : -1;
}

static int setup(void **state)
{
	const char *dir = getenv("SYNCPROF_TARGETS");
	struct fixture *fx = calloc(1, sizeof(*fx));
	char lib[PATH_MAX];

	snprintf(lib, sizeof(lib), "%s/libsharedlock.so",
		 dir && *dir ? dir : "build/tests/targets");
	if (!fx || access(lib, R_OK)) {
		fprintf(stderr, "no %s: build it with 'make test-bins', or set "
			"SYNCPROF_TARGETS\n", lib);
		free(fx);
		return -1;
	}
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_modshare.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	for (int i = 0; i < 2; i++) {
		snprintf(fx->copy[i], sizeof(fx->copy[i]), "%s/copy%d.so",
			 fx->dir, i);
		if (copy_file(lib, fx->copy[i]))
			return -1;
	}
	fx->dwfl = dwfl_begin(&callbacks);
	for (int i = 0; fx->dwfl && i < 2; i++)
		fx->mod[i] = dwfl_report_offline(fx->dwfl, i ? "copy1" : "copy0",
						 fx->copy[i], -1);
	if (!fx->mod[0] || !fx->mod[1] || dwfl_report_end(fx->dwfl, NULL, NULL))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	dwfl_end(fx->dwfl);
	for (int i = 0; i < 2; i++)
		unlink(fx->copy[i]);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* shared_lock_work's address in mod. */
static GElf_Addr work_addr(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   NULL, NULL, NULL);

		if (name && !strcmp(name, "shared_lock_work"))
			return addr;
	}
	fail_msg("no shared_lock_work");
	return 0;
}

/* The function holding pc, by the index's DWARF scopes. */
static void expect_function(struct modindex *idx, GElf_Addr pc)
{
	Dwarf_Die *scopes;
	int n = modindex__scopes(idx, pc, &scopes);

	assert_true(n >= 1);
	assert_int_equal(dwarf_tag(&scopes[n - 1]), DW_TAG_subprogram);
	assert_string_equal(dwarf_diename(&scopes[n - 1]), "shared_lock_work");
	free(scopes);
}

static void test_copies_share(void **state)
{
	struct fixture *fx = *state;
	struct modindex *idx[2];
	size_t before = modshare__count();
	GElf_Addr pc[2];

	for (int i = 0; i < 2; i++) {
		pc[i] = work_addr(fx->mod[i]) + 1;
		assert_int_equal(modindex__build(fx->mod[i], &idx[i]), 0);
	}
	/* Two modules at two addresses, one build held. */
	assert_true(pc[0] != pc[1]);
	assert_int_equal(modshare__count(), before + 1);
	expect_function(idx[0], pc[0]);
	expect_function(idx[1], pc[1]);
	/* The first copy goes: the second is still named through it. */
	modindex__free(idx[0]);
	assert_int_equal(modshare__count(), before + 1);
	expect_function(idx[1], pc[1]);
	modindex__free(idx[1]);
	assert_int_equal(modshare__count(), before);
}

static void test_other_build_apart(void **state)
{
	struct modshare_key a = { .id = { 1, 2, 3 }, .id_len = 3,
				  .info_size = 100 };
	struct modshare_key b = a, c = a, none = { 0 };
	struct modshare *ma, *mb, *mnone;
	struct modshare_func *funcs = calloc(1, sizeof(*funcs));

	(void)state;
	b.id[2] = 4;		/* another build */
	c.info_size = 200;	/* the same build, other DWARF (dwz) */
	assert_non_null(funcs);
	assert_int_equal(modshare__add(&a, funcs, 1, &ma), 0);
	assert_ptr_equal(modshare__find(&a), ma);
	assert_null(modshare__find(&b));
	assert_null(modshare__find(&c));
	/* Without a build ID nothing is found, nor listed. */
	assert_int_equal(modshare__add(&none, NULL, 0, &mnone), 0);
	assert_null(modshare__find(&none));
	modshare__put(mnone);
	assert_int_equal(modshare__add(&b, NULL, 0, &mb), 0);
	assert_ptr_equal(modshare__find(&b), mb);
	modshare__put(mb);
	modshare__put(mb);
	assert_null(modshare__find(&b));
	modshare__put(ma);
	modshare__put(ma);
	assert_null(modshare__find(&a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_share),
		cmocka_unit_test(test_other_build_apart),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
