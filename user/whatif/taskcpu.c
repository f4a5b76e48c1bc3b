// SPDX-License-Identifier: GPL-2.0
/*
 * Threads' CPU time by schedstat (ns, unlike /proc/PID/stat's ticks),
 * kept per thread, and the machine's idle CPU time (/proc/stat): what
 * the process's threads could have had is what they used plus what no
 * one used, at most one CPU per thread and the CPUs it may run on.  A
 * saturated machine gives a process no more than it gets, unless its
 * threads sleep: a thread runnable a good part of a window got some rate
 * of CPU per runnable time, and the scheduler gives it that rate for as
 * long again as it slept (blocked on a lock, asleep in a server), so the
 * window's capacity is at least that (taskcpu__window).  Measured on the
 * test target beside busy loops: its 3 threads, blocked on the lock most
 * of the time, got 0.05 CPUs and more with shorter holds, past a cap of
 * what they used.
 *
 * Rejected, both measured against the shorter version run for real
 * beside other builds: each thread's own share of its runnable time
 * (run / (run + runqueue wait)), which read far below what a shorter
 * lock let the process use (a thread that mostly sleeps on a lock waits
 * long for a CPU when woken, yet gets more once it runs more); and the
 * fair share of its threads among the machine's runnable tasks
 * (procs_running), far above it (the scheduler shares between groups of
 * tasks, not between threads).
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
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "taskcpu.h"
#include "schedstat.h"

/* A thread runnable (running or waiting for a CPU) this share of a
   window or more gets its rate of CPU per runnable time as capacity. */
#define RUNNABLE_SHARE	0.1

/* The machine's ticks since boot, all CPUs. */
struct machine_ticks {
	uint64_t idle;		/* idle and I/O wait */
	uint64_t busy;		/* user, nice, system, interrupts */
	uint64_t steal;		/* taken by the host from a guest's CPUs */
};

struct taskcpu_thread {
	pid_t pid, tid;
	uint64_t run_begin, wait_begin;	/* at the window's begin */
	uint64_t run, wait;		/* summed over the windows */
	uint64_t last_run, last_wait;	/* in the last window */
	int seen;			/* read at the window's begin */
};

struct taskcpu {
	pid_t *pids;
	size_t n_pids;
	int cpus;			/* the most any of them may run on */
	long hz;			/* /proc/stat's ticks per second */
	struct machine_ticks begin;	/* at the window's begin */
	uint64_t idle;			/* idle ticks in the windows */
	uint64_t busy, steal;		/* busy and stolen ticks in them */
	uint64_t last_idle;		/* in the last window */
	/* When the window's readings were taken (the middle of each pass
	   over the threads), its length and the windows' sum: a reader
	   kept off its CPU between its own clock and the readings would
	   count time in which the threads' CPU was not read. */
	uint64_t begin_ns, last_ns, sum_ns;
	struct taskcpu_thread *threads;
	size_t n, cap;
};

int taskcpu__new(const pid_t *pids, size_t n, struct taskcpu **out)
{
	struct taskcpu *t = calloc(1, sizeof(*t));

	if (!t || !n || !(t->pids = calloc(n, sizeof(*pids)))) {
		free(t);
		return t ? -EINVAL : -ENOMEM;
	}
	memcpy(t->pids, pids, n * sizeof(*pids));
	t->n_pids = n;
	for (size_t i = 0; i < n; i++) {
		cpu_set_t set;
		int cpus = sched_getaffinity(pids[i], sizeof(set), &set) ? 0 :
			   CPU_COUNT(&set);

		if (cpus > t->cpus)
			t->cpus = cpus;
	}
	t->hz = sysconf(_SC_CLK_TCK);
	if (t->hz <= 0)
		t->hz = 100;
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
	free(t->pids);
	free(t);
}

static struct taskcpu_thread *thread_of(struct taskcpu *t, pid_t pid,
					pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->threads[i].tid == tid && t->threads[i].pid == pid)
			return &t->threads[i];
	if (array__grow(&t->threads, &t->cap, t->n + 1, sizeof(*t->threads)))
		return NULL;
	t->threads[t->n] = (struct taskcpu_thread){ .pid = pid, .tid = tid };
	return &t->threads[t->n++];
}

/* Reads one process's threads' schedstat. */
static int read_process(struct taskcpu *t, pid_t pid, bool begin)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		struct taskcpu_thread *th;
		struct schedstat st;
		pid_t tid = (pid_t)atoi(d->d_name);
		uint64_t run, wait;

		/* Exited meanwhile, or not a thread: skipped. */
		if (tid <= 0 || schedstat__read(pid, tid, &st))
			continue;
		run = st.run_ns;
		wait = st.wait_ns;
		th = thread_of(t, pid, tid);
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
			th->last_run = run - th->run_begin;
			th->last_wait = wait - th->wait_begin;
			th->wait += wait - th->wait_begin;
			th->seen = 0;
		}
	}
	closedir(dir);
	return 0;
}

