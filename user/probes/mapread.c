// SPDX-License-Identifier: GPL-2.0
/*
 * The readers of the maps of waits: the stats map (with the rows of
 * exited threads folded out, see fold.c), the histograms and --hold's
 * holds beside it, --blame's charges, the waits in progress (the stacks
 * of the rows read: stackread.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "fold.h"
#include "latewalk.h"
#include "sortorder.h"
#include "probesimpl.h"
#include "syncprof.skel.h"
#include "waiting.h"
#include "whycharges.h"

void probes__set_translate(struct probes *p,
			   uint64_t (*translate)(void *ctx, pid_t pid,
						 uint64_t pc),
			   void *ctx)
{
	p->translate = translate;
	p->translate_ctx = ctx;
}

/*
 * Several processes: a row's key with its object and call site as
 * canonical addresses (procspace.h), as reports key it; the stack stays
 * the thread's, whose id the kernel's stack table knows.
 */
static struct sp_key probes__live_key(const struct probes *p,
				      const struct sp_key *raw)
{
	struct sp_key k = *raw;

	if (p->translate) {
		k.callsite = p->translate(p->translate_ctx, (pid_t)k.pid,
					  k.callsite);
		k.object = p->translate(p->translate_ctx, (pid_t)k.pid,
					k.object);
	}
	return k;
}

/*
 * The frames of a row's stack, canonical: the table's when a read kept
 * them (translated then), else the raw ones a drain holds or the
 * kernel's, translated now.  False when none has them (lost: counted).
 */
static bool probes__stack_frames(struct probes *p, pid_t pid, uint64_t id,
				 uint64_t *pcs, uint32_t *n, uint32_t *end)
{
	const uint64_t *frames;
	enum stacktab_end e;

	if (!stacktab__get(p->stacks, stacktab__canonical(p->stacks, id),
			   &frames, n, &e)) {
		memcpy(pcs, frames, *n * sizeof(*pcs));
		*end = (uint32_t)e;
		return true;
	}
	/* Drained and held raw, or made since the last drain. */
	if (probes__raw_stack(p, id, &frames, n, &e))
		return false;
	*end = (uint32_t)e;
	for (uint32_t k = 0; k < *n; k++)
		pcs[k] = p->translate(p->translate_ctx, pid, frames[k]);
	return true;
}

/*
 * A folded row's stack under the id of its canonical frames (the id the
 * kernel would give them: for the process whose addresses are the
 * canonical ones, its own id), kept in the session's table: the runs of
 * one program, each with its own addresses, fold into one row.  A stack
 * whose frames are lost keeps its id.
 */
static void probes__canonical_stack(void *ctx, struct sp_key *key)
{
	struct probes *p = ctx;
	uint64_t pcs[SP_STACK_MAX_DEPTH], id;
	const uint64_t *frames;
	enum stacktab_end e;
	uint32_t n, end, have;

	if (!key->stack_id || !p->translate || !p->stacks ||
	    !probes__stack_frames(p, (pid_t)key->pid, key->stack_id, pcs, &n,
				  &end))
		return;
	id = latewalk__stack_id(pcs, n, end);
	if (stacktab__get(p->stacks, id, &frames, &have, &e) &&
	    stacktab__add(p->stacks, id, pcs, n, (enum stacktab_end)end))
		return;
	key->stack_id = id;
}

void probes__set_stacks(struct probes *p, struct stacktab *tab)
{
	p->stacks = tab;
	fold__set_canon(p->fold, probes__canonical_stack, p);
}

/*
 * Reads the whole map into p->keys/values: in batches of 4096 (one
 * syscall each, where one per row took ~1 us here), else row by row.
 * Returns the rows read.
 */
static size_t probes__read_map(struct probes *p, int fd)
{
	__u32 batch_out = 0, n;
	size_t got = 0;
	void *in = NULL;
	int err;

	do {
		n = p->map_size - (__u32)got < 4096 ? p->map_size - (__u32)got
						    : 4096;
		if (!n)
			break;
		err = bpf_map_lookup_batch(fd, in, &batch_out, p->keys + got,
					   p->values + got, &n, NULL);
		if (err && errno != ENOENT) {
			if (got || errno != EINVAL)
				return got;
			break;	/* no batches: row by row */
		}
		got += n;
		in = &batch_out;
	} while (!err);
	if (in)
		return got;
	struct sp_key *prev = NULL;

	while (got < p->map_size &&
	       !bpf_map_get_next_key(fd, prev, &p->keys[got])) {
		prev = &p->keys[got];
		if (!bpf_map_lookup_elem(fd, prev, &p->values[got]))
			got++;
	}
	return got;
}

