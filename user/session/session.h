/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One run of syncprof: its state (struct session) and the stages main.c's
 * loop calls, each in the file of its job: startup.c (find, load, attach),
 * reports.c (read and report), follow.c (the processes and threads the
 * probes follow).
 */
#ifndef SYNCPROF_SESSION_H
#define SYNCPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "options.h"
#include "orderview.h"
#include "probes.h"

struct session {
	const struct options *opts;
	struct target *target;
	struct probes *probes;
	struct symbolizer *symbolizer;
	struct stacktab *stacks;	/* the stacks the probes read, by id */
	struct libcmodel *libc;	/* contended mode: the target's libc */
	struct skiplist *skip;	/* --skip */
	struct notices *notices;	/* what syncprof cannot see in it */
	struct snapshot *prev;	/* the last read: totals since attach */
	struct snapshot *pending; /* what changed since the last report */
	uint64_t read_ns;	/* when prev was read */
	struct snapshot *prev_blame;	/* --blame: the last read */
	struct lockorder *lock_order;	/* --lock-order, or NULL */
	struct orderview_names order_names;	/* its classes' names */
	struct live *live;	/* the live screen, or NULL */
	struct recording *recording;	/* --record, --chrome; or NULL */
	uint64_t next_window;	/* the first window of the next delta report */
	struct threadtable *threads;	/* --states: the kernel's table */
	struct threadstates *states;	/* --states: the accounting */
	bool group_threads;	/* --states: by name (the live screen's g) */
	FILE *out;
	FILE *states_csv;	/* --states-csv, or NULL */
	struct outfile *out_file, *states_file;	/* -o, --states-csv */
	uint64_t attach_ns;
	uint64_t calibration_ns;
	uint64_t calibration_site_ns[SP_SITE__COUNT];
	uint64_t last_ns;
	unsigned int sequence;
	/* Several processes (several --pid, --children); else NULL. */
	struct procset *procs;
	struct procspace *space;
	bool root_exited;	/* the first target's pidfd said so */
	bool notice_children;	/* the --children notice was given */
	struct probes_proc_event *naming;	/* events whose names wait */
	size_t n_naming, naming_cap;
};

/*
 * How often the probes are read between reports (the rows of exited
 * threads leave the kernel's map then) and the probes' thread is checked
 * without an event saying so.
 */
#define HOUSEKEEPING_S 1.0

/* startup.c */
void report_costs(struct session *s);
int session__start(struct session *s, char *library, size_t len,
		   int argc, char **argv);

/* reports.c */
uint64_t monotonic_ns(void);
int session__read_states(struct session *s, uint64_t *now_ns);
int session__now(struct session *s, uint64_t *now_ns);
int session__read(struct session *s);
int session__report(struct session *s, bool final);
int session__refresh(struct session *s);
int session__live_end(struct session *s);
void session__live_start(struct session *s);

/* follow.c */
uint64_t session__translate(void *ctx, pid_t pid, uint64_t addr);
const char *session__comm(struct session *s);
void session__rekey(struct session *s, struct snapshot *snap);
void session__notice_children(struct session *s);
void session__modules_changed(struct session *s);
void session__follow_threads(struct session *s);
void session__add_descendants(struct session *s, pid_t root);
void session__target_exited(struct session *s);
unsigned int session__take_events(struct session *s);
const char *session__others(struct session *s);
int check_pids(struct options *opts, pid_t first);

#endif
