/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One run of syncprof: its state (struct session) and the stages main.c's
 * loop calls, each in the file of its job: startup.c (find, load, attach),
 * reports.c (read and report), follow.c (the processes and threads the
 * probes follow), serving.c (--serve).
 */
#ifndef SYNCPROF_SESSION_H
#define SYNCPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "options.h"
#include "probes.h"

struct format_drops;
struct procset_entry;
struct snapshot;
struct target;
struct why;

/* The probes' own time, taken out of each call (full mode). */
struct session_calibration {
	uint64_t ns;
	uint64_t site_ns[SP_SITE__COUNT];	/* by kind of site */
};

/*
 * A run: what every stage reads (the options, the target, the probes,
 * its names), and each stage's own state, opaque to the others.
 */
struct session {
	const struct options *opts;
	struct target *target;
	struct probes *probes;
	struct symbolizer *symbolizer;
	struct debugfetch *fetch;	/* debuginfod, or NULL */
	struct stacktab *stacks;	/* the stacks the probes read, by id */
	struct notices *notices;	/* what syncprof cannot see in it */
	struct recording *recording;	/* --record, --chrome; or NULL */
	struct live *live;		/* the live screen, or NULL */
	/* startup.c measures it; zero without calibration */
	struct session_calibration calibration;
	struct startup *startup;	/* startup.c: what the start made */
	struct follow *follow;		/* follow.c: the processes followed */
	struct reports *reports;	/* reports.c: windows and outputs */
	struct serving *serving;	/* serving.c: --serve, or NULL */
	/* --what-if (user/whatif/whatifrun.c): its results, or NULL */
	struct whatif *what_if;
	struct whatif_setup *what_if_setup;
	struct duty *duty;		/* --duty below 100, or NULL */
};

/*
 * How often the probes are read between reports (the rows of exited
 * threads leave the kernel's map then) and the probes' thread is checked
 * without an event saying so.
 */
#define HOUSEKEEPING_S 1.0

/* startup.c */
int session__start(struct session *s, char *library, size_t len,
		   int argc, char **argv);
void session__report_costs(struct session *s);
void session__startup_free(struct session *s);

/* reports.c */
int session__reports_open(struct session *s);
void session__reports_begin(struct session *s);
int session__reports_close(struct session *s);
void session__set_origin(struct session *s, uint64_t at_ns);
int session__open_window(struct session *s, uint64_t *origin_ns);
int session__states_start(struct session *s);
/* --lock-order: the reader of the probes' order pairs. */
int session__lock_order_start(struct session *s);
const struct snapshot *session__totals(const struct session *s);
int session__read_states(struct session *s, uint64_t *now_ns);
int session__now(struct session *s, uint64_t *now_ns);
int session__read(struct session *s);
/*
 * Reads the probes and leaves what they saw since the last read out of
 * every report (--what-if: the waits its own delays made).
 */
int session__read_apart(struct session *s);
/* When counting began and when the probes were last read. */
void session__read_span(const struct session *s, uint64_t *start_ns,
			uint64_t *read_ns);
void session__drops(struct session *s, struct format_drops *out);
/* A read between reports when one is due: 1 when it read, 0 when none
   was due, or -errno. */
int session__read_between(struct session *s);
/* --serve: every read's change kept from now on, until taken (NULL: none). */
void session__keep_changes(struct session *s);
struct snapshot *session__take_changes(struct session *s);
int session__report(struct session *s, bool final);
int session__refresh(struct session *s);
int session__live_end(struct session *s);
void session__live_start(struct session *s);

/* follow.c */
int session__follow_start(struct session *s, bool several);
void session__follow_free(struct session *s);
int session__check_pids(struct options *opts, pid_t first);
struct procspace *session__space(const struct session *s);
const struct procset_entry *session__processes(const struct session *s,
						size_t *n);
size_t session__alive(const struct session *s);
uint64_t session__translate(void *ctx, pid_t pid, uint64_t addr);
const char *session__comm(struct session *s);
/*
 * The first target's name read again (an exec the probes did not see,
 * before they were in or as it exited): the reports name it so.
 */
void session__rename(struct session *s);
/*
 * What the run follows, for a profile's header: "--all (every process
 * of the host)", "pids 12 34 and their children", "pid 12 (name)".
 */
void session__scope(struct session *s, char *buf, size_t len);
void session__rekey(struct session *s, struct snapshot *snap);
/* --blame's charges: objects by the waiter's process. */
/*
 * What a report reads beside the waits: --blame's and --why's charges
 * and, in contended mode, the waits each site caused, keyed as the rows
 * are; none kept on an error.
 */
int session__read_charges(struct session *s, struct snapshot **blame,
			  struct why **why, struct snapshot **caused);
void session__rekey_blame(struct session *s, struct snapshot *snap);
/* --why's charges: rows and roots' sites merged the same way. */
void session__rekey_why(struct session *s, struct why *w);
/* totals: the waits since attach, as last read (session__totals). */
void session__notice_children(struct session *s,
			      const struct snapshot *totals);
/* The --off-cpu notice's samples: the first (startup), one per
   housekeeping period, and its check (the last report: totals, the
   waits since attach, and waiting, those still in progress). */
void session__blocked_start(struct session *s);
void session__blocked_housekeep(struct session *s);
void session__notice_off_cpu(struct session *s,
			     const struct snapshot *totals,
			     const struct snapshot *waiting);
void session__modules_changed(struct session *s);
void session__follow_threads(struct session *s);
void session__add_descendants(struct session *s, pid_t root);
void session__sweep_processes(struct session *s);
void session__target_exited(struct session *s);
void session__root_gone(struct session *s);
unsigned int session__take_events(struct session *s);
const char *session__others(struct session *s);
/* Every process followed, one or several, as named now. */
const struct procset_entry *session__process_names(const struct session *s,
						     size_t *n);
/* --all: every process of the host, the first one the run's target. */
int session__all_processes(struct options *opts, struct target **target);

/* serving.c */
int session__serve_start(struct session *s);
void session__serve_free(struct session *s);
bool session__serving(const struct session *s);
int session__serve_fd(const struct session *s);
/* What the server wants: a read, profiles; handed over.  0 or -errno. */
int session__serve_dispatch(struct session *s);
/* The reads' change since the last, to the server; 0 when not serving. */
int session__serve_publish(struct session *s);

#endif
