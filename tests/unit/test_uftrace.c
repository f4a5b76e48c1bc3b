// SPDX-License-Identifier: GPL-2.0
/*
 * uftrace: the record word matches uftrace's own recordings bit for bit;
 * an export writes the info header and lines, task.txt, the session map,
 * the symbol file and one .dat per thread with each wait an entry/exit
 * pair and each loss a LOST record inside a "(waits lost)" span, in time
 * order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recfixture.h"
#include "recnames.h"
#include "uftrace.h"

#define UNUSED __attribute__((unused))

struct rec {
	uint64_t time;
	uint64_t word;
};

static void test_record_word_matches_uftrace(void **state UNUSED)
{
	/* From `uftrace record` of a -pg program, read back with xxd. */
	assert_int_equal(uftrace__record_word(UFTRACE_REC_ENTRY, 0, 0x564c97650259),
			 0x564c976502590028ull);
	assert_int_equal(uftrace__record_word(UFTRACE_REC_EXIT, 0, 0x564c97650259),
			 0x564c976502590029ull);
	assert_int_equal(uftrace__record_word(UFTRACE_REC_ENTRY, 1, 0x564c97650217),
			 0x564c976502170068ull);
	assert_int_equal(uftrace__record_word(UFTRACE_REC_EXIT, 2, 0x564c97650090),
			 0x564c9765009000a9ull);
	/* LOST: type 2, the count as its address. */
	assert_int_equal(uftrace__record_word(UFTRACE_REC_LOST, 0, 17),
			 0x11002aull);
	/* Only 48 address bits and 10 depth bits. */
	assert_int_equal(uftrace__record_word(UFTRACE_REC_ENTRY, 0x400, 0xffff000000000001ull),
			 0x10028ull);
}

static void test_span_addresses(void **state UNUSED)
{
	assert_int_equal(uftrace__span_addr(-1), UFTRACE_SPAN_BASE + 0x10);
	assert_int_equal(uftrace__span_addr(0), UFTRACE_SPAN_BASE + 0x20);
	assert_int_equal(uftrace__span_addr(5), UFTRACE_SPAN_BASE + 0x70);
	/* Above user space, inside a record's 48 bits. */
	assert_true(UFTRACE_SPAN_BASE > 0x7fffffffffffull);
	assert_true(uftrace__span_addr(1 << 20) < (1ull << 48));
}

static struct sp_wait_event wait_event(int span, uint32_t tid, uint64_t start,
				       uint64_t end)
{
	return (struct sp_wait_event){
		.key = recfixture_key(span, tid),
		.start_ns = start,
		.end_ns = end,
		.max_ns = end - start,
		.flags = SP_EVENT_COUNTED,
	};
}

static void check_rec(const struct rec *r, uint64_t time,
		      enum uftrace_rec_type type, uint64_t addr)
{
	assert_int_equal(r->time, time);
	assert_int_equal(r->word, uftrace__record_word(type, 0, addr));
}

