// SPDX-License-Identifier: GPL-2.0
/*
 * worker: a step runs on its own thread, with the lock held, named and
 * with every signal blocked; a wake reaches its wait, a deadline ends
 * it, and a stop joins a thread that waits forever.  outbox: a reserved
 * page is put, wakes the eventfd, and is taken once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "outbox.h"
#include "worker.h"

#define UNUSED __attribute__((unused))
#define NAME "sp-test-worker"
#define MS 1000000ull

struct counter {
	int asked, done;		/* under the worker's lock */
	uint64_t deadline_ns;		/* a timed wait, when not 0 */
	uint64_t woke_ns;
	pid_t tid;
	char name[32];
	unsigned long long sigblk;
};

static void counter__step(struct worker *w, void *arg)
{
	struct counter *c = arg;

	if (!c->tid) {
		FILE *f;
		char line[256], path[64];

		c->tid = (pid_t)syscall(SYS_gettid);
		snprintf(path, sizeof(path), "/proc/self/task/%d/status",
			 (int)c->tid);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			sscanf(line, "Name:\t%31s", c->name);
			sscanf(line, "SigBlk:\t%llx", &c->sigblk);
		}
		if (f)
			fclose(f);
	}
	if (c->deadline_ns) {
		worker__wait(w, c->deadline_ns);
		if (clock__monotonic_ns() >= c->deadline_ns) {
			c->woke_ns = clock__monotonic_ns();
			c->deadline_ns = 0;
		}
		return;
	}
	if (c->done == c->asked) {
		worker__wait(w, WORKER_FOREVER);
		return;
	}
	worker__unlock(w);
	usleep(100);
	worker__lock(w);
	c->done++;
}

static int counter__read(struct worker *w, struct counter *c)
{
	int done;

	worker__lock(w);
	done = c->done;
	worker__unlock(w);
	return done;
}

static void test_steps_run_until_stopped(void **state UNUSED)
{
	struct counter c = { 0 };
	struct worker *w;
	uint64_t until;

	assert_int_equal(worker__start(NAME, counter__step, &c, &w), 0);
	worker__lock(w);
	c.asked = 5;
	worker__wake(w);
	worker__unlock(w);
	until = clock__monotonic_ns() + 10000 * MS;
	while (counter__read(w, &c) < 5 && clock__monotonic_ns() < until)
		usleep(1000);
	assert_int_equal(counter__read(w, &c), 5);
	worker__lock(w);
	assert_false(worker__stopping(w));
	worker__unlock(w);
	/* Waiting forever: the stop reaches it. */
	worker__stop(w);
	assert_string_equal(c.name, NAME);
	assert_true(c.tid != (pid_t)syscall(SYS_gettid));
	assert_true(c.sigblk != 0);
	/* SIGINT (2) and SIGCHLD (17) among the blocked. */
	assert_true(c.sigblk & (1ull << (2 - 1)));
	assert_true(c.sigblk & (1ull << (17 - 1)));
}

static void test_a_deadline_ends_the_wait(void **state UNUSED)
{
	struct counter c = { 0 };
	struct worker *w;
	uint64_t start = clock__monotonic_ns(), until;

	c.deadline_ns = start + 30 * MS;
	assert_int_equal(worker__start(NAME, counter__step, &c, &w), 0);
	until = start + 10000 * MS;
	for (;;) {
		uint64_t woke;

		worker__lock(w);
		woke = c.woke_ns;
		worker__unlock(w);
		if (woke || clock__monotonic_ns() > until)
			break;
		usleep(1000);
	}
	worker__stop(w);
	assert_true(c.woke_ns >= start + 30 * MS);
}

static void test_stop_of_none(void **state UNUSED)
{
	worker__stop(NULL);
}

static void test_outbox_puts_wake_and_take_once(void **state UNUSED)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct outbox_page page = { 0 }, got = { 0 };
	struct outbox *o;
	uint64_t n = 0;

	assert_true(fd >= 0);
	assert_int_equal(outbox__new(fd, &o), 0);
	assert_false(outbox__take(o, &got));
	assert_int_equal(outbox__reserve(o), 0);
	assert_int_equal(outbox__reserve(o), 0);
	outbox__unreserve(o);
	page.id = 42;
	page.data = strdup("page");
	page.len = 4;
	outbox__put(o, page);
	assert_int_equal(read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	assert_int_equal(n, 1);
	assert_true(outbox__take(o, &got));
	assert_int_equal(got.id, 42);
	assert_int_equal(got.len, 4);
	assert_memory_equal(got.data, "page", 4);
	free(got.data);
	assert_false(outbox__take(o, &got));
	/* A page not taken is freed with the outbox. */
	assert_int_equal(outbox__reserve(o), 0);
	page.data = strdup("left");
	outbox__put(o, page);
	outbox__free(o);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_run_until_stopped),
		cmocka_unit_test(test_a_deadline_ends_the_wait),
		cmocka_unit_test(test_stop_of_none),
		cmocka_unit_test(test_outbox_puts_wake_and_take_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
