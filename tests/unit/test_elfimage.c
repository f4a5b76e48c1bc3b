// SPDX-License-Identifier: GPL-2.0
/*
 * elfimage: function lookup with symbol versions, .symtab fallback, file
 * offsets for uprobes, and PT_INTERP detection.
 *
 * The fixture tests/fixtures/versioned.c is built by
 * `make build/tests/fixtures/libversioned.so`; it is looked up in
 * $SYNCPROF_FIXTURES, else build/tests/fixtures relative to the current
 * directory (the repository root).  Expected addresses come from the
 * dynamic loader: the test dlopen()s the fixture, and dlsym() binds a name
 * to its default version just as the target's own calls do.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elfimage.h"
#include "modtable.h"

#define UNUSED __attribute__((unused))

struct fixture {
	char path[4096];
	void *handle;		/* the fixture, dlopen()ed */
	uintptr_t base;		/* its load bias */
	struct elfimage *image;
};

static struct fixture fx;

static int group_setup(void **state UNUSED)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");
	Dl_info info;
	void *sym;
	int err;

	snprintf(fx.path, sizeof(fx.path), "%s/libversioned.so",
		 dir && *dir ? dir : "build/tests/fixtures");
	fx.handle = dlopen(fx.path, RTLD_NOW | RTLD_LOCAL);
	if (!fx.handle) {
		fprintf(stderr, "cannot load the fixture: %s\n"
			"build it with 'make build/tests/fixtures/libversioned.so' "
			"and run from the repository root, or set SYNCPROF_FIXTURES\n",
			dlerror());
		return -1;
	}
	sym = dlsym(fx.handle, "sp_plain");
	if (!sym || !dladdr(sym, &info)) {
		fprintf(stderr, "fixture %s has no sp_plain\n", fx.path);
		return -1;
	}
	fx.base = (uintptr_t)info.dli_fbase;
	err = elfimage__open(fx.path, &fx.image);
	if (err) {
		fprintf(stderr, "elfimage__open(%s): %s\n", fx.path, strerror(-err));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state UNUSED)
{
	elfimage__close(fx.image);
	if (fx.handle)
		dlclose(fx.handle);
	return 0;
}

/* Link-time address of `name` in the fixture, from the loader. */
static uint64_t loaded_vaddr(const char *name)
{
	void *sym = dlsym(fx.handle, name);

	assert_non_null(sym);
	return (uintptr_t)sym - fx.base;
}

static uint64_t loaded_vaddr_version(const char *name, const char *version)
{
	void *sym = dlvsym(fx.handle, name, version);

	assert_non_null(sym);
	return (uintptr_t)sym - fx.base;
}

/*
 * The file offset of vaddr computed here from the program headers, read
 * with plain pread: vaddr - p_vaddr + p_offset of the PT_LOAD holding it.
 */
static uint64_t phdr_file_offset(const char *path, uint64_t vaddr)
{
	ElfW(Ehdr) ehdr;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t offset = UINT64_MAX;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &ehdr, sizeof(ehdr), 0), sizeof(ehdr));
	assert_int_equal(ehdr.e_phentsize, sizeof(ElfW(Phdr)));
	for (int i = 0; i < ehdr.e_phnum; i++) {
		ElfW(Phdr) phdr;

		assert_int_equal(pread(fd, &phdr, sizeof(phdr),
				       (off_t)(ehdr.e_phoff + i * sizeof(phdr))),
				 sizeof(phdr));
		if (phdr.p_type == PT_LOAD && vaddr >= phdr.p_vaddr &&
		    vaddr < phdr.p_vaddr + phdr.p_filesz)
			offset = vaddr - phdr.p_vaddr + phdr.p_offset;
	}
	close(fd);
	assert_true(offset != UINT64_MAX);
	return offset;
}

/* The bytes at `offset` in the file equal those at `mem` in memory. */
static void assert_file_bytes(const char *path, uint64_t offset,
			      const void *mem, size_t len)
{
	unsigned char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(len > 0 && len <= sizeof(buf));
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)offset), len);
	close(fd);
	assert_memory_equal(buf, mem, len);
}

static struct elfimage_func find(const char *name)
{
	struct elfimage_func func;

