/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the loop that reads the probes hands the server after a read: the
 * read's change, its rows named (process, class, type, object, callsite)
 * into strings of their own, and syncprof's health then.  Made on the loop
 * (the symbolizer is the loop's), immutable once made, applied to the
 * counters of /metrics by the server's worker: nothing in it points back
 * into the loop's state.
 */
#ifndef SYNCPROF_FEED_H
#define SYNCPROF_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "metrics.h"
#include "report.h"
#include "snapshot.h"
#include "symbolizer.h"

struct procset_entry;
struct feed;

/* The rows' grouping for /metrics and the profiles: per process and object. */
extern const struct report_settings feed_rows_by;

/* syncprof's own figures at a read. */
struct feed_health {
	struct format_drops drops;
	size_t followed;	/* processes followed now */
	struct symbolizer_cache_stats cache;	/* the loop's, as read */
	/* The loop's CPU time on the server's wants so far, in ns: */
	uint64_t loop_read_ns;		/* reads a scrape or a profile asked */
	uint64_t loop_profile_ns;	/* profiles' copies and names */
	/* --duty below 100 (pct 0: none): the windows the calls are
	   counted in, against the time since the probes went live. */
	unsigned int duty_pct;
	uint64_t duty_window_ns, duty_ns, duty_cut;
	uint64_t kernel_rows;		/* the stats map's, at the last read */
	uint64_t kernel_stacks;		/* the stacks map's, at the last read */
	/* Rows of exited threads kept (fold.h); of them, those of
	   processes no longer named (process 0). */
	size_t exited_rows;
	size_t exited_rows_forgotten;
	uint64_t exited_rows_merged;	/* into "other" rows, by the bound */
	/* --blame's rows of exited threads kept out of its kernel table
	   (probes__blame_kept); merged into "other" rows by the bound. */
	size_t blame_rows_kept;
	uint64_t blame_rows_merged;
	/* Of them, those under their own keys (the newest exited's) and
	   their bound; the oldest own rows folded by program. */
	size_t blame_rows_own, blame_rows_own_max;
	uint64_t blame_rows_folded;
};

/*
 * delta (NULL: no change) named as metricnames names a series' labels
 * (coalesce: a program's objects of one kind share a name; --no-coalesce:
 * not); 0 or -errno.
 */
int feed__new(struct symbolizer *sym, const struct snapshot *delta,
	      const struct procset_entry *procs, size_t n_procs,
	      bool coalesce, const struct feed_health *health,
	      struct feed **out);
void feed__free(struct feed *f);
/* Adds the change to m's counters; 0 or -ENOMEM. */
int feed__apply(const struct feed *f, struct metrics *m);
const struct feed_health *feed__health(const struct feed *f);

#endif
