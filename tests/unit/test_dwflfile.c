// SPDX-License-Identifier: GPL-2.0
/*
 * dwflfile: a module reported to libdwfl at dwfl_report_elf's range, its
 * file read without a mapping (truncated under libdwfl: no SIGBUS, and
 * said), and sealed copies of debug files.  The fixture is
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_then_truncate),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_copy_is_whole_and_sealed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
