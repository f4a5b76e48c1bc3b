// SPDX-License-Identifier: GPL-2.0
/*
 * A GLib target: a GMutex and a GCond, futex-based in GLib (their slow
 * paths are static functions of a stripped libglib-2.0).
 *
 *   glocks [--iters N] [--hold-us N] [--truth FILE] [--linger-ms N]
 *
 * A holder thread keeps the GMutex --hold-us while the waiter blocks in
 * g_mutex_lock (path "gmutex"), then the waiter waits on the GCond until
 * the holder signals it --hold-us later, after releasing the mutex (path
 * "gcond"), then the holder keeps the GRWLock for writing while the
 * waiter blocks in g_rw_lock_reader_lock (path "grwlock": GLib waits on
 * a pthread rwlock it allocated).  The waiter's own clock around each
 * call is the truth, written before the process lingers --linger-ms:
 * {"pid", "objects": {"gm", "gc", "grw"}, "paths": {NAME: {"count",
 * "wait_ns"}}}.
 */
#define _GNU_SOURCE
#include <glib.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "lib/targetkit.h"

static GMutex gm;
static GCond gc;
static GRWLock grw;
static gboolean signalled;
static int iters = 20, hold_us = 3000;
static atomic_int phase;
static uint64_t mutex_ns, cond_ns, mutex_count, cond_count, rw_ns, rw_count;
static atomic_int waiter_tid;

static void wait_phase(int value)
{
	while (atomic_load(&phase) < value)
		sleep_us(50);
}

static gpointer holder(gpointer data)
{
	(void)data;
	for (int i = 0; i < iters; i++) {
		g_mutex_lock(&gm);
		atomic_store(&phase, 5 * i + 1);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(hold_us);
		g_mutex_unlock(&gm);
		wait_phase(5 * i + 2);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(hold_us);
		g_mutex_lock(&gm);
		signalled = TRUE;
		g_mutex_unlock(&gm);
		g_cond_signal(&gc);
		wait_phase(5 * i + 3);
		g_rw_lock_writer_lock(&grw);
		atomic_store(&phase, 5 * i + 4);
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(hold_us);
		g_rw_lock_writer_unlock(&grw);
		wait_phase(5 * i + 5);
	}
	return NULL;
}

static void waiter(void)
{
	for (int i = 0; i < iters; i++) {
		uint64_t t0;

		wait_phase(5 * i + 1);
		sleep_us(hold_us / 10);
		t0 = now_ns();
		g_mutex_lock(&gm); /* CALLSITE:gmutex */
		mutex_ns += now_ns() - t0;
		mutex_count++;
		signalled = FALSE;
		atomic_store(&phase, 5 * i + 2);
		t0 = now_ns();
		while (!signalled)
			g_cond_wait(&gc, &gm); /* CALLSITE:gcond */
		cond_ns += now_ns() - t0;
		cond_count++;
		g_mutex_unlock(&gm);
		atomic_store(&phase, 5 * i + 3);
		wait_phase(5 * i + 4);
		sleep_us(hold_us / 10);
		t0 = now_ns();
		g_rw_lock_reader_lock(&grw); /* CALLSITE:grwlock */
		rw_ns += now_ns() - t0;
		rw_count++;
		g_rw_lock_reader_unlock(&grw);
		atomic_store(&phase, 5 * i + 5);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "truth", required_argument, NULL, 't' },
		{ "linger-ms", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *truth = NULL;
	int linger_ms = 0;
	GThread *thread;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'h')
			hold_us = atoi(optarg);
		else if (c == 't')
			truth = optarg;
		else if (c == 'l')
			linger_ms = atoi(optarg);
		else
			return 2;
	}
	atomic_store(&waiter_tid, (int)gettid());
	thread = g_thread_new("holder", holder, NULL);
	waiter();
	g_thread_join(thread);
	if (truth) {
		f = fopen(truth, "w");
		if (!f)
			return 1;
		fprintf(f, "{\"pid\": %d, \"objects\": {\"gm\": \"%p\", \"gc\": \"%p\", "
			"\"grw\": \"%p\"}, "
			"\"paths\": {\"gmutex\": {\"count\": %llu, \"wait_ns\": %llu}, "
			"\"gcond\": {\"count\": %llu, \"wait_ns\": %llu}, "
			"\"grwlock\": {\"count\": %llu, \"wait_ns\": %llu}}}\n", (int)getpid(),
			(void *)&gm, (void *)&gc, (void *)&grw,
			(unsigned long long)mutex_count, (unsigned long long)mutex_ns,
			(unsigned long long)cond_count, (unsigned long long)cond_ns,
			(unsigned long long)rw_count, (unsigned long long)rw_ns);
		if (fclose(f))
			return 1;
	}
	sleep_us(linger_ms * 1000);
	return 0;
}
