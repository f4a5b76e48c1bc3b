/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's experiment on a running process: the BPF programs of
 * bpf/experiment/whatif.bpf.c attached to it, and the windows run on one
 * lock at a time (its holds timed, then lengthened or not, window by
 * window, with the progress counted in each).
 */
#ifndef SYNCPROF_EXPERIMENT_H
#define SYNCPROF_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "wakecurve.h"
#include "whatifmodel.h"
#include "whatifplan.h"

struct experiment_config {
	/* The processes: the lock's holders and the progress may be in any
	   (--children, several --pid); the delay is at the lock's address
	   in each, so a lock in memory they share mapped at one address */
	const pid_t *pids;
	size_t n_pids;
	const char *libc_path;		/* the unlock and lock functions */
	/* The program's own file: PostgreSQL's lightweight locks, when it
	   has them; NULL: none */
	const char *program_path;
	/* --progress: its file and file offset; NULL: lock acquisitions */
	const char *progress_path;
	uint64_t progress_offset;
	int stop_fds[2];		/* readable: end now (-1: none) */
};

struct experiment_result {
	/* Mean hold, hold phase, and its part on a CPU: the probes' part
	   (probe_ns, an empty critical section's) taken off both */
	uint64_t hold_ns;
	uint64_t hold_cpu_ns;
	uint64_t probe_ns;
	double holds_per_s;
	double rate;			/* progress/s, hold phase */
	uint64_t holders;		/* threads that held it then */
	/* Whether those reach a thread that made progress then, by
	   wakeups (wakereach.c); the threads and wakeups seen */
	enum whatif_reach reach;
	uint64_t progress_threads;
	uint64_t wakes;
	/* The lock's handoffs and its waiters' wake-ups, hold phase */
	struct wakecurve wake;
	uint64_t holds;			/* holds timed then */
	struct whatifplan plan;		/* the windows and the budget */
	struct whatif_window windows[WHATIFPLAN_WINDOWS_MAX];
	size_t n_windows;
	struct whatif_cpu cpu;		/* the holds' CPU */
	double used, capacity;		/* CPUs, reference windows in all */
	double stolen;			/* the host's share, in them */
	double rate_delayed;		/* progress/s, delayed windows */
	double rate_after;		/* the last window, no delay */
	uint64_t injected_ns;		/* delay injected in all */
	uint64_t injected;		/* releases delayed */
	uint64_t over_budget;		/* releases not delayed: budget spent */
	uint64_t elapsed_ns;		/* the whole experiment */
};

struct experiment;

/* Loads and attaches the unlock and progress probes; no delay yet. */
int experiment__open(const struct experiment_config *cfg,
		     struct experiment **out);
/* Detaches everything (the target runs as before); NULL is fine. */
void experiment__free(struct experiment *e);
/*
 * Runs one lock's experiment, its windows within time_max_s (0: the
 * plan's own limit): -ENODATA when it was not held in the hold phase or
 * nothing progressed, -ENOSPC when its windows would need more delay
 * than the largest budget (out->plan says how much; said on stderr),
 * -ETIME when even the fewest windows would take longer than time_max_s
 * (out->plan: how long), -EINTR when a stop fd fired.
 */
int experiment__run(struct experiment *e, uint64_t object,
		    double time_max_s, struct experiment_result *out);

#endif