static void test_export(void **state UNUSED)
{
	struct sp_wait_event events[] = {
		wait_event(0, 11, 5000001000, 5000002000),
		wait_event(2, 12, 5000001500, 5000001600),
		wait_event(1, 11, 5000003000, 5000004000),
		{ .key = { .tid = 12 }, .flags = SP_EVENT_LOST_ONLY, .lost = 2,
		  .lost_ns = 5000005000, .start_ns = 5000006000,
		  .end_ns = 5000006000 },
	};
	struct recmeta meta = { .pid = 11, .attach_ns = 5000000000,
				.end_ns = 5000007000 };
	char *dir = recfixture_dir(), path[512], out[256], *text;
	struct outdir *outdir;
	struct evlog_reader *log;
	struct recnames *names;
	size_t len;
	int fd;

	/* Three waits lost by thread 11 before its second wait. */
	events[2].lost = 3;
	events[2].lost_ns = 5000002500;
	recfixture_write(dir, RECNAMES_NAME, recfixture_names);
	snprintf(path, sizeof(path), "%s/%s", dir, RECNAMES_NAME);
	assert_int_equal(recnames__load(path, &names), 0);
	fd = recfixture_log(dir, events, 4);
	assert_int_equal(evlog__reader_new(fd, &log), 0);
	assert_int_equal(recmeta__set(&meta.comm, "server"), 0);
	assert_int_equal(recmeta__set(&meta.exe, "/src/app/bin/server"), 0);
	assert_int_equal(recmeta__set(&meta.mode, "full"), 0);
	assert_int_equal(recmeta__set(&meta.cmdline, "syncprof --record d"), 0);

	snprintf(out, sizeof(out), "%s/uftrace", dir);
	assert_int_equal(outdir__make(out, &outdir), 0);
	assert_int_equal(uftrace__export(outdir, &meta, names, log), 0);
	outdir__free(outdir);

	/* Thread 11: a wait, a loss of 3 up to the next wait, the wait. */
	struct rec *r = (struct rec *)recfixture_read(out, "11.dat", &len);

	assert_non_null(r);
	assert_int_equal(len, 7 * sizeof(*r));
	check_rec(&r[0], 5000001000, UFTRACE_REC_ENTRY, uftrace__span_addr(0));
	check_rec(&r[1], 5000002000, UFTRACE_REC_EXIT, uftrace__span_addr(0));
	check_rec(&r[2], 5000002500, UFTRACE_REC_ENTRY, uftrace__span_addr(-1));
	check_rec(&r[3], 5000002500, UFTRACE_REC_LOST, 3);
	check_rec(&r[4], 5000003000, UFTRACE_REC_EXIT, uftrace__span_addr(-1));
	/* Spans are numbered as they first appear: this one third. */
	check_rec(&r[5], 5000003000, UFTRACE_REC_ENTRY, uftrace__span_addr(2));
	check_rec(&r[6], 5000004000, UFTRACE_REC_EXIT, uftrace__span_addr(2));
	free(r);
	/* Thread 12: a wait, then 2 lost that no later wait carried. */
	r = (struct rec *)recfixture_read(out, "12.dat", &len);
	assert_non_null(r);
	assert_int_equal(len, 5 * sizeof(*r));
	check_rec(&r[0], 5000001500, UFTRACE_REC_ENTRY, uftrace__span_addr(1));
	check_rec(&r[1], 5000001600, UFTRACE_REC_EXIT, uftrace__span_addr(1));
	check_rec(&r[2], 5000005000, UFTRACE_REC_ENTRY, uftrace__span_addr(-1));
	check_rec(&r[3], 5000005000, UFTRACE_REC_LOST, 2);
	check_rec(&r[4], 5000006000, UFTRACE_REC_EXIT, uftrace__span_addr(-1));
	free(r);

	text = recfixture_read(out, "task.txt", NULL);
	assert_non_null(strstr(text, "SESS timestamp=5.000000000 pid=11 sid="));
	assert_non_null(strstr(text, " exename=\"/src/app/bin/server\"\n"));
	assert_non_null(strstr(text, "TASK timestamp=5.000001000 tid=11 pid=11\n"));
	assert_non_null(strstr(text, "TASK timestamp=5.000001500 tid=12 pid=11\n"));
	free(text);

	text = recfixture_read(out, UFTRACE_SPAN_MODULE ".sym", NULL);
	assert_string_equal(text,
		"# symbols: 4\n# path name: " UFTRACE_SPAN_MODULE "\n"
		"0000000000000010 T (waits lost)\n"
		"0000000000000020 T mutex queue_lock @ server.c:118\n"
		"0000000000000030 T condvar 0xbbbb @ lib/queue.c:42\n"
		"0000000000000040 T futex 0xbbbb @ libc.so.6+0x2000\n"
		"0000000000000050 ? __sym_end\n");
	free(text);

	/* info: the 40-byte header, then its lines in bit order. */
	text = recfixture_read(out, "info", &len);
	assert_true(len > 40);
	assert_memory_equal(text, "Ftrace!\0\4\0\0\0\x28\0\1\2", 16);
	assert_non_null(strstr(text + 40, "exename:/src/app/bin/server\n"
				"cmdline:syncprof --record d\n"));
	assert_non_null(strstr(text + 40, "taskinfo:lines=2\ntaskinfo:nr_tid=2\n"
				"taskinfo:tids=11,12\nrecord_date:"));
	assert_non_null(strstr(text + 40, "elapsed_time:0.000007000 sec\n"));
	free(text);

	evlog__reader_free(log);
	close(fd);
	recnames__free(names);
	recmeta__clear(&meta);
	/* The session map: the spans' module and a stack line. */
	{
		char cmd[800];

		snprintf(cmd, sizeof(cmd), "grep -q '^a00000000000-a00000000060 "
			 "r-xp 00000000 00:00 0 syncprof-waits$' %s/sid-*.map && "
			 "grep -q '\\[stack\\]$' %s/sid-*.map", out, out);
		assert_int_equal(system(cmd), 0);
	}
	recfixture_rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_word_matches_uftrace),
		cmocka_unit_test(test_span_addresses),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests_name("uftrace", tests, NULL, NULL);
}
