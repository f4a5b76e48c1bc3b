// SPDX-License-Identifier: GPL-2.0
/*
 * libbpf's ring_buffer API, drained from a thread of its own every
 * RECORDER_POLL_MS, or at once when the kernel wakes it: the programs
 * wake it only as the ring fills past each quarter (record.bpf.h: a
 * wakeup per wait cost microseconds in the kernel here).  At the writer's
 * measured rate a 10 ms period needs ~2 MB of the default 8 MiB ring.
 * Rejected: consuming on the main loop, whose symbolizing and printing
 * would let the ring fill; and one write per event (the 1 MiB buffered
 * log sustains 2-3 M waits/s here, make bench).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "array.h"
#include "evlog.h"
#include "linereader.h"
#include "recorder.h"

/* The drain period; also how soon a stop request is seen. */
#define RECORDER_POLL_MS 10
/*
 * The longest a wait stays in the writer's buffer: what a SIGKILL loses
 * (the checkpoints read the log from the disk).  10 writes a second.
 */
#define RECORDER_FLUSH_NS 100000000ull

struct recorder {
	pid_t pid;
	struct ring_buffer *ring;
	struct evlog_writer *log;
	pthread_t thread;
	bool running;
	atomic_bool stop;
	int err;		/* the first error of the log or the ring */
	uint64_t events;
	uint64_t lost;
	uint32_t last_tid;	/* the thread of the last event: seen */
	pthread_mutex_t lock;	/* threads, against recorder__threads_copy */
	struct recorder_thread *threads;
	size_t n_threads, cap_threads;
};

static void recorder__name(struct recorder *r, struct recorder_thread *t)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)r->pid,
		 t->tid);
	if (linereader__small(path, t->comm, sizeof(t->comm)) < 0)
		t->comm[0] = '\0';
	t->comm[strcspn(t->comm, "\n")] = '\0';
}

/* Notes a thread the first time it is seen (sorted insert). */
static void recorder__see(struct recorder *r, uint32_t tid)
{
	size_t lo = 0, hi = r->n_threads;

	if (tid == r->last_tid && r->n_threads)
		return;
	r->last_tid = tid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->threads[mid].tid == tid)
			return;
		if (r->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	pthread_mutex_lock(&r->lock);
	if (array__grow(&r->threads, &r->cap_threads, r->n_threads + 1,
			sizeof(*r->threads))) {
		pthread_mutex_unlock(&r->lock);
		return;		/* unnamed, not lost */
	}
	memmove(&r->threads[lo + 1], &r->threads[lo],
		(r->n_threads - lo) * sizeof(*r->threads));
	r->n_threads++;
	r->threads[lo].tid = tid;
	recorder__name(r, &r->threads[lo]);
	pthread_mutex_unlock(&r->lock);
}

/* The threads alive now: named while they are there to ask. */
static void recorder__see_all(struct recorder *r)
{
	char path[64];
	struct dirent *d;
	DIR *dh;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid);
	dh = opendir(path);
	if (!dh)
		return;
	while ((d = readdir(dh))) {
		char *end;
		unsigned long tid = strtoul(d->d_name, &end, 10);

		if (d->d_name[0] != '.' && !*end && tid && tid <= UINT32_MAX)
			recorder__see(r, (uint32_t)tid);
	}
	closedir(dh);
}

static int recorder__event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct sp_wait_event *e = data;
	int err;

	if (size < sizeof(*e))
		return 0;
	recorder__see(r, e->key.tid);
	r->events++;
	r->lost += e->lost;
	err = evlog__append(r->log, e);
	if (err && !r->err)
		r->err = err;
	return 0;
}


static void *recorder__run(void *arg)
{
	struct recorder *r = arg;
	uint64_t flushed = clock__monotonic_ns();

	while (!atomic_load(&r->stop)) {
		/* Woken early, or not: what waited unannounced is taken too. */
		int n = ring_buffer__poll(r->ring, RECORDER_POLL_MS);
		uint64_t now;

		if (n >= 0)
			n = ring_buffer__consume(r->ring);
		now = clock__monotonic_ns();
		if (now - flushed >= RECORDER_FLUSH_NS) {
			int err = evlog__flush(r->log);

			if (err && !r->err)
				r->err = err;
			flushed = now;
		}
		if (n < 0 && n != -EINTR) {
			if (!r->err)
				r->err = n;
			break;
		}
	}
	return NULL;
}

int recorder__start(const struct recorder_config *cfg, struct recorder **out)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		close(cfg->log_fd);
		return -ENOMEM;
	}
	r->pid = cfg->pid;
	pthread_mutex_init(&r->lock, NULL);
	recorder__see_all(r);
	err = evlog__writer_new(cfg->log_fd, &r->log);
	if (err) {
		close(cfg->log_fd);
		goto fail;
	}
	r->ring = ring_buffer__new(cfg->ring_fd, recorder__event, r, NULL);
	if (!r->ring) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&r->thread, NULL, recorder__run, r);
	if (err)
		goto fail;
	r->running = true;
	*out = r;
	return 0;
fail:
	recorder__free(r);
	return err;
}

int recorder__stop(struct recorder *r)
{
	int n;

	if (r->running) {
		atomic_store(&r->stop, true);
		pthread_join(r->thread, NULL);
		r->running = false;
	}
	n = ring_buffer__consume(r->ring);
	if (n < 0 && !r->err)
		r->err = n;
	return r->err;
}

int recorder__append(struct recorder *r, const struct sp_wait_event *e)
{
	if (!(e->flags & SP_EVENT_LOST_ONLY))
		r->events++;
	r->lost += e->lost;
	return evlog__append(r->log, e);
}

uint64_t recorder__events(const struct recorder *r)
{
	return r->events;
}

uint64_t recorder__lost(const struct recorder *r)
{
	return r->lost;
}

const struct recorder_thread *recorder__threads(const struct recorder *r,
						size_t *n)
{
	*n = r->n_threads;
	return r->threads;
}

int recorder__threads_copy(struct recorder *r, struct recorder_thread **out,
			   size_t *n)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	*n = r->n_threads;
	*out = malloc((r->n_threads + 1) * sizeof(**out));
	if (*out)
		memcpy(*out, r->threads, r->n_threads * sizeof(**out));
	else
		err = -ENOMEM;
	pthread_mutex_unlock(&r->lock);
	return err;
}

int recorder__finish(struct recorder *r, int *log_fd)
{
	int err = evlog__writer_free(r->log, log_fd);

	r->log = NULL;
	return r->err ? r->err : err;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	if (r->running) {
		atomic_store(&r->stop, true);
		pthread_join(r->thread, NULL);
	}
	ring_buffer__free(r->ring);
	evlog__writer_free(r->log, NULL);
	pthread_mutex_destroy(&r->lock);
	free(r->threads);
	free(r);
}
