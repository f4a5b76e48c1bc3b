// SPDX-License-Identifier: GPL-2.0
/*
 * procmaps: parsing /proc/PID/maps lines and files, address lookup, and
 * recognizing libc/libpthread by file name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "procmaps.h"

#define UNUSED __attribute__((unused))

/* parse_line edits its input; give it a writable copy. */
static int parse_line(const char *text, char *buf, size_t len,
		      struct procmaps_entry *e)
{
	assert_true(strlen(text) < len);
	strcpy(buf, text);
	memset(e, 0xa5, sizeof(*e));
	return procmaps__parse_line(buf, e);
}

/* Parses a whole maps file held in a string. */
static int parse_text(const char *text, struct procmaps **out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = procmaps__parse(f, out);
	fclose(f);
	return err;
}

static void test_line_file_backed_exec(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("55d0c0a00000-55d0c0a21000 r-xp 0001a000 08:01 1234567"
				    "                    /usr/bin/qemu-system-x86_64\n",
				    buf, sizeof(buf), &e), 0);
	assert_int_equal(e.start, 0x55d0c0a00000ull);
	assert_int_equal(e.end, 0x55d0c0a21000ull);
	assert_int_equal(e.offset, 0x1a000);
	assert_int_equal(e.inode, 1234567);
	assert_true(e.exec);
	assert_false(e.deleted);
	assert_string_equal(e.path, "/usr/bin/qemu-system-x86_64");
	/* The path points into the caller's buffer. */
	assert_true(e.path > buf && e.path < buf + sizeof(buf));
}

static void test_line_not_exec(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("7f0000001000-7f0000002000 rw-p 00003000 fd:01 42 /lib/libc.so.6\n",
				    buf, sizeof(buf), &e), 0);
	assert_int_equal(e.dev, makedev(0xfd, 0x01));
	assert_false(e.exec);
	assert_int_equal(e.offset, 0x3000);
	assert_int_equal(e.inode, 42);
	assert_string_equal(e.path, "/lib/libc.so.6");
}