	memset(&func, 0xa5, sizeof(func));
	assert_int_equal(elfimage__find_func(fx.image, name, &func), 0);
	return func;
}

static void test_default_version_wins_when_listed_second(void **state UNUSED)
{
	/* .dynsym: sp_cond_wait@VERS_1.0, then sp_cond_wait@@VERS_2.0. */
	struct elfimage_func func = find("sp_cond_wait");

	assert_int_equal(func.vaddr, loaded_vaddr("sp_cond_wait"));
	assert_int_equal(func.vaddr, loaded_vaddr_version("sp_cond_wait", "VERS_2.0"));
	assert_int_not_equal(func.vaddr,
			     loaded_vaddr_version("sp_cond_wait", "VERS_1.0"));
}

static void test_default_version_wins_when_listed_first(void **state UNUSED)
{
	/* .dynsym: sp_cond_timedwait@@VERS_2.0, then @VERS_1.0. */
	struct elfimage_func func = find("sp_cond_timedwait");

	assert_int_equal(func.vaddr, loaded_vaddr("sp_cond_timedwait"));
	assert_int_not_equal(func.vaddr,
			     loaded_vaddr_version("sp_cond_timedwait", "VERS_1.0"));
}

static void test_unversioned_function(void **state UNUSED)
{
	struct elfimage_func func = find("sp_plain");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	assert_int_equal(func.vaddr, loaded_vaddr("sp_plain"));
	/* The size is the symbol's st_size, as the loader sees it. */
	assert_true(dladdr1(dlsym(fx.handle, "sp_plain"), &info, (void **)&sym,
			    RTLD_DL_SYMENT));
	assert_non_null(sym);
	assert_true(sym->st_size > 0);
	assert_int_equal(func.size, sym->st_size);
}

static void test_symtab_only_function(void **state UNUSED)
{
	/* static sp_local is not in .dynsym; .symtab has it. */
	void *(*local_addr)(void) = (void *(*)(void))dlsym(fx.handle, "sp_local_addr");
	struct elfimage_func func;

	assert_non_null(local_addr);
	assert_null(dlsym(fx.handle, "sp_local"));
	func = find("sp_local");
	assert_int_equal(func.vaddr, (uintptr_t)local_addr() - fx.base);
}

static void test_data_object_is_not_a_function(void **state UNUSED)
{
	struct elfimage_func func;

	assert_non_null(dlsym(fx.handle, "sp_data"));
	assert_int_equal(elfimage__find_func(fx.image, "sp_data", &func), -ENOENT);
}

static void test_missing_names(void **state UNUSED)
{
	struct elfimage_func func;

	assert_int_equal(elfimage__find_func(fx.image, "sp_nope", &func), -ENOENT);
	assert_int_equal(elfimage__find_func(fx.image, "", &func), -ENOENT);
	/* Neither a prefix nor an extension of a name matches it. */
	assert_int_equal(elfimage__find_func(fx.image, "sp_cond", &func), -ENOENT);
	assert_int_equal(elfimage__find_func(fx.image, "sp_plai", &func), -ENOENT);
	assert_int_equal(elfimage__find_func(fx.image, "sp_plainer", &func),
			 -ENOENT);
	assert_int_equal(elfimage__find_func(fx.image, "sp_cond_wait_", &func),
			 -ENOENT);
}

static void test_file_offset_of_text(void **state UNUSED)
{
	static const char *const names[] = {
		"sp_cond_wait", "sp_cond_timedwait", "sp_plain", "sp_local_addr",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct elfimage_func func = find(names[i]);
		size_t len = func.size < 16 ? (size_t)func.size : 16;

		assert_int_equal(func.file_offset,
				 phdr_file_offset(fx.path, func.vaddr));
		assert_file_bytes(fx.path, func.file_offset,
				  dlsym(fx.handle, names[i]), len);
	}
}