/* --hold's rows of the dead threads (sorted TIDs), into the fold. */
static int probes__fold_holds(struct probes *p, const __u32 *dead,
			      size_t n_dead)
{
	int fd = bpf_map__fd(p->skel->maps.hold_stats);
	struct sp_key prev, next;
	bool started = false;
	struct sp_value row;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, started ? &prev : NULL, &next)) {
		/* A deleted key's successor is the next one after prev. */
		if (bsearch(&next.tid, dead, n_dead, sizeof(*dead), order__u32_at) &&
		    !bpf_map_lookup_and_delete_elem(fd, &next, &row)) {
			struct sp_key key = probes__live_key(p, &next);

			err = fold__add_hold(p->fold, &key, &row, p->window);
			continue;
		}
		prev = next;
		started = true;
	}
	return err;
}

/* A thread and its process: TIDs are unique machine-wide. */
struct tid_pid {
	__u32 tid;
	__u32 pid;
};

/*
 * Whether a thread has exited, by /proc.  One process: while it lives
 * on (a process that has exited keeps its threads' rows, the last
 * report shows them).  Several: a process that ended too, its rows fold
 * as its threads' would (fold.c; the names stay, by its PID).
 */
static bool probes__thread_gone(const struct probes *p, pid_t pid, pid_t tid)
{
	char path[32];

	if (!pid)
		pid = p->tgid;
	if (probes__thread_alive_in(pid, tid))
		return false;
	if (p->several || pid == p->tgid)
		return true;	/* one: the caller checked the process lives */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return !access(path, F_OK);
}

static int order__gone(const void *a, const void *b)
{
	const struct probes_gone *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * Several: whether the kernel told of the thread's exit, or of its
 * process's (the told exits of this read and the one before, sorted).
 */
static bool probes__told_gone(const struct probes *p, __u32 pid,
			      __u32 tid)
{
	for (int g = 0; g < 2; g++) {
		struct probes_gone key = { .pid = pid, .tid = 0 };

		if (bsearch(&key, p->gone[g], p->n_gone[g], sizeof(key),
			    order__gone))
			return true;
		key.tid = tid;
		if (bsearch(&key, p->gone[g], p->n_gone[g], sizeof(key),
			    order__gone))
			return true;
	}
	return false;
}

/*
 * Several: the exits told since the last read are sorted for this one;
 * whether /proc must be asked instead (the kernel's event ring lost
 * events since the last read, exits among them maybe).
 */
static bool probes__gone_begin(struct probes *p)
{
	uint64_t lost = probes__counter(p, SP_CNT_LOST_PROC_EVENTS);
	bool ask = lost != p->lost_events_seen;

	p->lost_events_seen = lost;
	if (p->n_gone[0] > 1)
		qsort(p->gone[0], p->n_gone[0], sizeof(*p->gone[0]),
		      order__gone);
	return ask;
}

/* After a read: this read's told exits become the one before's. */
static void probes__gone_end(struct probes *p)
{
	struct probes_gone *keep = p->gone[1];
	size_t cap = p->cap_gone[1];

	p->gone[1] = p->gone[0];
	p->cap_gone[1] = p->cap_gone[0];
	p->n_gone[1] = p->n_gone[0];
	p->gone[0] = keep;
	p->cap_gone[0] = cap;
	p->n_gone[0] = 0;
}

/*
 * Takes the rows of the threads that have exited out of the map and
 * into the fold, recording their moves in snap; marks them in gone[].
 * Only while the target lives: the last report keeps every thread.
 */
static int probes__fold_exited(struct probes *p, int fd, size_t n,
			       bool *gone, struct snapshot *snap)
{
	int hist_fd = bpf_map__fd(p->skel->maps.hists);
	struct tid_pid *tids = malloc((n ? n : 1) * sizeof(*tids));
	size_t n_tids = 0, n_dead = 0;
	struct sp_hist hist;
	bool ask = !p->several || probes__gone_begin(p);
	__u32 *dead;
	int err = 0;

	if (!tids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tids[n_tids++] = (struct tid_pid){ p->keys[i].tid,
						   p->keys[i].pid };
	qsort(tids, n_tids, sizeof(*tids), order__u32_at);
	dead = (__u32 *)tids;	/* reused in place: dead TIDs, sorted */
	for (size_t i = 0; i < n_tids; i++) {
		struct tid_pid t = tids[i];

		if (i && t.tid == tids[i - 1].tid)
			continue;
		if (!t.tid)
			continue;
		/* Several: the kernel tells every exit (no /proc read per
		   thread and read), unless its ring lost some. */
		if (ask ? probes__thread_gone(p, (pid_t)t.pid, (pid_t)t.tid)
			: probes__told_gone(p, t.pid, t.tid))
			dead[n_dead++] = t.tid;
	}
	for (size_t i = 0; i < n_dead; i++)
		fold__thread_exited(p->fold);
	for (size_t i = 0; i < n && n_dead && !err; i++) {
		struct sp_key key = probes__live_key(p, &p->keys[i]);
		struct sp_value last;

		if (!bsearch(&p->keys[i].tid, dead, n_dead, sizeof(*dead), order__u32_at))
			continue;
		/* Its last value, and out: nothing can add to it after. */
		if (bpf_map_lookup_and_delete_elem(fd, &p->keys[i], &last))
			continue;
		gone[i] = true;
		err = fold__add(p->fold, &key, &last, p->window, snap);
		if (!err && !bpf_map_lookup_and_delete_elem(hist_fd,
							    &p->keys[i], &hist))
			err = fold__add_hist(p->fold, &key, &hist);
	}
	if (!err && n_dead && p->hold)
		err = probes__fold_holds(p, dead, n_dead);
	if (!err)
		err = probes__fold_caused(p, dead, n_dead,
					  p->several ? probes__told_gone : NULL);
	if (!err)
		err = probes__fold_blame(p, dead, n_dead,
					 p->several ? probes__told_gone : NULL,
					 probes__canonical_stack);
	if (p->several)
		probes__gone_end(p);
	free(tids);
	return err;
}

/* Whether any thread of the target still runs. */
static bool probes__target_alive(const struct probes *p)
{
	char path[64];

	/* Several: each thread's own process is checked (thread_gone). */
	if (p->several)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->tgid);
	return !access(path, F_OK) && (probes__thread_alive(p, p->tgid) ||
				       probes__live_thread(p, p->tgid));
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sp_key));
}