/* Every process's; one that is gone is skipped while one is left. */
static int read_all(struct taskcpu *t, bool begin)
{
	int err = -ESRCH;

	for (size_t i = 0; i < t->n_pids; i++)
		if (!read_process(t, t->pids[i], begin))
			err = 0;
	return err;
}

static double share_of(const struct taskcpu *t, double active, double used,
		       uint64_t idle, uint64_t window_ns);

static struct machine_ticks machine_ticks(void)
{
	unsigned long long v[8] = { 0 };
	struct machine_ticks m = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int got;

	if (!f)
		return m;
	got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		     &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (got < 5)
		return m;
	m.idle = v[3] + v[4];
	m.busy = v[0] + v[1] + v[2] + v[5] + v[6];
	m.steal = got == 8 ? v[7] : 0;
	return m;
}

static uint64_t ticks_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

int taskcpu__begin(struct taskcpu *t)
{
	uint64_t before = clock__monotonic_ns();
	int err;

	for (size_t i = 0; i < t->n; i++)
		t->threads[i].seen = t->threads[i].last_run =
			t->threads[i].last_wait = 0;
	t->begin = machine_ticks();
	err = read_all(t, true);
	t->begin_ns = before + (clock__monotonic_ns() - before) / 2;
	return err;
}

int taskcpu__end(struct taskcpu *t)
{
	uint64_t before = clock__monotonic_ns(), at;
	struct machine_ticks now = machine_ticks();
	int err;

	t->last_idle = ticks_since(now.idle, t->begin.idle);
	t->idle += t->last_idle;
	t->busy += ticks_since(now.busy, t->begin.busy);
	t->steal += ticks_since(now.steal, t->begin.steal);
	err = read_all(t, false);
	at = before + (clock__monotonic_ns() - before) / 2;
	t->last_ns = at > t->begin_ns ? at - t->begin_ns : 0;
	t->sum_ns += t->last_ns;
	return err;
}

uint64_t taskcpu__last_ns(const struct taskcpu *t)
{
	return t->last_ns;
}

uint64_t taskcpu__sum_ns(const struct taskcpu *t)
{
	return t->sum_ns;
}

double taskcpu__stolen(const struct taskcpu *t)
{
	return t->busy + t->steal ? (double)t->steal /
				    (double)(t->busy + t->steal) : 0;
}

void taskcpu__window(const struct taskcpu *t, uint64_t window_ns,
		     double min_share, double *used, double *capacity,
		     double *most)
{
	double run = 0, active = 0, runnable = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct taskcpu_thread *th = &t->threads[i];
		double ran = (double)th->last_run, waited = (double)th->last_wait;

		run += ran;
		if (window_ns && ran >= min_share * (double)window_ns)
			active++;
		/* Runnable a good part of the window: it would get its
		   rate of CPU per runnable time for as long again as it
		   was blocked; else what it used. */
		if (window_ns && ran + waited >= RUNNABLE_SHARE *
						  (double)window_ns)
			runnable += ran / (ran + waited);
		else if (window_ns)
			runnable += ran / (double)window_ns;
	}
	*used = window_ns ? run / (double)window_ns : 0;
	*capacity = share_of(t, active, *used, t->last_idle, window_ns);
	if (runnable > *capacity)
		*capacity = fmin(fmin(runnable, fmax(active, 1)), t->cpus);
	*most = active < t->cpus ? active : t->cpus;
}

/* What active threads that used `used` CPUs could have had. */
static double share_of(const struct taskcpu *t, double active, double used,
		       uint64_t idle, uint64_t window_ns)
{
	double could = used + (window_ns ? (double)idle / (double)t->hz /
					   ((double)window_ns * 1e-9) : 0);

	if (could > active)
		could = active;
	return could > t->cpus ? t->cpus : could;
}

void taskcpu__usage(const struct taskcpu *t, uint64_t window_ns,
		    double min_share, double *used, double *capacity)
{
	double run = 0, active = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct taskcpu_thread *th = &t->threads[i];

		run += (double)th->run;
		if (window_ns && (double)th->run >= min_share * (double)window_ns)
			active++;
	}
	*used = window_ns ? run / (double)window_ns : 0;
	*capacity = share_of(t, active, *used, t->idle, window_ns);
}