static void test_file_offset_differs_from_vaddr(void **state UNUSED)
{
	/*
	 * sp_far sits in the RW PT_LOAD, whose p_vaddr and p_offset differ
	 * (by the RELRO page): a file offset equal to the vaddr is wrong.
	 */
	struct elfimage_func func = find("sp_far");

	assert_int_equal(func.vaddr, loaded_vaddr("sp_far"));
	assert_int_equal(func.size, 16);
	assert_int_not_equal(func.file_offset, func.vaddr);
	assert_int_equal(func.file_offset, phdr_file_offset(fx.path, func.vaddr));
	assert_file_bytes(fx.path, func.file_offset, dlsym(fx.handle, "sp_far"), 16);
	assert_memory_equal(dlsym(fx.handle, "sp_far"), "SP-FAR-MARKER!\n", 16);
}

static void test_shared_library_is_not_dynamic_executable(void **state UNUSED)
{
	/* A shared library has no PT_INTERP. */
	assert_false(elfimage__is_dynamic(fx.image));
}

static void test_own_executable(void **state UNUSED)
{
	struct elfimage *self = NULL;
	struct elfimage_func func;
	Dl_info info;
	const void *code = (const void *)elfimage__is_dynamic;

	assert_int_equal(elfimage__open("/proc/self/exe", &self), 0);
	assert_true(elfimage__is_dynamic(self));
	/* A function linked into this test binary, found in its .symtab. */
	assert_int_equal(elfimage__find_func(self, "elfimage__is_dynamic", &func), 0);
	assert_true(dladdr(code, &info));
	assert_int_equal(func.vaddr, (uintptr_t)code - (uintptr_t)info.dli_fbase);
	assert_int_equal(func.file_offset, phdr_file_offset("/proc/self/exe",
							     func.vaddr));
	assert_file_bytes("/proc/self/exe", func.file_offset, code, 16);
	elfimage__close(self);
}

static void test_open_missing_file(void **state UNUSED)
{
	struct elfimage *image = (struct elfimage *)0x1;

	assert_int_equal(elfimage__open("/nonexistent/libnothing.so", &image),
			 -ENOENT);
	assert_ptr_equal(image, (struct elfimage *)0x1);
}

static void test_open_not_elf(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-elfimage-XXXXXX";
	struct elfimage *image = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	/* Empty, then text. */
	assert_int_equal(elfimage__open(path, &image), -ENOEXEC);
	assert_int_equal(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	assert_int_equal(elfimage__open(path, &image), -ENOEXEC);
	close(fd);
	unlink(path);
	elfimage__close(NULL);
}

static int count_func(void *ctx, const char *name, uint64_t vaddr,
		      uint64_t size)
{
	(*(int *)ctx)++;
	return 0;
}

/*
 * A file truncated while it is open (a target can cut the libraries it
 * mapped): its sections read as missing, never as a SIGBUS from a page
 * past the new end.
 */
static void test_truncated_while_open(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-elfimage-XXXXXX";
	struct elfimage *image = NULL;
	struct elfimage_func func;
	struct modtable *t = NULL;
	char buf[65536];
	int fd = mkstemp(path), in = open(fx.path, O_RDONLY), n = 0;
	ssize_t got;

	assert_true(fd >= 0 && in >= 0);
	while ((got = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(fd, buf, (size_t)got), got);
	close(in);
	assert_int_equal(elfimage__open(path, &image), 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_not_equal(elfimage__find_func(image, "sp_plain", &func), 0);
	elfimage__for_each_func(image, count_func, &n);
	assert_int_equal(n, 0);
	if (!modtable__build(image, NULL, &t))
		modtable__free(t);
	elfimage__close(image);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_version_wins_when_listed_second),
		cmocka_unit_test(test_default_version_wins_when_listed_first),
		cmocka_unit_test(test_unversioned_function),
		cmocka_unit_test(test_symtab_only_function),
		cmocka_unit_test(test_data_object_is_not_a_function),
		cmocka_unit_test(test_missing_names),
		cmocka_unit_test(test_file_offset_of_text),
		cmocka_unit_test(test_file_offset_differs_from_vaddr),
		cmocka_unit_test(test_shared_library_is_not_dynamic_executable),
		cmocka_unit_test(test_own_executable),
		cmocka_unit_test(test_open_missing_file),
		cmocka_unit_test(test_open_not_elf),
		cmocka_unit_test(test_truncated_while_open),
	};

	return cmocka_run_group_tests_name("elfimage", tests, group_setup,
					   group_teardown);
}
