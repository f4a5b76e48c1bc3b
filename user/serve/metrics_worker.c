// SPDX-License-Identifier: GPL-2.0
/*
 * The counters of /metrics on a thread of their own.  The loop hands over
 * immutable feeds under a short lock (a list append); the worker adds
 * them and renders with no lock held, so neither a large render nor a
 * burst of scrapes holds the loop, and a loop busy with events holds a
 * scrape at most METRICS_WORKER_READ_WAIT_MS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "log.h"
#include "metrics_worker.h"

#define MS	1000000ull

struct worker_job {
	unsigned long id;
	uint64_t asked_ns;
	bool fresh;		/* no read wanted: the last one serves */
};

struct metrics_worker {
	struct metrics *metrics;	/* the thread's alone */
	struct feed_health health;	/* the last feed's, the thread's */
	int done_fd;
	pthread_t thread;
	bool started;

	pthread_mutex_t lock;	/* the rest */
	pthread_cond_t cond;
	bool stopping;
	struct feed **feeds;
	size_t n_feeds, feeds_cap;
	uint64_t fed_ns;	/* when the last feed came (0: none yet) */
	bool read_asked;	/* a read asked for, not yet fed */
	struct worker_job *jobs;
	size_t n_jobs, jobs_cap;
	struct metrics_page *done;
	size_t n_done, done_cap;
};

static void worker__health(struct metrics_worker *w, double *cpu,
			   uint64_t *rss)
{
	struct rusage ru;
	unsigned long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	*cpu = 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	*rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int worker__render(struct metrics_worker *w, char **data, size_t *len)
{
	static const char *const causes[] = {
		"map_full", "no_storage", "nested", "skipped", "ring",
	};
	const struct format_drops *d = &w->health.drops;
	const uint64_t drops[] = {
		d->map_full, d->no_storage, d->nested, d->skipped, d->ring,
	};
	struct metrics_health h = {
		.drop_causes = causes,
		.drops = drops,
		.n_drops = sizeof(drops) / sizeof(drops[0]),
		.processes_followed = w->health.followed,
		.cache = &w->health.cache,
		.loop_read_seconds = w->health.loop_read_ns * 1e-9,
		.loop_profile_seconds = w->health.loop_profile_ns * 1e-9,
		.exited_rows = w->health.exited_rows,
		.exited_rows_forgotten = w->health.exited_rows_forgotten,
		.exited_rows_merged = w->health.exited_rows_merged,
	};
	FILE *out = open_memstream(data, len);
	int err;

	if (!out)
		return -ENOMEM;
	worker__health(w, &h.cpu_seconds, &h.resident_bytes);
	err = metrics__write(w->metrics, &h, out);
	if (fclose(out) && !err)
		err = -ENOMEM;
	if (err) {
		free(*data);
		*data = NULL;
	}
	return err;
}

/* Adds the feeds taken from the list; the lock is not held. */
static void worker__add(struct metrics_worker *w, struct feed **feeds,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = feed__apply(feeds[i], w->metrics);

		if (err)
			pr_warn("--serve: /metrics lost a read's change: %s",
				strerror(-err));
		w->health = *feed__health(feeds[i]);
		feed__free(feeds[i]);
	}
	free(feeds);
}

/* A job that can be rendered now, or the time one can (lock held). */
static ssize_t worker__ready(struct metrics_worker *w, uint64_t now,
			     uint64_t *next)
{
	*next = UINT64_MAX;
	for (size_t i = 0; i < w->n_jobs; i++) {
		const struct worker_job *j = &w->jobs[i];
		uint64_t due = j->asked_ns + METRICS_WORKER_READ_WAIT_MS * MS;

		if (j->fresh || w->fed_ns >= j->asked_ns || due <= now)
			return (ssize_t)i;
		if (due < *next)
			*next = due;
	}
	return -1;
}

