// SPDX-License-Identifier: GPL-2.0
/*
 * linereader: lines without their '\n' at any length, a last line with
 * no '\n', a failed read told from the file's end, and /proc's one-line
 * files read whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "linereader.h"

/* A temporary file holding len bytes of text; its path in path. */
static void write_file(char *path, const char *text, size_t len)
{
	int fd;

	strcpy(path, "/tmp/test_linereader.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* A reader of a temporary file holding the string literal text. */
#define OPEN_TEXT(path, text, r) do {					\
		write_file(path, text, sizeof(text) - 1);		\
		assert_int_equal(linereader__open(path, r), 0);		\
	} while (0)

static void test_lines_of_a_file(void **state)
{
	static const char text[] = "first\n\nthird line\nlast, no newline";
	struct linereader *r;
	char path[64], *line;
	size_t len;

	(void)state;
	OPEN_TEXT(path, text, &r);
	line = linereader__next(r, &len);
	assert_string_equal(line, "first");
	assert_int_equal(len, 5);
	line = linereader__next(r, &len);
	assert_string_equal(line, "");
	assert_int_equal(len, 0);
	assert_string_equal(linereader__next(r, NULL), "third line");
	line = linereader__next(r, &len);
	assert_string_equal(line, "last, no newline");
	assert_int_equal(len, strlen("last, no newline"));
	assert_null(linereader__next(r, NULL));
	assert_null(linereader__next(r, NULL));
	assert_int_equal(linereader__close(r), 0);
	unlink(path);
}

/* A line far longer than any stdio buffer comes back as one line. */
static void test_long_line_is_one_line(void **state)
{
	size_t n = 3 * 65536;
	char *text = malloc(n + 8), *line;
	struct linereader *r;
	FILE *stream;
	size_t len;

	(void)state;
	assert_non_null(text);
	memset(text, 'x', n);
	memcpy(text + n, "\nend\n", 6);
	stream = fmemopen(text, n + 5, "r");
	assert_non_null(stream);
	assert_int_equal(linereader__stream(stream, &r), 0);
	line = linereader__next(r, &len);
	assert_int_equal(len, n);
	assert_int_equal(strspn(line, "x"), n);
	assert_string_equal(linereader__next(r, NULL), "end");
	assert_null(linereader__next(r, NULL));
	assert_int_equal(linereader__close(r), 0);
	/* The stream is the caller's: still open. */
	assert_int_equal(fseek(stream, 0, SEEK_SET), 0);
	assert_int_equal(fgetc(stream), 'x');
	fclose(stream);
	free(text);
}

/* A NUL byte inside a line: the length says where the line ends. */
static void test_nul_inside_a_line(void **state)
{
	static const char text[] = "a\0b\nc\n";
	struct linereader *r;
	char path[64], *line;
	size_t len;

	(void)state;
	OPEN_TEXT(path, text, &r);
	line = linereader__next(r, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(line, "a\0b", 3);
	assert_string_equal(linereader__next(r, NULL), "c");
	assert_int_equal(linereader__close(r), 0);
	unlink(path);
}

/* A read that fails (a directory: EISDIR) is -EIO, not an empty file. */
static void test_failed_read_is_an_error(void **state)
{
	struct linereader *r;

	(void)state;
	assert_int_equal(linereader__open("/", &r), 0);
	assert_null(linereader__next(r, NULL));
	assert_int_equal(linereader__close(r), -EIO);
	assert_int_equal(linereader__open("/nonexistent/linereader", &r),
			 -ENOENT);
	assert_int_equal(linereader__close(NULL), 0);
}

/* stat's name may hold '\n': read whole, only the final '\n' dropped. */
static void test_small_reads_whole(void **state)
{
	static const char text[] = "12 (a\nb) S 1\n";
	char path[64], buf[64];

	(void)state;
	write_file(path, text, sizeof(text) - 1);
	assert_int_equal(linereader__small(path, buf, sizeof(buf)),
			 (int)sizeof(text) - 2);
	assert_string_equal(buf, "12 (a\nb) S 1");
	/* Cut to the buffer, still NUL-terminated. */
	assert_int_equal(linereader__small(path, buf, 6), 5);
	assert_string_equal(buf, "12 (a");
	unlink(path);
	write_file(path, "", 0);
	assert_int_equal(linereader__small(path, buf, sizeof(buf)), -ENOENT);
	unlink(path);
	assert_int_equal(linereader__small("/nonexistent/linereader", buf,
					   sizeof(buf)), -ENOENT);
	assert_int_equal(linereader__small("/", buf, sizeof(buf)), -EISDIR);
}

/* The real file: this process's stat names its pid and its name. */
static void test_small_reads_proc_stat(void **state)
{
	char buf[1024], want[32], *close_paren;
	int n;

	(void)state;
	n = linereader__small("/proc/self/stat", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	snprintf(want, sizeof(want), "%d (", (int)getpid());
	assert_memory_equal(buf, want, strlen(want));
	close_paren = strrchr(buf, ')');
	assert_non_null(close_paren);
	assert_true(buf[n - 1] != '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_of_a_file),
		cmocka_unit_test(test_long_line_is_one_line),
		cmocka_unit_test(test_nul_inside_a_line),
		cmocka_unit_test(test_failed_read_is_an_error),
		cmocka_unit_test(test_small_reads_whole),
		cmocka_unit_test(test_small_reads_proc_stat),
	};

	return cmocka_run_group_tests_name("linereader", tests, NULL, NULL);
}
