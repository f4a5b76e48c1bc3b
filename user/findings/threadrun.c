// SPDX-License-Identifier: GPL-2.0
/*
 * Samples are sorted arrays of (pid, tid, run, runq); the next sample's
 * deltas are found by binary search in the last.  A thread not in the
 * last sample began since (or the first sample is being taken): its
 * whole run counts, over the part of the window since its start time.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "sortorder.h"
#include "threadrun.h"

struct run_sample {
	uint32_t pid, tid;
	uint64_t run_ns, runq_ns;
	uint64_t slices;		/* times it went on a CPU */
	uint64_t first_ns;	/* when first read (CLOCK_MONOTONIC) */
	uint64_t age_ns;	/* its age then (0: not known) */
	uint64_t last_ns;	/* when last read */
	bool seen;		/* read by the last poll */
};

struct threadrun {
	struct run_sample *latest;	/* every thread's last reading */
	size_t n_latest;
	struct run_sample *base;	/* the readings at the last sample */
	size_t n_base;
	uint64_t base_ns;		/* when that was (0: never) */
};

int threadrun__new(struct threadrun **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void threadrun__free(struct threadrun *tr)
{
	if (!tr)
		return;
	free(tr->latest);
	free(tr->base);
	free(tr);
}

static int sample_cmp(const void *pa, const void *pb)
{
	const struct run_sample *a = pa, *b = pb;

	return order__u64(a->pid, b->pid) ?: order__u64(a->tid, b->tid);
}

/* The thread's age in ns (0: not known), by its start time. */
static uint64_t thread_age(uint32_t pid, uint32_t tid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	struct timespec now;
	const char *p;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	/* Field 22, starttime: the 20th after the name's ')'. */
	for (int field = 0; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1 || hz <= 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &now))
		return 0;
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u +
			  (uint64_t)now.tv_nsec;
	uint64_t start_ns = (uint64_t)start * (1000000000u / (uint64_t)hz);

	return now_ns > start_ns ? now_ns - start_ns : 0;
}

/* Appends the threads of pid read now. */
static int read_pid(pid_t pid, struct run_sample **s, size_t *n, size_t *cap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;	/* exited: no threads */
	while (!err && (d = readdir(dir))) {
		unsigned long long run, runq, slices;
		char file[96];
		FILE *f;
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%d/schedstat",
			 (int)pid, tid);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu %llu", &run, &runq, &slices) == 3) {
			if (array__grow(s, cap, *n + 1, sizeof(**s)))
				err = -ENOMEM;
			else
				(*s)[(*n)++] = (struct run_sample){
					.pid = (uint32_t)pid,
					.tid = (uint32_t)tid,
					.run_ns = run, .runq_ns = runq,
					.slices = slices };
		}
		fclose(f);
	}
	closedir(dir);
	return err;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int threadrun__poll(struct threadrun *tr, const pid_t *pids, size_t n_pids)
{
	struct run_sample *s = NULL, *merged;
	size_t n = 0, cap = 0, k = 0, i = 0, j = 0;
	uint64_t now = mono_ns();
	int err = 0;

	for (size_t p = 0; !err && p < n_pids; p++)
		err = read_pid(pids[p], &s, &n, &cap);
	if (err) {
		free(s);
		return err;
	}
	if (n)
		qsort(s, n, sizeof(*s), sample_cmp);
	merged = calloc(n + tr->n_latest + 1, sizeof(*merged));
	if (!merged) {
		free(s);
		return -ENOMEM;
	}
	/* Merge: a thread read now updates its reading; one not read
	 * keeps its last (it exited since). */
	while (i < n || j < tr->n_latest) {
		int c = i == n ? 1 : j == tr->n_latest ? -1 :
			sample_cmp(&s[i], &tr->latest[j]);

		if (c < 0) {
			merged[k] = s[i++];
			merged[k].first_ns = now;
			merged[k].age_ns = thread_age(merged[k].pid,
						      merged[k].tid);
		} else if (c > 0) {
			merged[k] = tr->latest[j++];
			merged[k].seen = false;
		} else {
			merged[k] = tr->latest[j++];
			merged[k].run_ns = s[i].run_ns;
			merged[k].runq_ns = s[i].runq_ns;
			merged[k].slices = s[i++].slices;
		}
		if (c <= 0) {
			merged[k].last_ns = now;
			merged[k].seen = true;
		}
		k++;
	}
	free(s);
	free(tr->latest);
	tr->latest = merged;
	tr->n_latest = k;
	return 0;
}

int threadrun__sample(struct threadrun *tr, const pid_t *pids, size_t n_pids,
		      uint64_t window_ns, struct findings_thread **out,
		      size_t *n_out, size_t *alive)
{
	struct findings_thread *t;
	struct run_sample *base;
	uint64_t now = mono_ns();
	size_t k = 0;
	int err = threadrun__poll(tr, pids, n_pids);

	*out = NULL;
	*n_out = 0;
	*alive = 0;
	if (err)
		return err;
	t = calloc(tr->n_latest + 1, sizeof(*t));
	base = calloc(tr->n_latest + 1, sizeof(*base));
	if (!t || !base) {
		free(t);
		free(base);
		return -ENOMEM;
	}
	for (size_t i = 0; i < tr->n_latest; i++) {
		const struct run_sample *cur = &tr->latest[i];
		const struct run_sample *prev = tr->base ?
			bsearch(cur, tr->base, tr->n_base, sizeof(*cur),
				sample_cmp) : NULL;
		/* It lived from the last sample (or its birth) to its last
		 * reading. */
		uint64_t from = prev ? tr->base_ns :
				cur->first_ns > cur->age_ns ?
				cur->first_ns - cur->age_ns : 0;
		uint64_t to = cur->seen ? now : cur->last_ns;
		uint64_t span = to > from ? to - from : 0;

		if (!cur->seen && prev && cur->last_ns <= tr->base_ns)
			continue;	/* exited before the window */
		if (span > window_ns || !span)
			span = window_ns;
		t[k++] = (struct findings_thread){
			.pid = cur->pid, .tid = cur->tid,
			.run_ns = cur->run_ns - (prev && prev->run_ns <=
						 cur->run_ns ? prev->run_ns : 0),
			.runq_ns = cur->runq_ns - (prev && prev->runq_ns <=
						   cur->runq_ns ? prev->runq_ns : 0),
			.slices = cur->slices - (prev && prev->slices <=
						 cur->slices ? prev->slices : 0),
			.span_ns = span,
			.busy = 1.0,
		};
		*alive += cur->seen;
	}
	/* The next window starts here; the threads gone leave. */
	size_t nb = 0;

	for (size_t i = 0; i < tr->n_latest; i++)
		if (tr->latest[i].seen)
			base[nb++] = tr->latest[i];
	free(tr->base);
	tr->base = base;
	tr->n_base = nb;
	tr->base_ns = now;
	memcpy(tr->latest, base, nb * sizeof(*base));
	tr->n_latest = nb;
	*out = t;
	*n_out = k;
	return 0;
}
