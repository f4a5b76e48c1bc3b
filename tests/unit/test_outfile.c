// SPDX-License-Identifier: GPL-2.0
/* Unit tests for user/outfile.c: what is planted at a name is never written through. */
#define UNUSED __attribute__((unused))
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "outfile.h"
#include "recfixture.h"

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void check_text(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

/* Nothing but name and the expected entries in dir (no temporary left). */
static int entries(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *d;
	int n = 0;

	assert_non_null(dh);
	while ((d = readdir(dh)))
		n += d->d_name[0] != '.';
	closedir(dh);
	return n;
}

static void test_a_planted_link_is_replaced_not_followed(void **state UNUSED)
{
	char *dir = recfixture_dir(), victim[512], name[512];
	struct outfile *f;
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(name, sizeof(name), "%s/out.json", dir);
	write_text(victim, "precious\n");
	assert_int_equal(symlink(victim, name), 0);
	for (int kind = OUTFILE_GROWING; kind <= OUTFILE_WHOLE; kind++) {
		assert_int_equal(outfile__open(NULL, name, kind, &f), 0);
		fputs("report\n", outfile__stream(f));
		assert_int_equal(outfile__close(f), 0);
		check_text(victim, "precious\n");
		check_text(name, "report\n");
		assert_int_equal(lstat(name, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(entries(dir), 2);
		unlink(name);
		assert_int_equal(symlink(victim, name), 0);
	}
	recfixture_rmdir(dir);
	free(dir);
}

static void test_whole_appears_when_complete(void **state UNUSED)
{
	char *dir = recfixture_dir(), name[512];
	struct outfile *f;

	snprintf(name, sizeof(name), "%s/trace.json", dir);
	write_text(name, "old\n");
	assert_int_equal(outfile__open(NULL, name, OUTFILE_WHOLE, &f), 0);
	fputs("new\n", outfile__stream(f));
	assert_int_equal(outfile__flush(f), 0);
	check_text(name, "old\n");
	assert_int_equal(outfile__close(f), 0);
	check_text(name, "new\n");
	/* Discarded: the older file stays, no temporary is left. */
	assert_int_equal(outfile__open(NULL, name, OUTFILE_WHOLE, &f), 0);
	fputs("half", outfile__stream(f));
	outfile__discard(f);
	check_text(name, "new\n");
	assert_int_equal(entries(dir), 1);
	recfixture_rmdir(dir);
	free(dir);
}

/* A profile per report: the last complete one is at the name. */
static void test_versions(void **state UNUSED)
{
	char *dir = recfixture_dir(), name[512];
	struct outfile *f;

	snprintf(name, sizeof(name), "%s/block.pb.gz", dir);
	assert_int_equal(outfile__open(NULL, name, OUTFILE_WHOLE, &f), 0);
	fputs("one\n", outfile__stream(f));
	assert_int_equal(outfile__commit(f), 0);
	check_text(name, "one\n");
	fputs("two\n", outfile__stream(f));
	assert_int_equal(outfile__flush(f), 0);
	check_text(name, "one\n");
	assert_int_equal(outfile__commit(f), 0);
	check_text(name, "two\n");
	assert_int_equal(outfile__close(f), 0);
	check_text(name, "two\n");
	assert_int_equal(entries(dir), 1);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_growing_is_there_at_once(void **state UNUSED)
{
	char *dir = recfixture_dir(), name[512];
	struct outfile *f;

	snprintf(name, sizeof(name), "%s/report.txt", dir);
	write_text(name, "older run\n");
	assert_int_equal(outfile__open(NULL, name, OUTFILE_GROWING, &f), 0);
	check_text(name, "");
	fputs("first\n", outfile__stream(f));
	assert_int_equal(outfile__flush(f), 0);
	check_text(name, "first\n");
	assert_int_equal(outfile__close(f), 0);
	recfixture_rmdir(dir);
	free(dir);
}

/* /dev/full: a stream (written as it is) whose writes fail with ENOSPC. */
static void test_a_full_disk_is_named(void **state UNUSED)
{
	struct outfile *f;

	assert_int_equal(outfile__open(NULL, "/dev/full", OUTFILE_GROWING, &f), 0);
	for (int i = 0; i < 10000; i++)
		fputs("a report line that fills the buffer\n", outfile__stream(f));
	assert_int_equal(outfile__close(f), -ENOSPC);
	/* /dev/null is a stream too: nothing replaces it. */
	assert_int_equal(outfile__open(NULL, "/dev/null", OUTFILE_WHOLE, &f), 0);
	fputs("x", outfile__stream(f));
	assert_int_equal(outfile__close(f), 0);
}

static void test_refused(void **state UNUSED)
{
	char *dir = recfixture_dir(), path[512];
	struct outfile *f;
	struct outdir *d;

	/* A directory is not a file. */
	assert_int_equal(outfile__open(NULL, dir, OUTFILE_GROWING, &f), -EISDIR);
	snprintf(path, sizeof(path), "%s/", dir);
	assert_int_equal(outfile__open(NULL, path, OUTFILE_GROWING, &f), -EISDIR);
	/* A recording's directory: made, or empty. */
	snprintf(path, sizeof(path), "%s/rec", dir);
	assert_int_equal(outdir__make(path, &d), 0);
	assert_int_equal(outfile__open(d, "syncprof.events", OUTFILE_NEW, &f), 0);
	assert_int_equal(outfile__close(f), 0);
	/* A name there is never made twice, nor followed. */
	assert_int_equal(outfile__open(d, "syncprof.events", OUTFILE_NEW, &f),
			 -EEXIST);
	assert_int_equal(symlinkat("/etc/passwd", outdir__fd(d), "1.dat"), 0);
	assert_int_equal(outfile__open(d, "1.dat", OUTFILE_APPEND, &f), -ELOOP);
	assert_int_equal(outfile__open(d, "2.dat", OUTFILE_NEW, &f), 0);
	assert_int_equal(outfile__close(f), 0);
	assert_int_equal(outfile__open(d, "2.dat", OUTFILE_APPEND, &f), 0);
	assert_int_equal(outfile__close(f), 0);
	outdir__free(d);
	assert_int_equal(outdir__make(path, &d), -ENOTEMPTY);
	if (!geteuid()) {
		snprintf(path, sizeof(path), "%s/theirs", dir);
		assert_int_equal(mkdir(path, 0777), 0);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(outdir__make(path, &d), -EPERM);
		/* Their FIFO at the name: not opened (it would block). */
		snprintf(path, sizeof(path), "%s/fifo", dir);
		assert_int_equal(mkfifo(path, 0666), 0);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(outfile__open(NULL, path, OUTFILE_GROWING, &f),
				 -EPERM);
	}
	recfixture_rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_planted_link_is_replaced_not_followed),
		cmocka_unit_test(test_whole_appears_when_complete),
		cmocka_unit_test(test_growing_is_there_at_once),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_a_full_disk_is_named),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
