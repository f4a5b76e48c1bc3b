/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From snapshot entries to the rows of one report: group (coalesce by
 * call site, split by thread), sort with QSP's tie-breaks, keep the top N.
 * The lock rows come first, the event rows after (locktype.h), each
 * sorted by the key: --top keeps the worst locks before any event.
 */
#ifndef SYNCPROF_REPORT_H
#define SYNCPROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "snapshot.h"

struct stacktab;

#define REPORT_NO_TID ((int64_t)-1)

/* One distinct stack of a row: the waits that came through it. */
struct report_stack {
	uint64_t stack_id;	/* see stacktab.h */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t max_ns;
	uint64_t failed;
};

struct report_row {
	uint32_t type;		/* enum sp_lock_type */
	uint64_t object;	/* lowest object address of the row */
	uint32_t n_objects;
	uint64_t callsite;
	int64_t tid;		/* REPORT_NO_TID unless split by thread */
	int64_t pid;		/* REPORT_NO_TID unless split by process
				   (--per-process; --per-thread too) */
	int64_t owner_tid;	/* split by thread: the holder it waited
				   for, REPORT_NO_TID if not known */
	/* The waits of its entries, added up (waitstats.h). */
	union {
		struct wait_stats stats;
		struct { WAIT_STATS_FIELDS };
	};
	/* The waits weighed by their threads (settings' weigh; without
	 * one: wait_ns): what --sort total orders by first. */
	double impact_ns;
	/* The row's distinct stacks, largest wait first (none kept: 0). */
	struct report_stack *stacks;
	size_t n_stacks;
};

/* Which classes of rows a report keeps. */
enum report_classes {
	REPORT_CLASSES_ALL = 0,
	REPORT_CLASSES_LOCKS,	/* lock rows only */
	REPORT_CLASSES_EVENTS,	/* event rows only */
	REPORT_CLASSES__COUNT,
};

struct report_settings {
	bool coalesce;
	bool per_thread;
	bool per_process;	/* rows of different processes apart */
	enum sort_key sort;
	unsigned int top;	/* 0 = all */
	enum report_classes classes;
	/* Stack ids merged under their aliases (stacktab.h), or NULL. */
	const struct stacktab *stacks;
	/*
	 * A thread's weight (0..1) in the rows' impact, or NULL (weight 1):
	 * the findings' busy share (user/findings/findings.h); tid 0 (the
	 * rows of exited threads), the weight of object's.
	 */
	double (*weigh)(const void *ctx, uint32_t pid, uint32_t tid,
			uint64_t object);
	const void *weigh_ctx;
};

struct report_rows {
	struct report_row *rows;
	size_t count;		/* rows kept */
	size_t total;		/* rows before --top */
};

int report__build(const struct snapshot_entry *entries, size_t n,
		  const struct report_settings *settings,
		  struct report_rows *out);
void report__free(struct report_rows *rows);
/* Row order for a sort key, lock rows first: <0 if a goes first. */
int report__row_cmp(const struct report_row *a, const struct report_row *b,
		    enum sort_key sort);
/*
 * The wait of the row's counted waits, failed ones left out: Average is
 * this over count, undefined (shown as '-', JSON null) when count is 0.
 */
uint64_t report__counted_ns(const struct report_row *r);
/*
 * The first event row of the rows kept, when every row after it is one
 * too; rows->count when none is, or the rows are not in class order.
 */
size_t report__first_event(const struct report_rows *rows);
/* "all", "locks" or "events". */
const char *report__classes_name(enum report_classes classes);

#endif
