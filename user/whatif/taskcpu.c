// SPDX-License-Identifier: GPL-2.0
/*
 * Threads' CPU time by schedstat (ns, unlike /proc/PID/stat's ticks),
 * kept per thread, and the machine's runnable tasks (/proc/stat's
 * procs_running) at each window's ends: what the process's threads could
 * have had is the CPUs' fair share of its threads among the others that
 * wanted one.  Rejected: each thread's own share of its runnable time
 * (run / (run + runqueue wait)): a thread that mostly sleeps on a lock
 * waits long for a CPU when woken on a busy machine, yet gets more of
 * one once it runs more (the scheduler's credit for its sleep), so that
 * share read far below what a shorter lock let the process use.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "taskcpu.h"

struct taskcpu_thread {
	pid_t tid;
	uint64_t run_begin, wait_begin;	/* at the window's begin */
	uint64_t run, wait;		/* summed over the windows */
	int seen;			/* read at the window's begin */
};

struct taskcpu {
	pid_t pid;
	int cpus;
	double running;			/* procs_running, summed */
	double running_sq;		/* and its squares */
	size_t samples;
	struct taskcpu_thread *threads;
	size_t n, cap;
};

int taskcpu__new(pid_t pid, struct taskcpu **out)
{
	struct taskcpu *t = calloc(1, sizeof(*t));
	cpu_set_t set;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->cpus = sched_getaffinity(pid, sizeof(set), &set) ? 0 : CPU_COUNT(&set);
	if (t->cpus <= 0)
		t->cpus = 1;
	*out = t;
	return 0;
}

void taskcpu__free(struct taskcpu *t)
{
	if (!t)
		return;
	free(t->threads);
	free(t);
}

static struct taskcpu_thread *thread_of(struct taskcpu *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	if (array__grow(&t->threads, &t->cap, t->n + 1, sizeof(*t->threads)))
		return NULL;
	t->threads[t->n] = (struct taskcpu_thread){ .tid = tid };
	return &t->threads[t->n++];
}

/* Calls each thread's schedstat into fn. */
static int read_all(struct taskcpu *t, bool begin)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		unsigned long long run, wait;
		struct taskcpu_thread *th;
		char file[128];
		pid_t tid = (pid_t)atoi(d->d_name);
		FILE *f;
		int got;

		if (tid <= 0)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%d/schedstat",
			 (int)t->pid, (int)tid);
		f = fopen(file, "r");
		if (!f)
			continue;	/* exited meanwhile */
		got = fscanf(f, "%llu %llu", &run, &wait);
		fclose(f);
		if (got != 2)
			continue;
		th = thread_of(t, tid);
		if (!th) {
			closedir(dir);
			return -ENOMEM;
		}
		if (begin) {
			th->run_begin = run;
			th->wait_begin = wait;
			th->seen = 1;
		} else if (th->seen) {
			th->run += run - th->run_begin;
			th->wait += wait - th->wait_begin;
			th->seen = 0;
		}
	}
	closedir(dir);
	return 0;
}

/* The machine's tasks running or runnable now, this reader included. */
static void sample_running(struct taskcpu *t)
{
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "procs_running ", 14)) {
			double v = atof(line + 14);

			t->running += v;
			t->running_sq += v * v;
			t->samples++;
			break;
		}
	fclose(f);
}

int taskcpu__begin(struct taskcpu *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->threads[i].seen = 0;
	sample_running(t);
	return read_all(t, true);
}

int taskcpu__end(struct taskcpu *t)
{
	sample_running(t);
	return read_all(t, false);
}

/* The fair share of active threads beside `others`, within bounds. */
static double share_of(const struct taskcpu *t, double active, double others)
{
	double share;

	if (others < 0)
		others = 0;
	share = active ? t->cpus * active / (active + others) : 0;
	if (share > active)
		share = active;
	return share > t->cpus ? t->cpus : share;
}

void taskcpu__usage(const struct taskcpu *t, uint64_t window_ns,
		    double min_share, double *used, double capacity[3])
{
	double run = 0, active = 0, others, spread = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct taskcpu_thread *th = &t->threads[i];

		run += (double)th->run;
		if (window_ns && (double)th->run >= min_share * (double)window_ns)
			active++;
	}
	*used = window_ns ? run / (double)window_ns : 0;
	/* The others: the runnable tasks less this reader and the
	   process's own running threads. */
	others = t->samples ? t->running / (double)t->samples - 1 - *used : 0;
	/* The samples' spread, as a 95% interval of their mean. */
	if (t->samples > 1) {
		double n = (double)t->samples, m = t->running / n;
		double var = (t->running_sq - n * m * m) / (n - 1);

		spread = var > 0 ? 2 * sqrt(var / n) : 0;
	}
	capacity[0] = share_of(t, active, others);
	capacity[1] = share_of(t, active, others + spread);
	capacity[2] = share_of(t, active, others - spread);
}
