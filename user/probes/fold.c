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
 *
 * Rejected: an LRU map (it evicts live rows as readily as dead ones, and
 * silently); deleting rows at thread exit from BPF (sched_process_exit
 * would have to find them: the map is keyed by object first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

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
	size_t threads;
};

int fold__new(bool keep_threads, struct fold **out)
{
	struct fold *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->keep_threads = keep_threads;
	*out = f;
	return 0;
}

void fold__free(struct fold *f)
{
	if (!f)
		return;
	free(f->slots);
	free(f);
}

struct sp_key fold__key(const struct fold *f, const struct sp_key *key)
{
	struct sp_key k = *key;

	if (!f->keep_threads) {
		k.tid = 0;
		k.owner_tid = 0;
	}
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
	slot = fold__slot(f->slots, f->cap, target);
	if (!slot->used) {
		slot->used = true;
		slot->key = *target;
		f->used++;
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

int fold__into(const struct fold *f, struct snapshot *snap, uint64_t closing)
{
	for (size_t i = 0; i < f->cap; i++) {
		int err;

		const struct fold_slot *slot = &f->slots[i];

		if (!slot->used)
			continue;
		err = slot->has_value ? snapshot__add(snap, &slot->key,
						      &slot->value, 1, closing)
				      : 0;
		if (!err && slot->has_hold)
			err = snapshot__add_hold(snap, &slot->key, &slot->hold,
						 1, closing);
		if (!err && slot->has_hist)
			err = snapshot__add_hist(snap, &slot->key, &slot->hist);
		if (err)
			return err;
	}
	return 0;
}

/* Adds a slot's rows into the slot of the same key in slots. */
static struct fold_slot *fold__put(struct fold_slot *slots, size_t cap,
				   const struct fold_slot *from,
				   const struct sp_key *key, uint64_t open)
{
	struct fold_slot *to = fold__slot(slots, cap, key);

	if (!to->used) {
		*to = *from;
		to->key = *key;
		return to;
	}
	if (from->has_value)
		fold__merge(&to->value, &from->value, open);
	if (from->has_hold)
		fold__merge(&to->hold, &from->hold, open);
	for (int i = 0; from->has_hist && i < SP_HIST_SLOTS; i++)
		to->hist.slot[i] += from->hist.slot[i];
	to->has_value |= from->has_value;
	to->has_hold |= from->has_hold;
	to->has_hist |= from->has_hist;
	return NULL;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int fold__forget_pids(struct fold *f, pid_t *pids, size_t n,
		      uint64_t open, struct snapshot *snap)
{
	struct fold_slot *slots;
	size_t used = 0;

	if (!n || !f->used)
		return 0;
	qsort(pids, n, sizeof(*pids), cmp_pid);
	slots = calloc(f->cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++) {
		const struct fold_slot *from = &f->slots[i];
		pid_t pid = (pid_t)from->key.pid;
		struct sp_key key = from->key;

		if (!from->used)
			continue;
		if (pid && bsearch(&pid, pids, n, sizeof(*pids), cmp_pid)) {
			key.pid = 0;
			if (snapshot__add_move(snap, &from->key, &key)) {
				free(slots);
				return -ENOMEM;
			}
		}
		used += fold__put(slots, f->cap, from, &key, open) != NULL;
	}
	free(f->slots);
	f->slots = slots;
	f->used = used;
	return 0;
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
