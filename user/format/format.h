/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Report printers: QSP's table (with -g, each row's stacks under it),
 * CSV, one-line JSON; folded.c and pprof.c print the profiles.
 */
#ifndef SYNCPROF_FORMAT_H
#define SYNCPROF_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "procset.h"
#include "names.h"
#include "options.h"
#include "report.h"
#include "whyrows.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "threadstates.h"

struct whatif;

/* Events lost since attach, by cause. */
struct format_drops {
	uint64_t map_full;	/* new rows beyond the kernel's row table */
	uint64_t no_storage;	/* no per-thread state for a call or a wait */
	uint64_t nested;	/* full mode: calls nested more than 4 deep */
	uint64_t skipped;	/* program runs the kernel skipped */
	uint64_t ring;		/* --record: counted, left out of the
				   recording (its ring buffer was full) */
	/*
	 * No events lost, so not in the total: records of counted waits
	 * that a full table could not keep (JSON "charges_lost").
	 */
	uint64_t blame_full;	/* a wait's charge to the release that
				   ended it (--blame's table) */
	uint64_t caused_full;	/* a part of a wait charged to a hold (the
				   findings' table) */
};

uint64_t format__drops_total(const struct format_drops *d);
/*
 * What a report that lost events says, loudly, under its table and on
 * the live screen: how many, why, what to do; "" when none were lost.
 */
void format__drops_text(const struct format_drops *d, unsigned int map_size,
			char *buf, size_t len);


/* --lock-order: one lock of an edge of a cycle, named. */
struct format_order_lock {
	uint64_t object;
	const char *object_symbol;	/* NULL: no name (heap, stack) */
	uint64_t site;			/* the call that took it: return address */
	struct symbol_info site_info;
	uint64_t stack_id;		/* its stack; 0: none kept */
	uint32_t type;			/* enum sp_lock_type */
};

/* Held, then taken: the first time seen, and how often since. */
struct format_order_edge {
	struct format_order_lock held;
	struct format_order_lock acquired;
	uint64_t count;
	pid_t pid;
	pid_t tid;
};

/* A cycle: each edge holds the lock the edge before took. */
struct format_order_cycle {
	struct format_order_edge *edges;
	size_t n;
};

struct format_lock_order {
	struct format_order_cycle *cycles;
	size_t n_cycles;
	uint64_t pairs_dropped;		/* the kernel's map was full */
	uint64_t untracked;		/* taken beyond SP_HELD_MAX held */
};

/*
 * --duty: full mode's probes were on part of the time; the rows' sums
 * are estimates (scaled by all / on), their means and maxima measured.
 */
struct format_duty {
	unsigned int pct;
	uint64_t on_ns;		/* the windows sampled, since attach */
	uint64_t off_ns;
	uint64_t cut;		/* calls and holds cut by a switch off */
	uint64_t switch_ns;	/* the detaches and attaches, summed */
	uint64_t attached_ns;	/* the probes in place (the target's cost) */
	uint64_t switches;	/* detaches */
	uint64_t kept;		/* periods the probes stayed, gated */
};

