// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked time from /proc (see blockedtime.h).  A thread's schedstat
 * holds its CPU time and its time runnable on a queue; the rest of its
 * life is blocked, on anything.  Chosen over --states' scheduler
 * programs (exact, but a program on every context switch of the machine)
 * for a hint given once per run: each thread's schedstat read once per
 * housekeeping period costs the target nothing.  A thread is matched by
 * its TID and its process, by a linear search (a hint for the processes
 * given, not --all's thousands); a round of samples drops the threads
 * it did not see, their time kept in one sum, so a server whose
 * processes come and go costs its live threads only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "blockedtime.h"
#include "schedstat.h"

struct thread_mark {
	pid_t pid, tid;
	uint64_t at_ns;		/* first seen */
	uint64_t busy_ns;	/* CPU time + run-queue wait then */
	uint64_t blocked_ns;	/* since, by the last sample */
	bool seen;		/* in this round */
};

struct blockedtime {
	struct thread_mark *marks;	/* the threads alive at the last round */
	size_t n, cap;
	uint64_t gone_ns;	/* the threads that have ended since */
};

int blockedtime__new(struct blockedtime **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void blockedtime__free(struct blockedtime *b)
{
	if (!b)
		return;
	free(b->marks);
	free(b);
}

/* CPU time + run-queue wait of one thread; -errno when it is gone. */
static int read_busy(pid_t pid, pid_t tid, uint64_t *busy_ns)
{
	struct schedstat st;
	int err = schedstat__read(pid, tid, &st);

	if (!err)
		*busy_ns = st.run_ns + st.wait_ns;
	return err;
}

static struct thread_mark *blockedtime__find(struct blockedtime *b, pid_t pid,
					    pid_t tid)
{
	for (size_t i = b->n; i-- > 0;)
		if (b->marks[i].tid == tid && b->marks[i].pid == pid)
			return &b->marks[i];
	return NULL;
}

/* One thread's sample; -errno only when no memory is left. */
static int blockedtime__thread(struct blockedtime *b, pid_t pid, pid_t tid,
			       uint64_t now_ns)
{
	struct thread_mark *m = blockedtime__find(b, pid, tid);
	uint64_t busy = 0, wall, ran;
	int err;

	if (read_busy(pid, tid, &busy))
		return 0;	/* gone meanwhile */
	/* Its clocks went back: a new thread with a reused TID. */
	if (m && busy >= m->busy_ns && now_ns >= m->at_ns) {
		wall = now_ns - m->at_ns;
		ran = busy - m->busy_ns;
		m->blocked_ns = wall > ran ? wall - ran : 0;
		m->seen = true;
		return 0;
	}
	err = array__grow(&b->marks, &b->cap, b->n + 1, sizeof(*b->marks));
	if (err)
		return err;
	b->marks[b->n++] = (struct thread_mark){ .pid = pid, .tid = tid,
						 .at_ns = now_ns,
						 .busy_ns = busy,
						 .seen = true };
	return 0;
}

int blockedtime__sample(struct blockedtime *b, pid_t pid, uint64_t now_ns)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (!*end && tid > 0)
			err = blockedtime__thread(b, pid, (pid_t)tid, now_ns);
	}
	closedir(dir);
	return err;
}

void blockedtime__round_begin(struct blockedtime *b)
{
	for (size_t i = 0; i < b->n; i++)
		b->marks[i].seen = false;
}

void blockedtime__round_end(struct blockedtime *b)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->n; i++) {
		if (!b->marks[i].seen) {
			b->gone_ns += b->marks[i].blocked_ns;
			continue;
		}
		b->marks[kept++] = b->marks[i];
	}
	b->n = kept;
}

uint64_t blockedtime__blocked_ns(const struct blockedtime *b)
{
	uint64_t blocked = b ? b->gone_ns : 0;

	for (size_t i = 0; b && i < b->n; i++)
		blocked += b->marks[i].blocked_ns;
	return blocked;
}
