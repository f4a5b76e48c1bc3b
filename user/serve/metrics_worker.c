// SPDX-License-Identifier: GPL-2.0
/*
 * The counters of /metrics on a thread of their own.  The loop hands over
 * immutable feeds under a short lock (a list append); the worker adds
 * them and renders with no lock held, so neither a large render nor a
 * burst of scrapes holds the loop, and a loop busy with events holds a
 * scrape at most METRICS_WORKER_READ_WAIT_MS.
 */
#include <errno.h>
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
#include "worker.h"

#define MS	1000000ull

struct worker_job {
	unsigned long id;
	uint64_t asked_ns;
	bool fresh;		/* no read wanted: the last one serves */
};

struct metrics_worker {
	struct metrics *metrics;	/* the thread's alone */
	struct feed_health health;	/* the last feed's, the thread's */
	struct worker *thread;
	struct outbox *outbox;

	/* Under the worker's lock: */
	struct feed **feeds;
	size_t n_feeds, feeds_cap;
	uint64_t fed_ns;	/* when the last feed came (0: none yet) */
	bool read_asked;	/* a read asked for, not yet fed */
	struct worker_job *jobs;
	size_t n_jobs, jobs_cap;
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
		.duty_pct = w->health.duty_pct,
		.duty_window_seconds = w->health.duty_window_ns * 1e-9,
		.duty_seconds = w->health.duty_ns * 1e-9,
		.duty_cut = w->health.duty_cut,
		.charges_lost = { d->blame_full, d->caused_full },
		.kernel_rows = w->health.kernel_rows,
		.kernel_stacks = w->health.kernel_stacks,
		.exited_rows = w->health.exited_rows,
		.exited_rows_forgotten = w->health.exited_rows_forgotten,
		.exited_rows_merged = w->health.exited_rows_merged,
		.blame_rows_kept = w->health.blame_rows_kept,
		.blame_rows_merged = w->health.blame_rows_merged,
		.blame_rows_own = w->health.blame_rows_own,
		.blame_rows_own_max = w->health.blame_rows_own_max,
		.blame_rows_folded = w->health.blame_rows_folded,
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

static void worker__step(struct worker *thread, void *arg)
{
	struct metrics_worker *w = arg;
	struct outbox_page page = { 0 };
	uint64_t next;
	ssize_t at;

	if (w->n_feeds) {
		struct feed **feeds = w->feeds;
		size_t n = w->n_feeds;

		w->feeds = NULL;
		w->n_feeds = w->feeds_cap = 0;
		worker__unlock(thread);
		worker__add(w, feeds, n);
		worker__lock(thread);
		return;
	}
	at = worker__ready(w, clock__monotonic_ns(), &next);
	if (at < 0) {
		worker__wait(thread, next == UINT64_MAX ? WORKER_FOREVER : next);
		return;
	}
	page.id = w->jobs[at].id;
	w->jobs[at] = w->jobs[--w->n_jobs];
	worker__unlock(thread);
	page.err = worker__render(w, &page.data, &page.len);
	outbox__put(w->outbox, page);
	worker__lock(thread);
}

int metrics_worker__new(unsigned int max_series, int done_fd,
			struct metrics_worker **out)
{
	struct metrics_worker *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	err = metrics__new(max_series, &w->metrics);
	if (!err)
		err = outbox__new(done_fd, &w->outbox);
	if (!err)
		err = worker__start(METRICS_WORKER_NAME, worker__step, w,
				    &w->thread);
	if (err) {
		metrics_worker__free(w);
		return err;
	}
	*out = w;
	return 0;
}

void metrics_worker__free(struct metrics_worker *w)
{
	if (!w)
		return;
	worker__stop(w->thread);
	for (size_t i = 0; i < w->n_feeds; i++)
		feed__free(w->feeds[i]);
	free(w->feeds);
	free(w->jobs);
	outbox__free(w->outbox);
	metrics__free(w->metrics);
	free(w);
}

void metrics_worker__feed(struct metrics_worker *w, struct feed *feed)
{
	int err;

	worker__lock(w->thread);
	err = array__grow(&w->feeds, &w->feeds_cap, w->n_feeds + 1,
			  sizeof(*w->feeds));
	if (!err) {
		w->feeds[w->n_feeds++] = feed;
		w->fed_ns = clock__monotonic_ns();
		w->read_asked = false;
		worker__wake(w->thread);
	}
	worker__unlock(w->thread);
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
	/* Room for its page first: a render always finds its slot. */
	int err = outbox__reserve(w->outbox);
	bool fresh;

	*read = false;
	if (err)
		return err;
	worker__lock(w->thread);
	fresh = w->fed_ns && now - w->fed_ns < METRICS_WORKER_FRESH_MS * MS;
	err = array__grow(&w->jobs, &w->jobs_cap, w->n_jobs + 1,
			  sizeof(*w->jobs));
	if (!err) {
		w->jobs[w->n_jobs++] = (struct worker_job){
			.id = id, .asked_ns = now, .fresh = fresh,
		};
		*read = !fresh && !w->read_asked;
		w->read_asked |= *read;
		worker__wake(w->thread);
	}
	worker__unlock(w->thread);
	if (err)
		outbox__unreserve(w->outbox);
	return err;
}

void metrics_worker__cancel(struct metrics_worker *w, unsigned long id)
{
	size_t dropped = 0;

	worker__lock(w->thread);
	for (size_t i = 0; i < w->n_jobs; i++)
		if (w->jobs[i].id == id) {
			w->jobs[i--] = w->jobs[--w->n_jobs];
			dropped++;
		}
	worker__unlock(w->thread);
	while (dropped--)
		outbox__unreserve(w->outbox);
}

bool metrics_worker__take(struct metrics_worker *w, struct outbox_page *page)
{
	return outbox__take(w->outbox, page);
}
