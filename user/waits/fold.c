// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel keys its rows by thread (the live screen splits rows by
 * thread at any moment), so without folding its map grows with every
 * thread that ever locked, not with what a report shows: 18,000
 * short-lived threads filled the old 16,384-row default and the long-lived
 * threads' rows were dropped.  The loader therefore takes the rows of
 * threads that have exited out of the map (probes.c) and keeps them here:
 * merged into one row per {object, call site, stack, type} without
 * --per-thread (tid 0: "exited" on the screen), or as they were with it.
 * The row's histogram and --hold's row share its key and leave their
 * maps with it: left behind, they filled those maps instead.
 *
 * Counts and waits only grow, so a snapshot is the map plus these rows.
 * What must not break is a delta: a row that moves from {tid T} to
 * {tid 0} would count T's history twice.  Each move is recorded in the
 * snapshot being read, and snapshot__delta counts the previous
 * snapshot's row under its new key (consecutive reads only, as every
 * reader does).  Window maxima are kept as the kernel keeps them: the
 * open window's and the closing one's.
 *
 * Processes go the same way, later: the rows of a process that exited
 * long ago (no longer named: procset.c keeps the newest exited) become
 * rows of process 0 (fold__forget_pids), so under --all the rows grow
 * with what the programs do, not with how many processes ever ran
 * (PostgreSQL's backend per connection: rows per backend, forever).
 * For that, a row is folded under its canonical key (the caller gives
 * lock and call site as canonical addresses; fold__set_canon's function
 * makes the stack id the id of its canonical frames): each exec'd run
 * of a program has its own addresses and stack ids, and keyed by them
 * its rows never merged.  Rejected: keeping raw keys and making them
 * canonical at each read (what was done: a sort of every row again at
 * each read, and a process forgotten by the address space could no
 * longer be translated at all).
 *
 * The rows are also kept sorted (fold__entries), and only the keys
 * changed since the last read are made again and merged in, so that a
 * read joins them in one pass instead of sorting them with the live
 * rows every second.  Rejected: a sorted array alone (an add to a row
 * would be a binary search and an insert, a forget a move of half the
 * array); a balanced tree (a pointer walk per row at each read).
 *
 * Rejected: an LRU map (it evicts live rows as readily as dead ones, and
 * silently); deleting rows at thread exit from BPF (sched_process_exit
 * would have to find them: the map is keyed by object first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fold.h"

/*
 * Rows of forgotten processes merge by program, call site and stack
 * when syncprof knew the process's layout; one it never saw mapped (it
 * ended before its maps were read) keeps its own addresses, so its
 * rows never merge.  Beyond this many rows of process 0, a new one goes
 * to the "other" row of its lock type (no object, call site or stack):
 * ~1 kB a row (the table's slot and the sorted entry).
 */
#define FOLD_MAX_FORGOTTEN 4096

struct fold_slot {
	struct sp_key key;
	struct sp_value value;	/* the stats map's row */
	struct sp_value hold;	/* --hold's row */
	struct sp_hist hist;	/* the histogram's */
	bool used, has_value, has_hold, has_hist;
};

struct fold {
	bool keep_threads;
	struct fold_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t used;
	size_t used_pid0;	/* of them, of process 0 */
	size_t max_pid0;	/* their bound (0: none) */
	uint64_t merged;	/* rows merged into the "other" rows */
	size_t threads;
	void (*canon)(void *ctx, struct sp_key *key);	/* or NULL */
	void *canon_ctx;
	/* The rows sorted by key as of the last fold__entries, and the
	   keys changed (added to) or gone since. */
	struct snapshot_entry *sorted;
	size_t n_sorted;
	struct sp_key *changed, *removed;
	size_t n_changed, cap_changed, n_removed, cap_removed;
	/* The keys changed in the last two calls: their window maxima
	   change as those windows close. */
	struct sp_key *recent[2];
	size_t n_recent[2], cap_recent[2];
};

int fold__new(bool keep_threads, struct fold **out)
{
	struct fold *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->keep_threads = keep_threads;
	f->max_pid0 = FOLD_MAX_FORGOTTEN;
	*out = f;
	return 0;
}

void fold__free(struct fold *f)
{
	if (!f)
		return;
	free(f->slots);
	free(f->sorted);
	free(f->changed);
	free(f->removed);
	free(f->recent[0]);
	free(f->recent[1]);
	free(f);
}

void fold__set_canon(struct fold *f,
		     void (*canon)(void *ctx, struct sp_key *key), void *ctx)
{
	f->canon = canon;
	f->canon_ctx = ctx;
}

struct sp_key fold__key(const struct fold *f, const struct sp_key *key)
{
	struct sp_key k = *key;

	if (!f->keep_threads) {
		k.tid = 0;
		k.owner_tid = 0;
	}
	if (f->canon)
		f->canon(f->canon_ctx, &k);
	return k;
}

static uint64_t key_hash(const struct sp_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static struct fold_slot *fold__slot(struct fold_slot *slots, size_t cap,
				    const struct sp_key *key)
{
	size_t i = (size_t)key_hash(key) & (cap - 1);

	while (slots[i].used && memcmp(&slots[i].key, key, sizeof(*key)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int fold__grow(struct fold *f)
{
	size_t cap = f->cap ? f->cap * 2 : 256;
	struct fold_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++)
		if (f->slots[i].used)
			*fold__slot(slots, cap, &f->slots[i].key) = f->slots[i];
	free(f->slots);
	f->slots = slots;
	f->cap = cap;
	return 0;
}

/* v's longest call in window w, from either of its window slots. */
static uint64_t window_max(const struct sp_value *v, uint64_t w)
{
	uint64_t m = 0;

	if (v->window == w)
		m = v->window_max_ns;
	if (v->prev_window == w && v->prev_window_max_ns > m)
		m = v->prev_window_max_ns;
	return m;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The slot of target, taken if new; NULL without memory. */
static struct fold_slot *fold__claim(struct fold *f, const struct sp_key *target)
{
	struct fold_slot *slot;

	if ((f->used + 1) * 4 > f->cap * 3 && fold__grow(f))
		return NULL;
	if (array__grow(&f->changed, &f->cap_changed, f->n_changed + 1,
			sizeof(*f->changed)))
		return NULL;
	f->changed[f->n_changed++] = *target;
	slot = fold__slot(f->slots, f->cap, target);
	if (!slot->used) {
		slot->used = true;
		slot->key = *target;
		f->used++;
		f->used_pid0 += !target->pid;
	}
	return slot;
}

/* Adds v to c: sums, the maximum, and both window maxima. */
static void fold__merge(struct sp_value *c, const struct sp_value *v,
			uint64_t open)
{
	uint64_t closing = open - 1;
	uint64_t open_max = max_u64(window_max(c, open), window_max(v, open));
	uint64_t closing_max = max_u64(window_max(c, closing),
				       window_max(v, closing));

	c->count += v->count;
	c->wait_ns += v->wait_ns;
	c->failed += v->failed;
	c->failed_ns += v->failed_ns;
	c->futile += v->futile;
	c->max_ns = max_u64(c->max_ns, v->max_ns);
	c->window = open;
	c->window_max_ns = open_max;
	c->prev_window = closing;
	c->prev_window_max_ns = closing_max;
}

int fold__add(struct fold *f, const struct sp_key *key,
	      const struct sp_value *v, uint64_t open, struct snapshot *snap)
{
	struct sp_key target = fold__key(f, key);
	struct fold_slot *slot;

	if (memcmp(&target, key, sizeof(target))) {
		int err = snapshot__add_move(snap, key, &target);

		if (err)
			return err;
	}
	slot = fold__claim(f, &target);
	if (!slot)
		return -ENOMEM;
	fold__merge(&slot->value, v, open);
	slot->has_value = true;
	return 0;
}

int fold__add_hold(struct fold *f, const struct sp_key *key,
		   const struct sp_value *v, uint64_t open)
{
	struct sp_key target = fold__key(f, key);
	struct fold_slot *slot = fold__claim(f, &target);

	if (!slot)
		return -ENOMEM;
	fold__merge(&slot->hold, v, open);
	slot->has_hold = true;
	return 0;
}

int fold__add_hist(struct fold *f, const struct sp_key *key,
		   const struct sp_hist *h)
{
	struct sp_key target = fold__key(f, key);
	struct fold_slot *slot = fold__claim(f, &target);

	if (!slot)
		return -ENOMEM;
	for (int i = 0; i < SP_HIST_SLOTS; i++)
		slot->hist.slot[i] += h->slot[i];
	slot->has_hist = true;
	return 0;
}

/* A slot's rows as a snapshot's entry, read as window `closing` closed. */
static void fold__entry_of(const struct fold_slot *slot, uint64_t closing,
			   struct snapshot_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->key = slot->key;
	if (slot->has_value) {
		e->count = slot->value.count;
		e->wait_ns = slot->value.wait_ns;
		e->failed = slot->value.failed;
		e->failed_ns = slot->value.failed_ns;
		e->futile = slot->value.futile;
		e->max_ns = slot->value.max_ns;
		e->window_max_ns = window_max(&slot->value, closing);
	}
	if (slot->has_hold) {
		e->hold_count = slot->hold.count;
		e->hold_ns = slot->hold.wait_ns;
		e->hold_max_ns = slot->hold.max_ns;
		e->hold_window_max_ns = window_max(&slot->hold, closing);
	}
	for (int i = 0; slot->has_hist && i < SP_HIST_SLOTS; i++)
		e->hist[i] = slot->hist.slot[i];
}

static int cmp_key(const void *a, const void *b)
{
	return snapshot__key_cmp(a, b);
}

/* Sorts keys and drops repeats; the count left. */
static size_t sort_unique(struct sp_key *keys, size_t n)
{
	size_t out = 0;

	if (n > 1)
		qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++)
		if (!out || snapshot__key_cmp(&keys[out - 1], &keys[i]))
			keys[out++] = keys[i];
	return out;
}

/*
 * Adds the recent keys to the changed ones, and makes the changed ones
 * (n_new, before those) the newest recent ones.  0 or -ENOMEM.
 */
static int fold__age(struct fold *f)
{
	size_t n_new = f->n_changed;
	struct sp_key *newest;

	for (int g = 0; g < 2; g++) {
		if (array__grow(&f->changed, &f->cap_changed,
				f->n_changed + f->n_recent[g],
				sizeof(*f->changed)))
			return -ENOMEM;
		memcpy(f->changed + f->n_changed, f->recent[g],
		       f->n_recent[g] * sizeof(*f->changed));
		f->n_changed += f->n_recent[g];
	}
	/* The oldest's array holds the newest from now on. */
	if (array__grow(&f->recent[1], &f->cap_recent[1], n_new,
			sizeof(*f->recent[1])))
		return -ENOMEM;
	newest = f->recent[1];
	memcpy(newest, f->changed, n_new * sizeof(*newest));
	f->recent[1] = f->recent[0];
	f->n_recent[1] = f->n_recent[0];
	f->recent[0] = newest;
	f->n_recent[0] = sort_unique(newest, n_new);
	{
		size_t cap = f->cap_recent[1];

		f->cap_recent[1] = f->cap_recent[0];
		f->cap_recent[0] = cap;
	}
	return 0;
}

/*
 * The sorted rows brought up to date: the rows that stayed unchanged
 * are copied in order, the changed ones made again from their slots,
 * the gone ones left out; one pass, with only the changed keys sorted.
 * A row changed in the last two calls is made again too: its window
 * maxima change as its windows close (the open one, then the next).
 */
const struct snapshot_entry *fold__entries(struct fold *f, uint64_t closing,
					   size_t *n)
{
	size_t nc, nr, i = 0, j = 0, r = 0, out = 0;
	struct snapshot_entry *to;

	*n = f->n_sorted;
	if (!f->n_changed && !f->n_removed && !f->n_recent[0] &&
	    !f->n_recent[1])
		return f->sorted;
	if (fold__age(f))
		return NULL;
	nc = sort_unique(f->changed, f->n_changed);
	nr = sort_unique(f->removed, f->n_removed);
	to = malloc((f->n_sorted + nc + 1) * sizeof(*to));
	if (!to)
		return NULL;
	while (i < f->n_sorted || j < nc) {
		int c = j == nc ? -1 : i == f->n_sorted ? 1
			: snapshot__key_cmp(&f->sorted[i].key, &f->changed[j]);

		if (c >= 0) {
			const struct fold_slot *slot;

			i += c == 0;	/* made again */
			slot = f->cap ? fold__slot(f->slots, f->cap,
						   &f->changed[j]) : NULL;
			if (slot && slot->used)
				fold__entry_of(slot, closing, &to[out++]);
			j++;
			continue;
		}
		while (r < nr && snapshot__key_cmp(&f->removed[r],
						   &f->sorted[i].key) < 0)
			r++;
		if (r < nr && !snapshot__key_cmp(&f->removed[r],
						 &f->sorted[i].key)) {
			i++;
			continue;
		}
		to[out++] = f->sorted[i++];
	}
	free(f->sorted);
	f->sorted = to;
	f->n_sorted = out;
	f->n_removed = f->n_changed = 0;
	*n = out;
	return to;
}

int fold__into(struct fold *f, struct snapshot *snap, uint64_t closing)
{
	size_t n;
	const struct snapshot_entry *rows = fold__entries(f, closing, &n);

	if (!rows && n)
		return -ENOMEM;
	return snapshot__join(snap, rows, n);
}

/* Adds from's rows into to (both of one key). */
static void fold__merge_slot(struct fold_slot *to, const struct fold_slot *from,
			     uint64_t open)
{
	if (from->has_value)
		fold__merge(&to->value, &from->value, open);
	if (from->has_hold)
		fold__merge(&to->hold, &from->hold, open);
	for (int i = 0; from->has_hist && i < SP_HIST_SLOTS; i++)
		to->hist.slot[i] += from->hist.slot[i];
	to->has_value |= from->has_value;
	to->has_hold |= from->has_hold;
	to->has_hist |= from->has_hist;
}

/* Takes slot i out of the table (linear probing: the run after it moves
   back, so that no lookup stops early at the hole). */
static void fold__delete(struct fold *f, size_t i)
{
	size_t mask = f->cap - 1, j = i;

	f->used_pid0 -= !f->slots[i].key.pid;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!f->slots[j].used)
			break;
		home = (size_t)key_hash(&f->slots[j].key) & mask;
		/* j may fill the hole at i unless its home lies in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		f->slots[i] = f->slots[j];
		i = j;
	}
	memset(&f->slots[i], 0, sizeof(f->slots[i]));
	f->used--;
}

/* The row of process 0 that takes key's waits beyond the bound. */
static struct sp_key fold__other(const struct sp_key *key)
{
	return (struct sp_key){ .type = key->type };
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Only the forgotten processes' rows are touched: they are copied out,
 * deleted, and claimed again under process 0.  Rebuilding the table at
 * each read that forgot one process cost a copy of every row.
 */
int fold__forget_pids(struct fold *f, pid_t *pids, size_t n,
		      uint64_t open, struct snapshot *snap)
{
	struct fold_slot *out = NULL;
	size_t n_out = 0, cap_out = 0;
	int err = 0;

	if (!n || !f->used)
		return 0;
	qsort(pids, n, sizeof(*pids), cmp_pid);
	for (size_t i = 0; i < f->cap; i++) {
		const struct fold_slot *from = &f->slots[i];
		pid_t pid = (pid_t)from->key.pid;

		if (!from->used || !pid ||
		    !bsearch(&pid, pids, n, sizeof(*pids), cmp_pid))
			continue;
		if (array__grow(&out, &cap_out, n_out + 1, sizeof(*out))) {
			free(out);
			return -ENOMEM;
		}
		out[n_out++] = *from;
	}
	for (size_t k = 0; k < n_out; k++) {
		struct fold_slot *slot = fold__slot(f->slots, f->cap,
						    &out[k].key);

		fold__delete(f, (size_t)(slot - f->slots));
	}
	for (size_t k = 0; k < n_out && !err; k++) {
		struct sp_key key = out[k].key;
		struct fold_slot *slot;

		key.pid = 0;
		if (f->max_pid0 && f->used_pid0 >= f->max_pid0 &&
		    !fold__slot(f->slots, f->cap, &key)->used) {
			key = fold__other(&key);
			f->merged++;
		}
		err = snapshot__add_move(snap, &out[k].key, &key);
		if (!err)
			err = array__grow(&f->removed, &f->cap_removed,
					  f->n_removed + 1, sizeof(*f->removed));
		if (err)
			break;
		f->removed[f->n_removed++] = out[k].key;
		slot = fold__claim(f, &key);
		if (!slot) {
			err = -ENOMEM;
			break;
		}
		fold__merge_slot(slot, &out[k], open);
	}
	free(out);
	return err;
}

void fold__thread_exited(struct fold *f)
{
	if (!f->keep_threads)
		f->threads++;	/* else its rows still name it */
}

size_t fold__threads(const struct fold *f)
{
	return f->threads;
}

size_t fold__rows(const struct fold *f)
{
	return f->used;
}

size_t fold__rows_forgotten(const struct fold *f)
{
	return f->used_pid0;
}

void fold__set_max_forgotten(struct fold *f, size_t n)
{
	f->max_pid0 = n;
}

uint64_t fold__merged(const struct fold *f)
{
	return f->merged;
}
