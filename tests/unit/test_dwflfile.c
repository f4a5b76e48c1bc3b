// SPDX-License-Identifier: GPL-2.0
/*
 * dwflfile: a module reported to libdwfl at dwfl_report_elf's range, its
 * file read without a mapping (truncated under libdwfl: no SIGBUS, and
 * said), and sealed copies of debug files; files shared by identity
 * (elfshare.c), a deleted one read into memory once unmapped.  The fixture is
 * build/tests/fixtures/libversioned.so (or $SYNCPROF_FIXTURES), copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dwflfile.h"
#include "elfshare.h"

#define UNUSED __attribute__((unused))
#define BASE 0x7f0000000000ull

static struct dwflfile *pending;

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	int fd = dwflfile__hand_over(pending, file_name, elfp);

	pending = NULL;
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* A copy of the fixture in a new temporary file: its descriptor. */
static int fixture_copy(char *path)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");
	char from[4096], buf[65536];
	int fd = mkstemp(path), in;
	ssize_t got;

	snprintf(from, sizeof(from), "%s/libversioned.so",
		 dir && *dir ? dir : "build/tests/fixtures");
	in = open(from, O_RDONLY);
	assert_true(fd >= 0 && in >= 0);
	while ((got = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(fd, buf, (size_t)got), got);
	close(in);
	return fd;
}

static void test_report_then_truncate(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-dwflfile-XXXXXX";
	int fd = fixture_copy(path), mine = open(path, O_RDONLY);
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwarf_Addr start, end, bias;
	struct elfshare_file *share, *again;
	Dwfl_Module *mod;
	uint64_t now;
	struct stat st;

	assert_non_null(dwfl);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(elfshare__get(mine, &share), 0);
	/* The same file again: the same entry, the new descriptor closed. */
	mine = open(path, O_RDONLY);
	assert_int_equal(elfshare__get(mine, &again), 0);
	assert_ptr_equal(share, again);
	assert_int_equal(fcntl(mine, F_GETFD), -1);
	elfshare__put(again);
	assert_int_equal(dwflfile__open(share, BASE, path, &pending), 0);
	assert_int_equal(elfshare__size(share), (uint64_t)st.st_size);
	dwfl_report_begin(dwfl);
	mod = dwflfile__report(pending, dwfl, "libversioned.so");
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	/* dwfl_report_elf's range: a shared library's first page at base. */
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	assert_int_equal(start, BASE);
	assert_true(end > start);
	assert_non_null(dwfl_module_getelf(mod, &bias));
	assert_int_equal(bias, BASE);
	assert_null(pending);
	assert_false(elfshare__shrank(share, &now));
	/* Cut short under libdwfl: nothing past the end, and no signal. */
	assert_int_equal(ftruncate(fd, 4096), 0);
	dwfl_module_getsymtab(mod);
	dwfl_module_getdwarf(mod, &bias);
	assert_true(elfshare__shrank(share, &now));
	assert_int_equal(now, 4096);
	dwfl_end(dwfl);
	elfshare__put(share);
	close(fd);
	unlink(path);
}

static void test_not_elf(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-dwflfile-XXXXXX";
	int fd = mkstemp(path);
	struct elfshare_file *share = (struct elfshare_file *)0x1;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	assert_int_equal(elfshare__get(fd, &share), -ENOEXEC);
	assert_ptr_equal(share, (struct elfshare_file *)0x1);
	/* fd was taken over and closed. */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	unlink(path);
	dwflfile__free(NULL);
	assert_int_equal(dwflfile__hand_over(NULL, NULL, NULL), -1);
}

static void test_copy_is_whole_and_sealed(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-dwflfile-XXXXXX";
	int fd = fixture_copy(path), copy;
	volatile const char *map;
	unsigned int sum = 0;
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(dwflfile__copy(fd, 64), -EFBIG);
	copy = dwflfile__copy(fd, 1 << 30);
	assert_true(copy >= 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, copy, 0);
	assert_true(map != MAP_FAILED);
	/* The original cut short: the copy keeps every page. */
	assert_int_equal(ftruncate(fd, 0), 0);
	for (off_t i = 0; i < st.st_size; i += 512)
		sum += (unsigned char)map[i];
	assert_true(map[0] == 0x7f && map[1] == 'E');
	assert_int_equal(ftruncate(copy, 0), -1);
	assert_int_equal(errno, EPERM);
	munmap((void *)map, (size_t)st.st_size);
	close(copy);
	close(fd);
	unlink(path);
	(void)sum;
}

/* A module of the shared file at BASE: its symbol count, or -1. */
static int symbols_of(struct elfshare_file *share, const char *path)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	int n = -1;

	assert_non_null(dwfl);
	assert_int_equal(dwflfile__open(share, BASE, path, &pending), 0);
	dwfl_report_begin(dwfl);
	mod = dwflfile__report(pending, dwfl, "libversioned.so");
	dwfl_report_end(dwfl, NULL, NULL);
	if (mod && dwfl_module_getelf(mod, &bias))
		n = dwfl_module_getsymtab(mod);
	dwfl_end(dwfl);
	dwflfile__free(pending);
	pending = NULL;
	return n;
}

static void test_deleted_file_let_go_once_unmapped(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-dwflfile-XXXXXX";
	int fd = fixture_copy(path);
	struct elfshare_file *share;
	struct elfshare_stats before, now;
	struct stat st;
	int symbols;

	assert_int_equal(fstat(fd, &st), 0);
	elfshare__stats(&before);
	assert_int_equal(elfshare__get(open(path, O_RDONLY), &share), 0);
	symbols = symbols_of(share, path);
	assert_true(symbols > 0);
	elfshare__mapped(share, 1);
	elfshare__stats(&now);
	assert_int_equal(now.open_files, before.open_files + 1);
	/* Mapped, or still named on the disk: kept open. */
	assert_int_equal(elfshare__release_deleted(share, 1 << 30), 0);
	unlink(path);
	assert_int_equal(elfshare__release_deleted(share, 1 << 30), 0);
	elfshare__stats(&now);
	assert_int_equal(now.open_files, before.open_files + 1);
	elfshare__mapped(share, -1);
	/* Deleted and unmapped: too large for the room left, to be let go. */
	assert_int_equal(elfshare__release_deleted(share, 64), -EFBIG);
	/* Room enough: read into memory, closed, and still read whole. */
	assert_int_equal(elfshare__release_deleted(share, 1 << 30), 0);
	elfshare__stats(&now);
	assert_int_equal(now.open_files, before.open_files);
	assert_int_equal(now.memory_bytes, before.memory_bytes + st.st_size);
	assert_int_equal(symbols_of(share, path), symbols);
	elfshare__put(share);
	elfshare__stats(&now);
	assert_int_equal(now.files, before.files);
	assert_int_equal(now.memory_bytes, before.memory_bytes);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_then_truncate),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_copy_is_whole_and_sealed),
		cmocka_unit_test(test_deleted_file_let_go_once_unmapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
