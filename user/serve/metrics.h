/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's /metrics: the waits as Prometheus counters and a histogram,
 * one series per {process, class, type, object, callsite}, fed with the
 * change of every read of the probes, and written in the text exposition
 * format.  At most max_series series in all, the "other" ones included:
 * the top label sets by wait time have series of their own, and the
 * waits of the rest go to an "other" series ({process, class, type,
 * object="other", callsite="other"} while a tenth of the bound lasts,
 * then {process="other", class, type="other", ...}), and are counted.
 */
#ifndef SYNCPROF_METRICS_H
#define SYNCPROF_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncprof.h"

struct symbolizer_cache_stats;

/* The fewest series a bound allows: a class's "other" each, and one. */
#define METRICS_MIN_SERIES	3

struct metrics;

/* One row of a read's change, named. */
struct metrics_row {
	const char *process;	/* the program's name */
	const char *class;	/* "lock" or "event" (locktype__class) */
	const char *type;	/* mutex, condvar, ... */
	const char *object;	/* symbol, or a name for many objects */
	const char *callsite;	/* "function file:line", "function+0xoff" */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t failed;
	const uint64_t *hist;	/* SP_HIST_SLOTS log2 slots, or NULL */
};

/* What syncprof says about itself. */
struct metrics_health {
	const char *const *drop_causes;	/* n_drops names ... */
	const uint64_t *drops;		/* ... and their counts */
	size_t n_drops;
	size_t processes_followed;
	double cpu_seconds;		/* syncprof's own, user + system */
	uint64_t resident_bytes;
	const struct symbolizer_cache_stats *cache;	/* NULL: none said */
	/* Records of counted waits not kept, tables full: blame, caused. */
	uint64_t charges_lost[2];
	/* The kernel's tables at the loop's last read: rows, stacks. */
	uint64_t kernel_rows, kernel_stacks;
	/* The loop's CPU on the server's wants: reads, and profiles. */
	double loop_read_seconds, loop_profile_seconds;
	/* --duty below 100 (pct 0: none); see feed.h. */
	unsigned int duty_pct;
	double duty_window_seconds, duty_seconds;
	uint64_t duty_cut;
	/* The rows of exited threads kept; those of forgotten processes. */
	size_t exited_rows;
	size_t exited_rows_forgotten;
	uint64_t exited_rows_merged;	/* into "other" rows, by the bound */
	/* --blame's rows of exited threads kept; merged by the bound. */
	size_t blame_rows_kept;
	uint64_t blame_rows_merged;
	/* Of them, under their own keys, and their bound; folded by
	   program from there (see feed.h). */
	size_t blame_rows_own, blame_rows_own_max;
	uint64_t blame_rows_folded;
};

/* max_series below METRICS_MIN_SERIES is taken as that. */
int metrics__new(unsigned int max_series, struct metrics **out);
void metrics__free(struct metrics *m);
/*
 * Adds a row's change to its series (or to "other"): every counter only
 * grows, whatever happens to the rows it came from.  0 or -ENOMEM.
 */
int metrics__add(struct metrics *m, const struct metrics_row *row);
/* Series of waits held, "other" ones included: at most max_series. */
size_t metrics__series(const struct metrics *m);
/* The exposition: every series, then the health series. */
int metrics__write(const struct metrics *m, const struct metrics_health *h,
		   FILE *out);

#endif