static void *worker__main(void *arg)
{
	struct metrics_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct metrics_page page = { 0 };
		uint64_t next;
		ssize_t at;

		if (w->n_feeds) {
			struct feed **feeds = w->feeds;
			size_t n = w->n_feeds;

			w->feeds = NULL;
			w->n_feeds = w->feeds_cap = 0;
			pthread_mutex_unlock(&w->lock);
			worker__add(w, feeds, n);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		at = worker__ready(w, clock__monotonic_ns(), &next);
		if (at < 0) {
			struct timespec ts = {
				.tv_sec = (time_t)(next / 1000000000ull),
				.tv_nsec = (long)(next % 1000000000ull),
			};

			if (next == UINT64_MAX)
				pthread_cond_wait(&w->cond, &w->lock);
			else
				pthread_cond_timedwait(&w->cond, &w->lock, &ts);
			continue;
		}
		page.id = w->jobs[at].id;
		w->jobs[at] = w->jobs[--w->n_jobs];
		pthread_mutex_unlock(&w->lock);
		page.err = worker__render(w, &page.data, &page.len);
		pthread_mutex_lock(&w->lock);
		/* Its room was made when it was queued. */
		w->done[w->n_done++] = page;
		pthread_mutex_unlock(&w->lock);
		{
			uint64_t one = 1;

			if (write(w->done_fd, &one, sizeof(one)) < 0)
				pr_debug("--serve: eventfd: %s", strerror(errno));
		}
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int metrics_worker__new(unsigned int max_series, int done_fd,
			struct metrics_worker **out)
{
	struct metrics_worker *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->done_fd = done_fd;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	err = metrics__new(max_series, &w->metrics);
	if (!err)
		err = -pthread_create(&w->thread, NULL, worker__main, w);
	if (err) {
		metrics_worker__free(w);
		return err;
	}
	w->started = true;
	*out = w;
	return 0;
}

void metrics_worker__free(struct metrics_worker *w)
{
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	for (size_t i = 0; i < w->n_feeds; i++)
		feed__free(w->feeds[i]);
	for (size_t i = 0; i < w->n_done; i++)
		free(w->done[i].data);
	free(w->feeds);
	free(w->jobs);
	free(w->done);
	metrics__free(w->metrics);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void metrics_worker__feed(struct metrics_worker *w, struct feed *feed)
{
	int err;

	pthread_mutex_lock(&w->lock);
	err = array__grow(&w->feeds, &w->feeds_cap, w->n_feeds + 1,
			  sizeof(*w->feeds));
	if (!err) {
		w->feeds[w->n_feeds++] = feed;
		w->fed_ns = clock__monotonic_ns();
		w->read_asked = false;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (err) {
		pr_warn("--serve: /metrics lost a read's change: %s",
			strerror(-err));
		feed__free(feed);
	}
}

int metrics_worker__want(struct metrics_worker *w, unsigned long id,
			 bool *read)
{
	uint64_t now = clock__monotonic_ns();
	bool fresh;
	int err;

	*read = false;
	pthread_mutex_lock(&w->lock);
	fresh = w->fed_ns && now - w->fed_ns < METRICS_WORKER_FRESH_MS * MS;
	/* Room for its page too: a render always finds its slot. */
	err = array__grow(&w->jobs, &w->jobs_cap, w->n_jobs + 1,
			  sizeof(*w->jobs));
	if (!err)
		err = array__grow(&w->done, &w->done_cap,
				  w->n_done + w->n_jobs + 1, sizeof(*w->done));
	if (!err) {
		w->jobs[w->n_jobs++] = (struct worker_job){
			.id = id, .asked_ns = now, .fresh = fresh,
		};
		*read = !fresh && !w->read_asked;
		w->read_asked |= *read;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

void metrics_worker__cancel(struct metrics_worker *w, unsigned long id)
{
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->n_jobs; i++)
		if (w->jobs[i].id == id)
			w->jobs[i--] = w->jobs[--w->n_jobs];
	pthread_mutex_unlock(&w->lock);
}

bool metrics_worker__take(struct metrics_worker *w, struct metrics_page *page)
{
	bool any;

	pthread_mutex_lock(&w->lock);
	any = w->n_done > 0;
	if (any)
		*page = w->done[--w->n_done];
	pthread_mutex_unlock(&w->lock);
	return any;
}