static void test_line_anonymous(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	/* Older kernels end anonymous lines with a space, newer ones not. */
	assert_int_equal(parse_line("7f1234500000-7f1234521000 rw-p 00000000 00:00 0 \n",
				    buf, sizeof(buf), &e), 0);
	assert_int_equal(e.start, 0x7f1234500000ull);
	assert_int_equal(e.end, 0x7f1234521000ull);
	assert_int_equal(e.inode, 0);
	assert_string_equal(e.path, "");

	assert_int_equal(parse_line("7f1234500000-7f1234521000 rw-p 00000000 00:00 0\n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "");

	assert_int_equal(parse_line("7f1234500000-7f1234521000 rw-p 00000000 00:00 0",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "");
	assert_false(e.deleted);
}

static void test_line_heap_and_vdso(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("55d0c1e3e000-55d0c1e5f000 rw-p 00000000 00:00 0"
				    "                          [heap]\n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "[heap]");
	assert_false(e.exec);

	assert_int_equal(parse_line("7ffd4b5f2000-7ffd4b5f4000 r-xp 00000000 00:00 0"
				    "                          [vdso]\n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "[vdso]");
	assert_true(e.exec);
}

static void test_line_path_with_spaces(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("7f0000000000-7f0000001000 r-xp 00000000 08:01 77"
				    "   /opt/my app/lib foo.so  \n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "/opt/my app/lib foo.so");
	assert_false(e.deleted);
}

static void test_line_deleted_suffix(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("7f0000000000-7f0000001000 r-xp 00002000 08:01 77"
				    " /usr/lib/libfoo.so.1 (deleted)\n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "/usr/lib/libfoo.so.1");
	assert_true(e.deleted);
	assert_int_equal(e.offset, 0x2000);
}

static void test_line_deleted_path_with_spaces(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("7f0000000000-7f0000001000 r-xp 00000000 08:01 77"
				    " /tmp/a b (deleted)\n",
				    buf, sizeof(buf), &e), 0);
	assert_string_equal(e.path, "/tmp/a b");
	assert_true(e.deleted);
}

static void test_line_large_addresses(void **state UNUSED)
{
	char buf[256];
	struct procmaps_entry e;

	assert_int_equal(parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				    "                  [vsyscall]\n",
				    buf, sizeof(buf), &e), 0);
	assert_int_equal(e.start, 0xffffffffff600000ull);
	assert_int_equal(e.end, 0xffffffffff601000ull);
	assert_true(e.exec);
	assert_string_equal(e.path, "[vsyscall]");

	assert_int_equal(parse_line("fffffffffffff000-ffffffffffffffff r--p ffffffffff000000 08:01 18446744073709551615 /x\n",
				    buf, sizeof(buf), &e), 0);
	assert_int_equal(e.start, 0xfffffffffffff000ull);
	assert_int_equal(e.end, UINT64_MAX);
	assert_int_equal(e.offset, 0xffffffffff000000ull);
	assert_int_equal(e.inode, UINT64_MAX);
}

static void test_line_malformed_rejected(void **state UNUSED)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage\n",
		"7f0000000000 r-xp 00000000 08:01 77 /x\n",		/* no end */
		"zzzz-7f0000001000 r-xp 00000000 08:01 77 /x\n",
		"7f0000000000-7f0000001000\n",
		"7f0000000000-7f0000001000 r-xp\n",
		"7f0000000000-7f0000001000 r-xp 00000000\n",
		"7f0000000000-7f0000001000 r-xp 00000000 08:01\n",	/* no inode */
		"7f0000000000-7f0000001000 r-xp 00000000 0801 77 /x\n",
		"7f0000001000-7f0000001000 r-xp 00000000 08:01 77 /x\n", /* empty */
		"7f0000002000-7f0000001000 r-xp 00000000 08:01 77 /x\n", /* reversed */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[256];
		struct procmaps_entry e;

		if (parse_line(bad[i], buf, sizeof(buf), &e) != -EINVAL)
			fail_msg("accepted malformed line '%s'", bad[i]);
	}
}

/*
 * A permission field shorter than three characters (the kernel always
 * writes four) is not executable, whatever the stack held at perms[2]:
 * here, the 'x' of the line parsed just before.
 */
static void test_line_short_perms_not_exec(void **state UNUSED)
{
	static const char *const lines[] = {
		"7f0000000000-7f0000001000 r 00000000 08:01 77 /x\n",
		"7f0000000000-7f0000001000 rw 00000000 08:01 77 /x\n",
		"7f0000000000-7f0000001000 - 00000000 08:01 77 /x\n",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char buf[256];
		struct procmaps_entry e;

		assert_int_equal(parse_line("7f0000000000-7f0000001000 r-xp 00000000 08:01 77 /x\n",
					    buf, sizeof(buf), &e), 0);
		assert_true(e.exec);
		assert_int_equal(parse_line(lines[i], buf, sizeof(buf), &e), 0);
		if (e.exec)
			fail_msg("'%s' taken as executable", lines[i]);
		assert_string_equal(e.path, "/x");
	}
}

/* The same inside a file: the fuzzer's find (tests/fuzz/fuzz_procmaps.c). */
static void test_parse_short_perms_after_exec_line(void **state UNUSED)
{
	struct procmaps *maps = NULL;

	assert_int_equal(parse_text("7f0000001000-7f0000002000 r-xp 00000000 fd:01 43 /a.so\n"
				    "7f0000002000-7f0000003000 r 00000000 fd:01 44 /b.so\n"
				    "7f0000003000-7f0000004000 --x 00000000 fd:01 45 /c.so\n",
				    &maps), 0);
	assert_int_equal(procmaps__count(maps), 3);
	assert_true(procmaps__entry(maps, 0)->exec);
	assert_false(procmaps__entry(maps, 1)->exec);
	assert_true(procmaps__entry(maps, 2)->exec);
	procmaps__free(maps);
}

static const char sample_maps[] =
	"55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 100                       /usr/bin/app\n"
	"55d0c0a01000-55d0c0a05000 r-xp 00001000 08:01 100                       /usr/bin/app\n"
	"55d0c0a05000-55d0c0a06000 rw-p 00005000 08:01 100                       /usr/bin/app\n"
	"55d0c1e3e000-55d0c1e5f000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"
	"7f0000010000-7f0000020000 r-xp 00000000 08:01 200                       /usr/lib/x86_64-linux-gnu/libcrypt.so.1\n"
	"7f0000020000-7f0000028000 r--p 00000000 08:01 300                       /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0000028000-7f0000100000 r-xp 00028000 08:01 300                       /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0000200000-7f0000201000 r-xp 00000000 08:01 400                       /tmp/gone.so (deleted)\n"
	"7ffd4b5f2000-7ffd4b5f4000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";	/* no final newline */

static void test_parse_file(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	const struct procmaps_entry *e;

	assert_int_equal(parse_text(sample_maps, &maps), 0);
	assert_int_equal(procmaps__count(maps), 11);

	e = procmaps__entry(maps, 1);
	assert_int_equal(e->start, 0x55d0c0a01000ull);
	assert_int_equal(e->end, 0x55d0c0a05000ull);
	assert_int_equal(e->offset, 0x1000);
	assert_true(e->exec);
	assert_string_equal(e->path, "/usr/bin/app");

	assert_string_equal(procmaps__entry(maps, 3)->path, "[heap]");
	assert_string_equal(procmaps__entry(maps, 4)->path, "");
	assert_string_equal(procmaps__entry(maps, 8)->path, "/tmp/gone.so");
	assert_true(procmaps__entry(maps, 8)->deleted);
	/* The last line has no newline and still counts. */
	e = procmaps__entry(maps, 10);
	assert_string_equal(e->path, "[vsyscall]");
	assert_int_equal(e->start, 0xffffffffff600000ull);
	assert_null(procmaps__entry(maps, 11));
	procmaps__free(maps);
}

static void test_parse_paths_outlive_input(void **state UNUSED)
{
	char *text = strdup(sample_maps);
	struct procmaps *maps = NULL;
	FILE *f;

	assert_non_null(text);
	f = fmemopen(text, strlen(text), "r");
	assert_non_null(f);
	assert_int_equal(procmaps__parse(f, &maps), 0);
	fclose(f);
	memset(text, 'X', strlen(text));
	free(text);
	assert_string_equal(procmaps__entry(maps, 6)->path,
			    "/usr/lib/x86_64-linux-gnu/libc.so.6");
	procmaps__free(maps);
}

static void test_parse_empty_file(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(procmaps__parse(f, &maps), 0);
	fclose(f);
	assert_int_equal(procmaps__count(maps), 0);
	assert_null(procmaps__entry(maps, 0));
	assert_null(procmaps__find(maps, 0x1000));
	assert_null(procmaps__find_library(maps, "libc"));
	procmaps__free(maps);
}

static void test_parse_rejects_malformed_line(void **state UNUSED)
{
	struct procmaps *maps = (struct procmaps *)0x1;

	assert_int_equal(parse_text("7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /a\n"
				    "this is not a maps line\n"
				    "7f0000002000-7f0000003000 r-xp 00000000 08:01 1 /b\n",
				    &maps), -EINVAL);
	/* *out is left alone on failure. */
	assert_ptr_equal(maps, (struct procmaps *)0x1);
}

static void test_find_boundaries(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	const struct procmaps_entry *e;

	assert_int_equal(parse_text(sample_maps, &maps), 0);
	/* Start is inclusive. */
	e = procmaps__find(maps, 0x55d0c0a01000ull);
	assert_ptr_equal(e, procmaps__entry(maps, 1));
	/* Last byte is inside. */
	e = procmaps__find(maps, 0x55d0c0a04fffull);
	assert_ptr_equal(e, procmaps__entry(maps, 1));
	/* End is exclusive: it is the next, adjacent mapping's start. */
	e = procmaps__find(maps, 0x55d0c0a05000ull);
	assert_ptr_equal(e, procmaps__entry(maps, 2));
	/* First and last file-backed entries. */
	assert_ptr_equal(procmaps__find(maps, 0x55d0c0a00000ull),
			 procmaps__entry(maps, 0));
	assert_ptr_equal(procmaps__find(maps, 0x7f0000200000ull),
			 procmaps__entry(maps, 8));
	assert_ptr_equal(procmaps__find(maps, 0x7f00000fffffull),
			 procmaps__entry(maps, 7));
	procmaps__free(maps);
}

static void test_find_outside_and_in_gaps(void **state UNUSED)
{
	struct procmaps *maps = NULL;

	assert_int_equal(parse_text(sample_maps, &maps), 0);
	assert_null(procmaps__find(maps, 0));
	assert_null(procmaps__find(maps, 0x55d0c09fffffull));	/* before first */
	assert_null(procmaps__find(maps, 0x55d0c0a06000ull));	/* end of app rw */
	assert_null(procmaps__find(maps, 0x7f0000100000ull));	/* end of libc */
	assert_null(procmaps__find(maps, 0x7f0000201000ull));	/* gap */
	assert_null(procmaps__find(maps, UINT64_MAX));		/* after last */
	procmaps__free(maps);
}

static void test_maps_file_by_device_and_inode(void **state UNUSED)
{
	static const char text[] =
		"7f0000000000-7f0000001000 rw-s 00000000 00:05 77   /dev/shm/pool\n"
		"7f0000010000-7f0000020000 r-xp 00000000 08:01 200  /usr/lib/libx.so\n";
	struct procmaps *maps = NULL;
	uint64_t sda1 = makedev(8, 1), shm = makedev(0, 5);

	assert_int_equal(parse_text(text, &maps), 0);
	assert_true(procmaps__maps_file(maps, sda1, 200, false));
	assert_true(procmaps__maps_file(maps, sda1, 200, true));
	/* Data only: mapped, but not executable. */
	assert_true(procmaps__maps_file(maps, shm, 77, false));
	assert_false(procmaps__maps_file(maps, shm, 77, true));
	/* The inode on another device, another inode on the device. */
	assert_false(procmaps__maps_file(maps, makedev(8, 2), 200, false));
	assert_false(procmaps__maps_file(maps, sda1, 201, false));
	procmaps__free(maps);
}

static void test_find_skips_non_file_mappings(void **state UNUSED)
{
	struct procmaps *maps = NULL;

	assert_int_equal(parse_text(sample_maps, &maps), 0);
	assert_null(procmaps__find(maps, 0x55d0c1e40000ull));	/* [heap] */
	assert_null(procmaps__find(maps, 0x7f0000000000ull));	/* anonymous */
	assert_null(procmaps__find(maps, 0x7f000000ffffull));
	assert_null(procmaps__find(maps, 0x7ffd4b5f2000ull));	/* [vdso] */
	assert_null(procmaps__find(maps, 0xffffffffff600000ull)); /* [vsyscall] */
	procmaps__free(maps);
}

static void test_find_every_entry_of_a_long_list(void **state UNUSED)
{
	/* 100 adjacent 4 KiB mappings: the binary search must find each. */
	size_t len = 100 * 80 + 1, used = 0;
	char *text = malloc(len);
	struct procmaps *maps = NULL;

	assert_non_null(text);
	for (int i = 0; i < 100; i++) {
		uint64_t start = 0x10000000ull + (uint64_t)i * 0x1000;

		used += (size_t)snprintf(text + used, len - used,
					 "%llx-%llx r-xp 00000000 08:01 %d /lib/m%d.so\n",
					 (unsigned long long)start,
					 (unsigned long long)(start + 0x1000),
					 i + 1, i);
	}
	assert_int_equal(parse_text(text, &maps), 0);
	free(text);
	assert_int_equal(procmaps__count(maps), 100);
	for (size_t i = 0; i < 100; i++) {
		uint64_t start = 0x10000000ull + i * 0x1000;

		assert_ptr_equal(procmaps__find(maps, start), procmaps__entry(maps, i));
		assert_ptr_equal(procmaps__find(maps, start + 0xfff),
				 procmaps__entry(maps, i));
	}
	assert_null(procmaps__find(maps, 0x10000000ull - 1));
	assert_null(procmaps__find(maps, 0x10000000ull + 100 * 0x1000));
	procmaps__free(maps);
}

static void test_is_library_positive(void **state UNUSED)
{
	assert_true(procmaps__is_library("libc.so.6", "libc"));
	assert_true(procmaps__is_library("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc"));
	assert_true(procmaps__is_library("libc.so", "libc"));
	assert_true(procmaps__is_library("/lib/libc-2.31.so", "libc"));
	assert_true(procmaps__is_library("libc-2.31.so", "libc"));
	assert_true(procmaps__is_library("libpthread.so.0", "libpthread"));
	assert_true(procmaps__is_library("/lib64/libpthread-2.31.so", "libpthread"));
	assert_true(procmaps__is_library("libc.so.6.1", "libc"));
}

static void test_is_library_negative(void **state UNUSED)
{
	assert_false(procmaps__is_library("libcrypt.so.1", "libc"));
	assert_false(procmaps__is_library("libc.so.6x", "libc"));
	assert_false(procmaps__is_library("libcurl.so.4", "libc"));
	assert_false(procmaps__is_library("libc-.so", "libc"));
	assert_false(procmaps__is_library("libc", "libc"));
	assert_false(procmaps__is_library("libc.so.", "libc"));
	assert_false(procmaps__is_library("libc.sox", "libc"));
	assert_false(procmaps__is_library("libc-2.31.so.bak", "libc"));
	assert_false(procmaps__is_library("libc-2.31", "libc"));
	assert_false(procmaps__is_library("", "libc"));
	/* The stem must be the start of the base name, not of a directory. */
	assert_false(procmaps__is_library("/opt/libc.so.6/libfoo.so", "libc"));
	assert_false(procmaps__is_library("/lib/xlibc.so.6", "libc"));
	assert_false(procmaps__is_library("libc.so.6", "libpthread"));
	assert_false(procmaps__is_library("libpthread.so.0", "libc"));
}

static void test_find_library(void **state UNUSED)
{
	struct procmaps *maps = NULL;

	assert_int_equal(parse_text(sample_maps, &maps), 0);
	/* libcrypt comes first in the file but is not libc; the first libc entry wins. */
	assert_ptr_equal(procmaps__find_library(maps, "libc"),
			 procmaps__entry(maps, 6));
	assert_ptr_equal(procmaps__find_library(maps, "libcrypt"),
			 procmaps__entry(maps, 5));
	assert_null(procmaps__find_library(maps, "libpthread"));
	assert_null(procmaps__find_library(maps, "libcu"));
	procmaps__free(maps);
}

static void test_read_self(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	const struct procmaps_entry *e;

	/* This test's own code is in a file-backed, executable mapping. */
	assert_int_equal(procmaps__read(getpid(), &maps), 0);
	e = procmaps__find(maps, (uint64_t)(uintptr_t)&test_read_self);
	assert_non_null(e);
	assert_true(e->exec);
	assert_true(e->path[0] == '/');
	assert_non_null(procmaps__find_library(maps, "libc"));
	procmaps__free(maps);
	assert_int_equal(procmaps__read(-1, &maps), -ENOENT);
}

/*
 * The executable files of a list, copied: the list itself unchanged,
 * the copy's paths its own (the unwinder keeps the copy, the names the
 * whole list).
 */
static void test_exec_files_copy(void **state UNUSED)
{
	static const char text[] =
		"55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 11 /usr/bin/prog\n"
		"55d0c0a21000-55d0c0a40000 r-xp 00021000 08:01 11 /usr/bin/prog\n"
		"55d0c0a40000-55d0c0a41000 rw-p 00040000 08:01 11 /usr/bin/prog\n"
		"55d0c0a41000-55d0c0a60000 rw-p 00000000 00:00 0 \n"
		"7f0000000000-7f0000020000 r-xp 00002000 08:01 22 /lib/libc.so.6 (deleted)\n"
		"7f0000100000-7f0000101000 r-xp 00000000 00:00 0 [vdso]\n";
	struct procmaps *maps = NULL, *code = NULL;
	const struct procmaps_entry *e;

	assert_int_equal(parse_text(text, &maps), 0);
	assert_int_equal(procmaps__exec_files(maps, &code), 0);
	assert_int_equal(procmaps__count(maps), 6);
	assert_int_equal(procmaps__count(code), 2);
	procmaps__free(maps);
	e = procmaps__entry(code, 0);
	assert_int_equal(e->start, 0x55d0c0a21000ull);
	assert_int_equal(e->offset, 0x21000);
	assert_int_equal(e->inode, 11);
	assert_string_equal(e->path, "/usr/bin/prog");
	e = procmaps__entry(code, 1);
	assert_int_equal(e->start, 0x7f0000000000ull);
	assert_true(e->deleted);
	assert_string_equal(e->path, "/lib/libc.so.6");
	procmaps__free(code);
}

/* The maps entry of this test's own code. */
static const struct procmaps_entry *own_code(struct procmaps **maps)
{
	const struct procmaps_entry *e;

	assert_int_equal(procmaps__read(getpid(), maps), 0);
	e = procmaps__find(*maps, (uint64_t)(uintptr_t)&own_code);
	assert_non_null(e);
	return e;
}

static void test_file_path_of_own_code(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	const struct procmaps_entry *e = own_code(&maps);
	char path[4096], expect[4096];
	struct stat st;

	/*
	 * On overlayfs the maps line names the layer's device, not the one
	 * stat() sees through the mount: then the first choice cannot match.
	 */
	if (stat(e->path, &st) || st.st_dev != e->dev || st.st_ino != e->inode) {
		procmaps__free(maps);
		skip();
	}
	snprintf(expect, sizeof(expect), "/proc/%d/root%s", (int)getpid(), e->path);
	assert_int_equal(procmaps__file_path(getpid(), e, path, sizeof(path)), 0);
	assert_string_equal(path, expect);
	procmaps__free(maps);
}

static void test_file_path_rejects_other_file(void **state UNUSED)
{
	struct procmaps *maps = NULL;
	struct procmaps_entry e = *own_code(&maps);
	char path[4096];

	/* Same path, another inode: the file was replaced on disk. */
	e.inode ^= 1;
	assert_int_equal(procmaps__file_path(getpid(), &e, path, sizeof(path)),
			 -ENOENT);
	procmaps__free(maps);
}

static void test_file_path_of_anonymous_memory(void **state UNUSED)
{
	struct procmaps_entry e = {
		.start = 0x1000, .end = 0x2000, .path = "",
	};
	char path[64];

	assert_int_equal(procmaps__file_path(getpid(), &e, path, sizeof(path)),
			 -ENOENT);
	e.path = "[heap]";
	assert_int_equal(procmaps__file_path(getpid(), &e, path, sizeof(path)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_file_backed_exec),
		cmocka_unit_test(test_line_not_exec),
		cmocka_unit_test(test_line_anonymous),
		cmocka_unit_test(test_line_heap_and_vdso),
		cmocka_unit_test(test_line_path_with_spaces),
		cmocka_unit_test(test_line_deleted_suffix),
		cmocka_unit_test(test_line_deleted_path_with_spaces),
		cmocka_unit_test(test_line_large_addresses),
		cmocka_unit_test(test_line_malformed_rejected),
		cmocka_unit_test(test_line_short_perms_not_exec),
		cmocka_unit_test(test_parse_short_perms_after_exec_line),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_paths_outlive_input),
		cmocka_unit_test(test_parse_empty_file),
		cmocka_unit_test(test_parse_rejects_malformed_line),
		cmocka_unit_test(test_find_boundaries),
		cmocka_unit_test(test_find_outside_and_in_gaps),
		cmocka_unit_test(test_find_skips_non_file_mappings),
		cmocka_unit_test(test_maps_file_by_device_and_inode),
		cmocka_unit_test(test_find_every_entry_of_a_long_list),
		cmocka_unit_test(test_is_library_positive),
		cmocka_unit_test(test_is_library_negative),
		cmocka_unit_test(test_find_library),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_exec_files_copy),
		cmocka_unit_test(test_file_path_of_own_code),
		cmocka_unit_test(test_file_path_rejects_other_file),
		cmocka_unit_test(test_file_path_of_anonymous_memory),
	};

	return cmocka_run_group_tests_name("procmaps", tests, NULL, NULL);
}