/* Side-map rows per lookup_batch call. */
#define SIDE_BATCH 1024

/*
 * A side map's row added to snap: under its own key while the stats map
 * has the row, else under the key the fold keeps an exited thread's row
 * under.  live: the stats map's keys as read (sorted), so that only a
 * row that came after them asks the kernel.
 */
static int probes__add_side(struct probes *p, bool hist, int stats_fd,
			    const struct sp_key *live, size_t n_live,
			    const struct sp_key *key, const void *value,
			    struct snapshot *snap, uint64_t closing)
{
	struct sp_key at = probes__live_key(p, key);
	struct sp_value row;

	if (!bsearch(key, live, n_live, sizeof(*live), cmp_key) &&
	    bpf_map_lookup_elem(stats_fd, key, &row))
		at = fold__key(p->fold, &at);
	return hist ? snapshot__add_hist(snap, &at, value)
		    : snapshot__add_hold(snap, &at, value, 1, closing);
}

/*
 * Adds the rows of a map beside the stats map (the histograms, --hold's
 * holds) to snap, in batches of SIDE_BATCH (one syscall each; row by row
 * took three per row: the next key, its value, and whether the stats map
 * still has it).  Each batch's values are added before the next is read,
 * so a server's rows are not held whole a second time.  Without batches
 * (or when one fails part way), the rest is read row by row, skipping
 * the keys the batches added.
 */
static int probes__read_side(struct probes *p, int side_fd, int stats_fd,
			     const struct sp_key *live, size_t n_live,
			     struct snapshot *snap, uint64_t closing)
{
	bool hist = side_fd == bpf_map__fd(p->skel->maps.hists);
	size_t vsize = hist ? sizeof(struct sp_hist) : sizeof(struct sp_value);
	struct sp_key key, next, *prev = NULL, *keys = NULL;
	void *values = malloc(SIDE_BATCH * vsize);
	size_t cap = 0, got = 0;
	__u32 batch_out = 0, n;
	bool batched = true;
	void *in = NULL;
	int err = values ? 0 : -ENOMEM, ret;

	do {
		if (err)
			break;
		if (array__grow(&keys, &cap, got + SIDE_BATCH, sizeof(*keys))) {
			err = -ENOMEM;
			break;
		}
		n = SIDE_BATCH;
		ret = bpf_map_lookup_batch(side_fd, in, &batch_out, keys + got,
					   values, &n, NULL);
		if (ret && errno != ENOENT) {
			batched = false;
			break;
		}
		for (__u32 i = 0; !err && i < n; i++)
			err = probes__add_side(p, hist, stats_fd, live, n_live,
					       &keys[got + i],
					       (char *)values + i * vsize,
					       snap, closing);
		got += n;
		in = &batch_out;
	} while (!ret);
	if (batched || err)
		goto out;
	qsort(keys, got, sizeof(*keys), cmp_key);
	while (!err && !bpf_map_get_next_key(side_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bsearch(&key, keys, got, sizeof(*keys), cmp_key) ||
		    bpf_map_lookup_elem(side_fd, &key, values))
			continue;
		err = probes__add_side(p, hist, stats_fd, live, n_live, &key,
				       values, snap, closing);
	}
out:
	free(keys);
	free(values);
	return err;
}

