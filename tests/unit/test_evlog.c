// SPDX-License-Identifier: GPL-2.0
/*
 * evlog: events written come back in order and intact, across the
 * writer's and the reader's buffer boundaries; a torn last record ends
 * the log; a file that is not a log is refused.
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

#include "evlog.h"

#define UNUSED __attribute__((unused))

static struct sp_wait_event event(uint32_t i)
{
	return (struct sp_wait_event){
		.key = { .object = 0x1000 + i, .callsite = 0x2000 + i,
			 .tid = 100 + i % 7, .type = i % SP_TYPE__COUNT,
			 .owner_tid = i % 3 },
		.start_ns = 1000000ull * i,
		.end_ns = 1000000ull * i + 500 + i,
		.max_ns = 700 + i,
		.flags = SP_EVENT_COUNTED,
		.window = i / 1000,
		.lost = i % 11 == 0 ? i : 0,
		.lost_ns = i % 11 == 0 ? 1000000ull * i - 10 : 0,
	};
}

static int log_file(void)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	return dup(fileno(f));	/* the FILE goes at exit; the file with the fd */
}

static void write_events(int fd, uint32_t n)
{
	struct evlog_writer *w;
	int keep;

	assert_int_equal(evlog__writer_new(fd, &w), 0);
	for (uint32_t i = 0; i < n; i++) {
		struct sp_wait_event e = event(i);

		assert_int_equal(evlog__append(w, &e), 0);
	}
	assert_int_equal(evlog__count(w), n);
	assert_int_equal(evlog__writer_free(w, &keep), 0);
	assert_int_equal(keep, fd);
}

static void test_roundtrip_across_buffers(void **state UNUSED)
{
	/* ~3 MiB: the writer's and the reader's 1 MiB buffers wrap. */
	const uint32_t n = 3 * (1u << 20) / sizeof(struct sp_wait_event) + 17;
	struct evlog_reader *r;
	struct sp_wait_event e;
	int fd = log_file();

	write_events(fd, n);
	assert_int_equal(evlog__reader_new(fd, &r), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			struct sp_wait_event want = event(i);

			assert_int_equal(evlog__read(r, &e), 1);
			assert_memory_equal(&e, &want, sizeof(e));
		}
		assert_int_equal(evlog__read(r, &e), 0);
		evlog__rewind(r);
	}
	evlog__reader_free(r);
	close(fd);
}

static void test_torn_last_record_ends_the_log(void **state UNUSED)
{
	struct evlog_reader *r;
	struct sp_wait_event e;
	int fd = log_file();
	off_t size;

	write_events(fd, 3);
	size = lseek(fd, 0, SEEK_END);
	assert_int_equal(ftruncate(fd, size - 5), 0);
	assert_int_equal(evlog__reader_new(fd, &r), 0);
	assert_int_equal(evlog__read(r, &e), 1);
	assert_int_equal(evlog__read(r, &e), 1);
	assert_int_equal(evlog__read(r, &e), 0);
	evlog__reader_free(r);
	close(fd);
}

static void test_empty_log(void **state UNUSED)
{
	struct evlog_reader *r;
	struct sp_wait_event e;
	int fd = log_file();

	write_events(fd, 0);
	assert_int_equal(evlog__reader_new(fd, &r), 0);
	assert_int_equal(evlog__read(r, &e), 0);
	evlog__reader_free(r);
	close(fd);
}

static void test_not_a_log_is_refused(void **state UNUSED)
{
	static const char text[] = "Ftrace!\0 not ours at all";
	struct evlog_reader *r;
	int fd = log_file();

	assert_int_equal(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	assert_int_equal(evlog__reader_new(fd, &r), -EINVAL);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(evlog__reader_new(fd, &r), -EINVAL);
	close(fd);
}

static void test_writer_truncates_an_older_log(void **state UNUSED)
{
	struct evlog_reader *r;
	struct sp_wait_event e;
	int fd = log_file();

	write_events(fd, 50);
	write_events(fd, 2);
	assert_int_equal(evlog__reader_new(fd, &r), 0);
	assert_int_equal(evlog__read(r, &e), 1);
	assert_int_equal(evlog__read(r, &e), 1);
	assert_int_equal(evlog__read(r, &e), 0);
	evlog__reader_free(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_across_buffers),
		cmocka_unit_test(test_torn_last_record_ends_the_log),
		cmocka_unit_test(test_empty_log),
		cmocka_unit_test(test_not_a_log_is_refused),
		cmocka_unit_test(test_writer_truncates_an_older_log),
	};

	return cmocka_run_group_tests_name("evlog", tests, NULL, NULL);
}
