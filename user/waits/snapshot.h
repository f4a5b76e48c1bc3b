/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snapshot: the stats map read at one instant, CPUs merged, sorted by
 * key; and the difference between two of them.
 */
#ifndef SYNCPROF_SNAPSHOT_H
#define SYNCPROF_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "syncprof.h"
#include "waitstats.h"

struct snapshot_entry {
	struct sp_key key;
	union {
		struct wait_stats stats;
		struct { WAIT_STATS_FIELDS };
	};
};

struct snapshot;

int snapshot__new(struct snapshot **out);
void snapshot__free(struct snapshot *snap);
/*
 * Adds one map entry: ncpus per-CPU values merged.  window_max_ns keeps
 * only the CPUs whose current or previous window is `window`.
 */
int snapshot__add(struct snapshot *snap, const struct sp_key *key,
		  const struct sp_value *per_cpu, int ncpus, uint64_t window);
/* Adds a row's histogram (kept in a map of its own) to the row's entry. */
int snapshot__add_hist(struct snapshot *snap, const struct sp_key *key,
		       const struct sp_hist *hist);
/* Adds a row's holds (--hold: a map of sp_values of their own). */
int snapshot__add_hold(struct snapshot *snap, const struct sp_key *key,
		       const struct sp_value *per_cpu, int ncpus,
		       uint64_t window);
/*
 * Records that the previous snapshot's row `from` is counted under `to`
 * from this one on (an exited thread's row, folded: see fold.c); the
 * delta against it then counts the row once.
 */
int snapshot__add_move(struct snapshot *snap, const struct sp_key *from,
		       const struct sp_key *to);
/* Threads whose rows were folded when it was read. */
void snapshot__set_threads_exited(struct snapshot *snap, size_t n);
size_t snapshot__threads_exited(const struct snapshot *snap);
/* Sorts and merges duplicate keys; call once before reading it. */
void snapshot__seal(struct snapshot *snap);
/*
 * Adds n entries sorted by key, no key twice (a sealed snapshot's, the
 * folded rows'), to snap: sealed first, then one pass down both, equal
 * keys summed.  0 or -ENOMEM.
 */
int snapshot__join(struct snapshot *snap, const struct snapshot_entry *rows,
		   size_t n);
/*
 * Rewrites every key (entries and moves) with fn, then seals again:
 * entries fn makes equal merge.  Several processes: addresses become
 * canonical ones (procspace.h).
 */
void snapshot__rekey(struct snapshot *snap,
		     void (*fn)(void *ctx, struct sp_key *key), void *ctx);
size_t snapshot__count(const struct snapshot *snap);
const struct snapshot_entry *snapshot__entries(const struct snapshot *snap);
/*
 * What changed from prev (may be NULL; the read before cur) to cur: one
 * entry per key whose count, wait, failures, futile wakeups or holds
 * grew, holding the growth (histograms too); max_ns and hold_max_ns are
 * the longest in cur's window.  prev's rows that cur moved count under
 * their new keys.
 */
int snapshot__delta(const struct snapshot *cur, const struct snapshot *prev,
		    struct snapshot **out);
/*
 * *kept (a sum of deltas: what a report will show) with its rows under
 * the keys cur moved them to, so that it holds no row of a thread or
 * process cur folded away; 0 or -ENOMEM (*kept as it was).
 */
int snapshot__follow(struct snapshot **kept, const struct snapshot *cur);
/*
 * a and b (either may be NULL) added key by key: counts, waits and
 * failures summed, maxima the larger; sealed.  Summing the deltas of
 * consecutive windows gives the totals over all of them, maxima included.
 */
int snapshot__merge(const struct snapshot *a, const struct snapshot *b,
		    struct snapshot **out);
/*
 * --duty: every sum (counts, waits, failures, futile wakeups, holds,
 * histogram slots) times num / den, rounded; the maxima stay.
 */
void snapshot__scale(struct snapshot *snap, uint64_t num, uint64_t den);
int snapshot__key_cmp(const struct sp_key *a, const struct sp_key *b);

#endif
