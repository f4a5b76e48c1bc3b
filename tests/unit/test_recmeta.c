// SPDX-License-Identifier: GPL-2.0
/*
 * recmeta: what a recording keeps besides its waits survives a save and
 * load, thread names come back by tid (the main thread's is the
 * process's), and files it cannot read are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recfixture.h"
#include "recmeta.h"

#define UNUSED __attribute__((unused))

static void fill(struct recmeta *m)
{
	const struct recmeta_report reports[] = {
		{ .sequence = 1, .start_ns = 1000, .end_ns = 2000 },
		{ .sequence = 2, .first_window = 1, .last_window = 3,
		  .start_ns = 2000, .end_ns = 5000, .dropped = 17,
		  .unwind_stopped = 2, .abandoned = 3, .map_full = 10,
		  .no_storage = 1, .nested = 2, .skipped = 1, .ring = 3,
		  .wall_ns = 1763912472345678901ull },
	};

	memset(m, 0, sizeof(*m));
	m->pid = 4242;
	assert_int_equal(recmeta__set(&m->comm, "server"), 0);
	assert_int_equal(recmeta__set(&m->exe, "/opt/my app/server"), 0);
	assert_int_equal(recmeta__set(&m->mode, "contended"), 0);
	assert_int_equal(recmeta__set(&m->cmdline, "syncprof --record d\t-p 4242"), 0);
	m->attach_ns = 1000;
	m->end_ns = 6000;
	m->calibration_ns = 812;
	m->calibration_emulated_ns = 300;
	m->calibration_stepped_ns = 14000;
	m->map_size = 131072;
	m->ring_size = 1u << 20;
	m->events = 123456789012ull;
	m->lost = 17;
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(recmeta__add_report(m, &reports[i]), 0);
	assert_int_equal(recmeta__add_thread(m, 4242, ""), 0);
	assert_int_equal(recmeta__add_thread(m, 4243, "worker-1"), 0);
	assert_int_equal(recmeta__add_thread(m, 5000, "io"), 0);
}

static void save(const struct recmeta *m, const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	recmeta__write(m, f);
	assert_int_equal(fclose(f), 0);
}

static void test_save_load_roundtrip(void **state UNUSED)
{
	char *dir = recfixture_dir();
	struct recmeta m, back;
	char path[512];

	fill(&m);
	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_NAME);
	save(&m, path);
	assert_int_equal(recmeta__load(path, &back), 0);
	assert_int_equal(back.pid, 4242);
	assert_string_equal(back.comm, "server");
	assert_string_equal(back.exe, "/opt/my app/server");
	assert_string_equal(back.mode, "contended");
	assert_string_equal(back.cmdline, "syncprof --record d\t-p 4242");
	assert_int_equal(back.attach_ns, 1000);
	assert_int_equal(back.end_ns, 6000);
	assert_int_equal(back.calibration_ns, 812);
	assert_int_equal(back.calibration_emulated_ns, 300);
	assert_int_equal(back.calibration_stepped_ns, 14000);
	assert_int_equal(back.map_size, 131072);
	assert_int_equal(back.ring_size, 1u << 20);
	assert_int_equal(back.events, 123456789012ull);
	assert_int_equal(back.lost, 17);
	assert_int_equal(back.n_reports, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct recmeta_report *a = &m.reports[i], *b = &back.reports[i];

		assert_int_equal(a->sequence, b->sequence);
		assert_int_equal(a->first_window, b->first_window);
		assert_int_equal(a->last_window, b->last_window);
		assert_int_equal(a->start_ns, b->start_ns);
		assert_int_equal(a->end_ns, b->end_ns);
		assert_int_equal(a->dropped, b->dropped);
		assert_int_equal(a->unwind_stopped, b->unwind_stopped);
		assert_int_equal(a->abandoned, b->abandoned);
		assert_int_equal(a->map_full, b->map_full);
		assert_int_equal(a->no_storage, b->no_storage);
		/* The first report's wall time not known: no line, 0 back. */
		assert_int_equal(a->wall_ns, b->wall_ns);
		assert_int_equal(a->nested, b->nested);
		assert_int_equal(a->skipped, b->skipped);
		assert_int_equal(a->ring, b->ring);
	}
	assert_int_equal(back.n_threads, 3);
	assert_string_equal(recmeta__thread_comm(&back, 4243), "worker-1");
	assert_string_equal(recmeta__thread_comm(&back, 5000), "io");
	/* The main thread, unnamed when first seen: the process's name. */
	assert_string_equal(recmeta__thread_comm(&back, 4242), "server");
	assert_null(recmeta__thread_comm(&back, 4244));
	recmeta__clear(&back);
	recmeta__clear(&m);
	recfixture_rmdir(dir);
	free(dir);
}

static void test_threads_in_tid_order_only(void **state UNUSED)
{
	struct recmeta m = { 0 };

	assert_int_equal(recmeta__add_thread(&m, 10, "a"), 0);
	assert_int_equal(recmeta__add_thread(&m, 10, "b"), -EINVAL);
	assert_int_equal(recmeta__add_thread(&m, 9, "c"), -EINVAL);
	recmeta__clear(&m);
}

static void test_bad_files_are_refused(void **state UNUSED)
{
	static const char *const bad[] = {
		"syncprof-recording\t2\npid\t1\nmode\tfull\n",	/* version */
		"syncprof-names\t1\n",				/* not meta */
		"syncprof-recording\t1\nmode\tfull\n",		/* no pid */
		"syncprof-recording\t1\npid\t1\n",		/* no mode */
		"syncprof-recording\t1\npid\tx\nmode\tfull\n",
		"syncprof-recording\t1\npid\t1\nmode\tfull\n"
			"report\t1\t5\t4\t0\t0\t0\t0\n",	/* windows backwards */
		"syncprof-recording\t1\npid\t1\nmode\tfull\nreport\t1\t2\n",
	};
	char *dir = recfixture_dir();
	struct recmeta m;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_NAME);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		recfixture_write(dir, RECMETA_NAME, bad[i]);
		assert_int_equal(recmeta__load(path, &m), -EINVAL);
	}
	recfixture_write(dir, RECMETA_NAME,
			 "syncprof-recording\t1\npid\t1\nmode\tfull\nlater\tkey\n");
	assert_int_equal(recmeta__load(path, &m), 0);
	recmeta__clear(&m);
	assert_int_equal(recmeta__load("/nonexistent/meta", &m), -ENOENT);
	recfixture_rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_load_roundtrip),
		cmocka_unit_test(test_threads_in_tid_order_only),
		cmocka_unit_test(test_bad_files_are_refused),
	};

	return cmocka_run_group_tests_name("recmeta", tests, NULL, NULL);
}
