/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rows of threads that have exited, taken out of the kernel's stats
 * map and kept here, so the map holds the live threads' rows only.
 */
#ifndef SYNCPROF_FOLD_H
#define SYNCPROF_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"
#include "syncprof.h"

struct fold;

/*
 * keep_threads: each row keeps its thread (--per-thread); else the rows
 * of all exited threads that differ only by thread (and holder) become
 * one, with tid and owner_tid 0.
 */
int fold__new(bool keep_threads, struct fold **out);
void fold__free(struct fold *f);
/*
 * canon(ctx, key) rewrites a row's key as it is kept once folded, after
 * its thread is dropped (several processes: its stack as the canonical
 * one of its frames, so that the runs of one program merge); NULL: none.
 */
void fold__set_canon(struct fold *f,
		     void (*canon)(void *ctx, struct sp_key *key), void *ctx);
/*
 * Takes key's last value, out of the map while report window `open` is
 * the open one (the window maxima of `open` and the one before it are
 * kept).  When the row changes key, the move is recorded in snap, the
 * snapshot being read, so that its delta against the previous one counts
 * the row once.
 */
int fold__add(struct fold *f, const struct sp_key *key,
	      const struct sp_value *v, uint64_t open, struct snapshot *snap);
/*
 * The same key's row of --hold's map, and its histogram, out of their
 * maps with it (their deltas follow the move fold__add recorded).
 */
int fold__add_hold(struct fold *f, const struct sp_key *key,
		   const struct sp_value *v, uint64_t open);
int fold__add_hist(struct fold *f, const struct sp_key *key,
		   const struct sp_hist *h);
/*
 * The rows of processes pids (sorted here) become rows of process 0,
 * merged; the moves recorded in snap, the snapshot being read (before
 * any thread's rows are folded into it).
 */
int fold__forget_pids(struct fold *f, pid_t *pids, size_t n,
		      uint64_t open, struct snapshot *snap);
/*
 * The folded rows sorted by key (sealed), read as report window
 * `closing` closed; NULL without memory.  Only what changed since the
 * last call is made again (see fold.c); valid until the fold changes.
 */
const struct snapshot_entry *fold__entries(struct fold *f, uint64_t closing,
					   size_t *n);
/* Joins every folded row to snap (sealed here), as fold__entries. */
int fold__into(struct fold *f, struct snapshot *snap, uint64_t closing);
/*
 * Counts one more exited thread whose rows no longer name it (for the
 * threads seen so far); 0 when rows keep their threads.
 */
void fold__thread_exited(struct fold *f);
size_t fold__threads(const struct fold *f);
size_t fold__rows(const struct fold *f);
/* Of them, the rows of process 0: of processes no longer named. */
size_t fold__rows_forgotten(const struct fold *f);
/*
 * Beyond n rows of process 0 (0: no bound; 4,096 unless set), a row of a
 * forgotten process that would be a new one joins the "other" row of
 * its lock type instead (no object, call site or stack: see fold.c);
 * fold__merged counts those rows.
 */
void fold__set_max_forgotten(struct fold *f, size_t n);
uint64_t fold__merged(const struct fold *f);
/*
 * The key a row of an exited thread is kept under: key itself, or with
 * no thread and no holder; then canon's.
 */
struct sp_key fold__key(const struct fold *f, const struct sp_key *key);

#endif