int probes__read(struct probes *p, struct snapshot **out)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	int hist_fd = bpf_map__fd(p->skel->maps.hists);
	int hold_fd = bpf_map__fd(p->skel->maps.hold_stats);
	uint64_t closing = p->window;
	struct snapshot *snap;
	bool *gone = NULL;
	size_t n, live = 0;
	int err;

	/* Calls ending from now on count toward the next window's max. */
	p->skel->bss->window = ++p->window;
	p->charge_rows_read = 0;
	err = snapshot__new(&snap);
	if (err)
		return err;
	/* Before this read's threads: a row moves once a read. */
	err = fold__forget_pids(p->fold, p->forget, p->n_forget, p->window,
				snap);
	/* --blame's rows of those processes too (pids sorted now). */
	if (!err)	/* --blame's rows of those processes too */
		err = probes__forget_blame(p, p->forget, p->n_forget);
	p->n_forget = 0;
	if (err)
		goto fail;
	n = probes__read_map(p, fd);
	p->rows_read = n;
	p->stacks_drained = 0;	/* counted by this read's drains */
	gone = calloc(n ? n : 1, sizeof(*gone));
	if (!gone) {
		err = -ENOMEM;
		goto fail;
	}
	if (probes__target_alive(p)) {
		err = probes__fold_exited(p, fd, n, gone, snap);
		if (err)
			goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		struct sp_key key;

		if (gone[i])
			continue;
		key = probes__live_key(p, &p->keys[i]);
		err = snapshot__add(snap, &key, &p->values[i], 1, closing);
		if (err)
			goto fail;
		/* The rows still in the map, for the side maps' lookups. */
		p->keys[live++] = p->keys[i];
	}
	qsort(p->keys, live, sizeof(*p->keys), cmp_key);
	/* The live rows sorted, the folded ones joined in one pass: only
	   what changed is sorted (fold.c).  Sorted, so the side maps' rows
	   add to their rows in place. */
	err = fold__into(p->fold, snap, closing);
	if (!err)
		err = probes__read_side(p, hist_fd, fd, p->keys, live, snap,
					closing);
	if (!err && p->hold)
		err = probes__read_side(p, hold_fd, fd, p->keys, live, snap,
					closing);
	if (err)
		goto fail;
	snapshot__set_threads_exited(snap, fold__threads(p->fold));
	snapshot__seal(snap);
	free(gone);
	*out = snap;
	return 0;
fail:
	free(gone);
	snapshot__free(snap);
	return err;
}

void probes__exited_rows(const struct probes *p, size_t *rows,
			 size_t *forgotten, uint64_t *merged)
{
	*rows = fold__rows(p->fold);
	*forgotten = fold__rows_forgotten(p->fold);
	*merged = fold__merged(p->fold);
}

int probes__read_why(struct probes *p, struct why **out)
{
	struct sp_why_key key, next, *prev = NULL;
	struct sp_why_value value;
	int fd = bpf_map__fd(p->skel->maps.why);
	struct why *w;
	int err = why__new(&w);

	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &value))
			err = why__add(w, &key, &value);
	}
	if (err) {
		why__free(w);
		return err;
	}
	why__set_counts(w, probes__counter(p, SP_CNT_WHY_CUT),
			probes__counter(p, SP_CNT_WHY_DROPPED));
	why__seal(w);
	*out = w;
	return 0;
}

int probes__read_waiting(struct probes *p, uint64_t now_ns,
			 struct snapshot **out)
{
	bool contended = p->mode == PROBES_CONTENDED;
	struct bpf_map *map = contended ? p->skel->maps.contended
					: p->skel->maps.inflight;
	struct snapshot *snap;
	int err = snapshot__new(&snap);

	if (!err && !p->several)
		err = waiting__read(bpf_map__fd(map), contended, p->tgid,
				    now_ns, snap);
	for (size_t i = 0; !err && p->several && i < p->n_pids; i++)
		err = waiting__read(bpf_map__fd(map), contended, p->pids[i],
				    now_ns, snap);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	snapshot__seal(snap);
	*out = snap;
	return 0;
}
