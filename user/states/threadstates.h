/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thread-state accounting (--states): from reads of the kernel's thread
 * table to the time each thread, or each thread name, spent running,
 * runnable, in lock waits and asleep over a report window.  No BPF and no
 * I/O: the reads come in as samples.
 */
#ifndef SYNCPROF_THREADSTATES_H
#define SYNCPROF_THREADSTATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncprof.h"

/* One thread as the kernel's table held it (bpf/measure/states.bpf.c). */
struct thread_sample {
	uint32_t tid;
	struct sp_thread t;
};

/* The states of a report. */
enum states_kind {
	STATES_RUNNING = 0,
	STATES_RUNNABLE,	/* waiting for a CPU */
	STATES_LOCK,		/* blocked in a wait on a known lock type */
	STATES_SLEEP,		/* blocked otherwise (futex waits of no
				   known lock included) */
	STATES_STOLEN,		/* on a CPU the hypervisor gave to another
				   guest meanwhile (steal time) */
	STATES__COUNT,
};

#define STATES_COMM_LEN	16	/* the kernel's TASK_COMM_LEN */
#define STATES_NO_TID	((int64_t)-1)

/* One thread, or one name's threads with --group-threads. */
struct states_row {
	int64_t tid;		/* STATES_NO_TID for a group */
	char comm[STATES_COMM_LEN + 1];	/* as the kernel has it, unsanitized */
	unsigned int threads;	/* threads in the row: 1, or the group's */
	uint64_t ns[STATES__COUNT];
	/* The lock waits by type: STATES_LOCK is the sum of every type but
	 * SP_TYPE_FUTEX, which is part of STATES_SLEEP. */
	uint64_t type_ns[SP_TYPE__COUNT];
	uint64_t alive_ns;	/* the part of the window it lived: sum of ns */
	uint64_t born_ns;	/* inside the window: when it started; else 0 */
	uint64_t exit_ns;	/* inside the window: when it exited; else 0 */
	int state;		/* at the window's end (enum sp_thread_state);
				   -1 for a group */
};

/* The thread states of one report window. */
struct states_report {
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	bool grouped;
	struct states_row *rows;	/* by TID, or by name when grouped */
	size_t count;
	uint64_t sched_missed;	/* scheduler events missed since attach
				   (any process's); set by the caller */
};

/* Where a window starts. */
enum states_span {
	STATES_SINCE_MARK = 0,	/* the last threadstates__mark */
	STATES_SINCE_ORIGIN,	/* the first read, or the last reset */
};

struct threadstates;

/*
 * keep_totals: STATES_SINCE_ORIGIN windows will be asked for (--cumulative,
 * the live screen), so exited threads are kept until a reset; without,
 * a thread is forgotten once its exit is behind the mark.
 */
int threadstates__new(bool keep_totals, struct threadstates **out);
void threadstates__free(struct threadstates *ts);
/*
 * Takes one read of the table, standing for instant now_ns: each alive
 * thread's current state is extended to now_ns.  Threads missing from it
 * keep their state; a TID whose sample has another birth time is a new
 * thread (the old one's end was not seen: it ends at the previous read).
 * The first read is the origin and the first mark.
 */
int threadstates__update(struct threadstates *ts,
			 const struct thread_sample *samples, size_t n,
			 uint64_t now_ns);
/* The latest read's instant (0 before the first). */
uint64_t threadstates__now(const struct threadstates *ts);
/*
 * The window from the span's start to the latest read: every thread that
 * lived in it, or every name (group).  Each row's states add up to its
 * alive_ns exactly; the few microseconds a read of the table takes are
 * settled on the thread's current state.  Free with threadstates__free_report.
 */
int threadstates__report(const struct threadstates *ts, enum states_span span,
			 bool group, struct states_report *out);
void threadstates__free_report(struct states_report *rep);
/* The next STATES_SINCE_MARK window starts at the latest read. */
void threadstates__mark(struct threadstates *ts);
/* STATES_SINCE_ORIGIN windows start at the latest read (and so does the mark). */
void threadstates__reset(struct threadstates *ts);

/* "running", "runnable", "lock", "sleep", "exited"; NULL for none. */
const char *threadstates__state_name(int state);
/* The report's state a kernel state counts as (STATES__COUNT: none). */
enum states_kind threadstates__kind(int state, uint32_t lock_type);
const char *threadstates__kind_name(enum states_kind kind);

#endif
