// SPDX-License-Identifier: GPL-2.0
/*
 * procspace against real processes: a forked child (one layout, every
 * address its own), another program exec'ed (libc elsewhere: its
 * addresses become this process's), shared memory named by its mapping.
 */
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>
#include <cmocka.h>

#include "procspace.h"
#include "symbolizer.h"

#define UNUSED __attribute__((unused))

extern char **environ;

/* The load base of libc.so.6 in pid: its mapping at file offset 0. */
/* The start of libc's executable mapping in process pid. */
static uint64_t libc_text(pid_t pid)
{
	char path[64], line[512], perms[8];
	uint64_t start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s;

		if (strstr(line, "/libc.so.6") &&
		    sscanf(line, "%llx-%*x %7s", &s, perms) == 2 &&
		    perms[2] == 'x') {
			start = s;
			break;
		}
	}
	fclose(f);
	assert_true(start != 0);
	return start;
}

static uint64_t libc_base(pid_t pid)
{
	char path[64], line[512];
	uint64_t start = 0, offset;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, o;

		if (!strstr(line, "/libc.so.6") ||
		    sscanf(line, "%llx-%*x %*s %llx", &s, &o) != 2)
			continue;
		offset = o;
		if (!offset) {
			start = s;
			break;
		}
	}
	fclose(f);
	assert_true(start != 0);
	return start;
}

/* A child that waits to be killed, forked: the parent's layout. */
static pid_t fork_sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_forked_child_keeps_its_addresses(void **state UNUSED)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t lock = (uint64_t)(uintptr_t)page + 0x40, offset;
	uint64_t fn = (uint64_t)(uintptr_t)&pthread_mutex_lock;
	struct procspace *ps;
	const char *path;
	pid_t child;

	assert_true(page != MAP_FAILED);
	child = fork_sleeper();
	assert_int_equal(procspace__new(&ps), 0);
	assert_int_equal(procspace__update(ps, getpid(), 0), 0);
	assert_int_equal(procspace__update(ps, child, getpid()), 0);
	assert_int_equal(procspace__canonical(ps, child, fn), fn);
	assert_int_equal(procspace__canonical(ps, child, lock), lock);
	assert_int_equal(procspace__canonical(ps, getpid(), lock), lock);
	/* Shared memory: named by its mapping and offset, from both. */
	assert_true(procspace__shared_object(ps, lock, &path, &offset));
	assert_non_null(strstr(path, "/dev/zero"));
	assert_int_equal(offset, 0x40);
	/* Code is no shared memory object. */
	assert_false(procspace__shared_object(ps, fn, &path, &offset));
	/* Nothing maps it: the address as it is. */
	assert_int_equal(procspace__canonical(ps, child, 0x1000), 0x1000);
	procspace__free(ps);
	reap(child);
	munmap(page, 4096);
}

static void test_exec_child_translates_to_the_first_process(void **state UNUSED)
{
	char *argv[] = { "sleep", "30", NULL };
	uint64_t fn, mine, theirs;
	uint64_t real, canonical;
	struct symbolizer *sym;
	struct procspace *ps;
	pid_t child;

	assert_int_equal(posix_spawnp(&child, "sleep", NULL, NULL, argv,
				      environ), 0);
	/* Its dynamic loader maps libc: wait until it has. */
	for (int i = 0; i < 200; i++) {
		char path[64], line[512];
		FILE *f;
		int found = 0;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			found |= strstr(line, "/libc.so.6") != NULL;
		if (f)
			fclose(f);
		if (found)
			break;
		usleep(10000);
	}
	mine = libc_base(getpid());
	theirs = libc_base(child);
	/* An address in libc's code (under ASan, &pthread_mutex_lock is
	 * the sanitizer's interceptor, in no libc mapping). */
	fn = libc_text(getpid()) + 0x100;
	assert_int_equal(procspace__new(&ps), 0);
	assert_int_equal(procspace__update(ps, getpid(), 0), 0);
	assert_int_equal(procspace__update(ps, child, 0), 0);
	/* The same file offset of libc in the other process: our address. */
	canonical = procspace__canonical(ps, child, theirs + (fn - mine));
	assert_int_equal(canonical, fn);
	/* Named in the process that mapped it first. */
	assert_int_equal(procspace__resolve(ps, canonical, &sym, &real), 0);
	assert_non_null(sym);
	assert_int_equal(real, fn);
	procspace__free(ps);
	reap(child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forked_child_keeps_its_addresses),
		cmocka_unit_test(test_exec_child_translates_to_the_first_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