struct format_meta {
	pid_t pid;
	const char *comm;
	const char *scope;	/* what the run follows (pprof's header);
				   NULL: pid and comm */
	/*
	 * Several processes (several --pid, --children): every process
	 * followed in the window (JSON "processes"); NULL: one, pid.
	 */
	const struct procset_entry *processes;
	size_t n_processes;
	const char *mode;
	double elapsed_s;	/* length of the reported window */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint64_t wall_ns;	/* end_ns by the wall clock (CLOCK_REALTIME,
				   ns since the epoch); 0: not known */
	uint64_t dropped;	/* events lost since attach */
	struct format_drops drops;	/* the same, by cause */
	unsigned int map_size;	/* --map-size */
	uint64_t calibration_ns; /* probe time taken out of each call */
	uint64_t calibration_emulated_ns;	/* the same, by kind of site */
	uint64_t calibration_stepped_ns;
	uint64_t unwind_stopped; /* contended: walks out of libc cut short */
	uint64_t abandoned;	/* full: calls left by longjmp, as failed */
	/*
	 * Stacks cut at a module whose table was read after the wait ended
	 * (a library dlopen'ed a moment before): finished late, or left cut
	 * (JSON "stacks_late"); both 0 when no stacks are kept.
	 */
	uint64_t late_finished;
	uint64_t late_cut;
	unsigned int sequence;	/* 1 for the first report */
	/* --states: the window's thread states (table section, JSON
	 * "threads"); NULL without. */
	const struct states_report *states;
	bool hist;		/* table: each row's histogram under it */
	bool hold;		/* --hold: the rows' hold times */
	/*
	 * --blame: the waits charged to releases, as rows whose call site is
	 * the release's (0: not seen) and whose tid is the releaser's; NULL
	 * when not asked.
	 */
	const struct report_rows *blame;
	const struct row_names *blame_names;
	/*
	 * The waits in progress when the report was made, as rows (count:
	 * the waits, wait_ns and max_ns: their time so far); NULL: none read.
	 */
	const struct report_rows *waiting;
	const struct row_names *waiting_names;
	/*
	 * --why: the window's charges, and the grouping the rows were
	 * built by (to find each row's); NULL without.
	 */
	const struct why *why;
	const struct report_settings *why_rows_by;
	/* --lock-order: the cycles found since attach; NULL without. */
	const struct format_lock_order *lock_order;
	/* --what-if: its predictions (whatifout.h); NULL without. */
	const struct whatif *what_if;
	/*
	 * What to fix first (user/findings/): the table's opening block,
	 * printed as it is, and JSON's "findings" list (borrowed); NULL:
	 * not judged (JSON null).
	 */
	const char *findings_text;
	json_t *findings_json;
	/* What syncprof cannot see in the target (JSON "notices"). */
	const char *const *notices;
	size_t n_notices;
	const struct format_duty *duty;	/* --duty below 100; NULL: exact */
};

/* How to print, and what the stack renderers read beyond the rows. */
struct format_config {
	enum output_format format;
	enum callsite_style callsite;	/* the table's Call site column */
	bool stacks;			/* table: each row's stacks under it */
	struct symbolizer *symbolizer;	/* names stack frames; not owned */
	const struct stacktab *stacktab; /* the run's stacks; NULL: none kept */
	/* Table: the terminal's width, which the columns narrow to as the
	   live screen's do; 0: no limit (a pipe, a file). */
	int width;
	/* Table: the columns the legend has explained (each said once a
	   run); NULL: every table says them. */
	unsigned int *explained;
};

/*
 * Prints one report.  names[i] belongs to rows->rows[i].  The stacks
 * (table with cfg->stacks, folded, pprof) need cfg->symbolizer.
 */
int format__report(FILE *out, const struct format_config *cfg,
		   const struct format_meta *meta,
		   const struct report_rows *rows,
		   const struct row_names *names);
/*
 * JSON: a row's "stacks", its distinct stacks largest wait first
 * (cfg->stacktab; null without one), each frame named through
 * cfg->symbolizer with the keys of "callsite" and "inline", an inlined
 * call a frame of its own.  The first failure stays in *err.
 */
json_t *format__json_stacks(const struct report_row *r,
			    const struct format_config *cfg, int *err);
/*
 * One report as JSON (what --format json prints on one line): every key
 * always there, null when it does not apply.  The caller json_decref()s
 * it; *err: 0 or the first failure.
 */
json_t *format__json_report(const struct format_config *cfg,
			    const struct format_meta *meta,
			    const struct report_rows *rows,
			    const struct row_names *names, int *err);
/* CSV's header line, once per output. */
void format__csv_header(FILE *out);
/*
 * A wall-clock time as ISO 8601 in local time, to the millisecond, with
 * its UTC offset: "2026-11-23T15:41:12.345+01:00"; "" for 0.
 */
void format__wall_text(uint64_t wall_ns, char *buf, size_t len);

#endif
