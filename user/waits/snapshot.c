// SPDX-License-Identifier: GPL-2.0
/*
 * Counts and waits only grow, so a window's are the difference of two
 * snapshots.  A maximum cannot be subtracted: each per-CPU value keeps
 * the max of the window it last saw a call in, and of the one before (the
 * loader advances the window and then reads; a call in between opens the
 * next window on its CPU).  A delta takes the closing window's max from
 * whichever slot holds it, or the all-time max when that grew meanwhile.
 * Rejected: resetting maxima from user space (races every CPU's update).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sortorder.h"
#include "snapshot.h"
#include "array.h"

/* A row folded at this read: the previous snapshot held it under from. */
struct snapshot_move {
	struct sp_key from;
	struct sp_key to;
};

struct snapshot {
	struct snapshot_entry *entries;
	size_t count;
	size_t cap;
	struct snapshot_move *moves;	/* sorted by from once sealed */
	size_t n_moves;
	size_t moves_cap;
	size_t threads_exited;
	size_t sealed;		/* the leading entries sorted by key, unique */
};

static const struct snapshot_entry *
snapshot__find(const struct snapshot *snap, const struct sp_key *key);

int snapshot__new(struct snapshot **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	free(snap->entries);
	free(snap->moves);
	free(snap);
}

int snapshot__add_move(struct snapshot *snap, const struct sp_key *from,
		       const struct sp_key *to)
{
	if (array__grow(&snap->moves, &snap->moves_cap, snap->n_moves + 1,
			sizeof(*snap->moves)))
		return -ENOMEM;
	snap->moves[snap->n_moves++] = (struct snapshot_move){
		.from = *from, .to = *to,
	};
	return 0;
}

void snapshot__set_threads_exited(struct snapshot *snap, size_t n)
{
	snap->threads_exited = n;
}

size_t snapshot__threads_exited(const struct snapshot *snap)
{
	return snap->threads_exited;
}

static struct snapshot_entry *snapshot__append(struct snapshot *snap)
{
	if (array__grow(&snap->entries, &snap->cap, snap->count + 1,
			sizeof(*snap->entries)))
		return NULL;
	return memset(&snap->entries[snap->count++], 0,
		      sizeof(struct snapshot_entry));
}

/* The longest of the CPUs' values in `window` (current or previous slot). */
static uint64_t window_max(const struct sp_value *per_cpu, int ncpus,
			   uint64_t window)
{
	uint64_t max = 0;

	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct sp_value *v = &per_cpu[cpu];

		if (v->window == window && v->window_max_ns > max)
			max = v->window_max_ns;
		if (v->prev_window == window && v->prev_window_max_ns > max)
			max = v->prev_window_max_ns;
	}
	return max;
}

int snapshot__add(struct snapshot *snap, const struct sp_key *key,
		  const struct sp_value *per_cpu, int ncpus, uint64_t window)
{
	struct snapshot_entry *e = snapshot__append(snap);

	if (!e)
		return -ENOMEM;
	e->key = *key;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct sp_value *v = &per_cpu[cpu];

		e->count += v->count;
		e->wait_ns += v->wait_ns;
		e->failed += v->failed;
		e->failed_ns += v->failed_ns;
		e->futile += v->futile;
		if (v->max_ns > e->max_ns)
			e->max_ns = v->max_ns;
	}
	e->window_max_ns = window_max(per_cpu, ncpus, window);
	return 0;
}

/*
 * The entry a side map's row (a histogram, --hold's holds) adds to: the
 * row's own when the sealed part has it, else a new one that the next
 * seal merges.  In place, a server's tens of thousands of rows are not
 * held twice while a read is sealed.
 */
static struct snapshot_entry *snapshot__side_entry(struct snapshot *snap,
						   const struct sp_key *key)
{
	const struct snapshot_entry *found = snapshot__find(snap, key);
	struct snapshot_entry *e;

	if (found)
		return &snap->entries[found - snap->entries];
	e = snapshot__append(snap);
	if (e)
		e->key = *key;
	return e;
}

int snapshot__add_hold(struct snapshot *snap, const struct sp_key *key,
		       const struct sp_value *per_cpu, int ncpus,
		       uint64_t window)
{
	struct snapshot_entry *e = snapshot__side_entry(snap, key);
	uint64_t wmax = window_max(per_cpu, ncpus, window);

	if (!e)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		e->hold_count += per_cpu[cpu].count;
		e->hold_ns += per_cpu[cpu].wait_ns;
		if (per_cpu[cpu].max_ns > e->hold_max_ns)
			e->hold_max_ns = per_cpu[cpu].max_ns;
	}
	if (wmax > e->hold_window_max_ns)
		e->hold_window_max_ns = wmax;
	return 0;
}

int snapshot__add_hist(struct snapshot *snap, const struct sp_key *key,
		       const struct sp_hist *hist)
{
	struct snapshot_entry *e = snapshot__side_entry(snap, key);

	if (!e)
		return -ENOMEM;
	for (size_t k = 0; k < SP_HIST_SLOTS; k++)
		e->hist[k] += hist->slot[k];
	return 0;
}

int snapshot__key_cmp(const struct sp_key *a, const struct sp_key *b)
{
	int c;

	c = order__qsp(a->object, a->callsite, a->type, b->object, b->callsite,
		       b->type);
	if (c)
		return c;
	if ((c = order__u64(a->tid, b->tid)))
		return c;
	if ((c = order__u64(a->owner_tid, b->owner_tid)))
		return c;
	if ((c = order__u64(a->pid, b->pid)))
		return c;
	return order__u64(a->stack_id, b->stack_id);
}

static int snapshot__entry_cmp(const void *a, const void *b)
{
	return snapshot__key_cmp(&((const struct snapshot_entry *)a)->key,
				 &((const struct snapshot_entry *)b)->key);
}

static int snapshot__move_cmp(const void *a, const void *b)
{
	return snapshot__key_cmp(&((const struct snapshot_move *)a)->from,
				 &((const struct snapshot_move *)b)->from);
}

/* Whether the entries are sorted by key with no key twice: one pass. */
static bool snapshot__in_order(const struct snapshot *snap)
{
	for (size_t i = 1; i < snap->count; i++)
		if (snapshot__key_cmp(&snap->entries[i - 1].key,
				      &snap->entries[i].key) >= 0)
			return false;
	return true;
}

/*
 * The rows appended after the sorted prefix (a side map's rows with no
 * row of their own), sorted alone and merged in from the back: a read
 * of tens of thousands of rows is not sorted again for a few new ones.
 * False without memory (the caller sorts the whole).
 */
static bool snapshot__merge_tail(struct snapshot *snap)
{
	size_t k = snap->sealed, t = snap->count - k, i = k, j = t;
	size_t w = snap->count;
	struct snapshot_entry *tail = malloc(t * sizeof(*tail));

	if (!tail)
		return false;
	memcpy(tail, snap->entries + k, t * sizeof(*tail));
	qsort(tail, t, sizeof(*tail), snapshot__entry_cmp);
	while (j > 0) {
		if (i > 0 && snapshot__key_cmp(&snap->entries[i - 1].key,
					       &tail[j - 1].key) > 0)
			snap->entries[--w] = snap->entries[--i];
		else
			snap->entries[--w] = tail[--j];
	}
	free(tail);
	return true;
}

void snapshot__seal(struct snapshot *snap)
{
	size_t out = 0;

	if (snap->n_moves > 1)
		qsort(snap->moves, snap->n_moves, sizeof(*snap->moves),
		      snapshot__move_cmp);
	if (snap->count < 2) {
		snap->sealed = snap->count;
		return;
	}
	/* In order already (a delta, a rekey that moved nothing): kept. */
	if (snapshot__in_order(snap)) {
		snap->sealed = snap->count;
		return;
	}
	if (!snap->sealed || !snapshot__merge_tail(snap))
		qsort(snap->entries, snap->count, sizeof(*snap->entries),
		      snapshot__entry_cmp);
	for (size_t i = 0; i < snap->count; i++) {
		struct snapshot_entry *e = &snap->entries[i];
		struct snapshot_entry *last = out ? &snap->entries[out - 1] : NULL;

		if (last && !snapshot__key_cmp(&last->key, &e->key)) {
			wait_stats__add(&last->stats, &e->stats);
			continue;
		}
		snap->entries[out++] = *e;
	}
	snap->count = out;
	snap->sealed = out;
}

int snapshot__join(struct snapshot *snap, const struct snapshot_entry *rows,
		   size_t n)
{
	struct snapshot_entry *to;
	size_t i = 0, j = 0, out = 0, cap;

	snapshot__seal(snap);
	if (!n)
		return 0;
	cap = snap->count + n;
	to = malloc(cap * sizeof(*to));
	if (!to)
		return -ENOMEM;
	while (i < snap->count || j < n) {
		int c = i == snap->count ? 1 : j == n ? -1
			: snapshot__key_cmp(&snap->entries[i].key, &rows[j].key);

		if (c < 0) {
			to[out++] = snap->entries[i++];
		} else if (c > 0) {
			to[out++] = rows[j++];
		} else {
			to[out] = snap->entries[i++];
			wait_stats__add(&to[out++].stats, &rows[j++].stats);
		}
	}
	free(snap->entries);
	snap->entries = to;
	snap->count = snap->sealed = out;
	snap->cap = cap;
	return 0;
}

void snapshot__rekey(struct snapshot *snap,
		     void (*fn)(void *ctx, struct sp_key *key), void *ctx)
{
	for (size_t i = 0; i < snap->count; i++)
		fn(ctx, &snap->entries[i].key);
	for (size_t i = 0; i < snap->n_moves; i++) {
		fn(ctx, &snap->moves[i].from);
		fn(ctx, &snap->moves[i].to);
	}
	snap->sealed = 0;	/* new keys: no prefix known sorted */
	snapshot__seal(snap);
}

/* v * num / den, rounded to the nearest. */
static uint64_t snapshot__scaled(uint64_t v, uint64_t num, uint64_t den)
{
	return (uint64_t)(((unsigned __int128)v * num + den / 2) / den);
}

void snapshot__scale(struct snapshot *snap, uint64_t num, uint64_t den)
{
	if (!den || num == den)
		return;
	for (size_t i = 0; i < snap->count; i++) {
		struct snapshot_entry *e = &snap->entries[i];

		e->count = snapshot__scaled(e->count, num, den);
		e->wait_ns = snapshot__scaled(e->wait_ns, num, den);
		e->failed = snapshot__scaled(e->failed, num, den);
		e->failed_ns = snapshot__scaled(e->failed_ns, num, den);
		e->futile = snapshot__scaled(e->futile, num, den);
		e->hold_count = snapshot__scaled(e->hold_count, num, den);
		e->hold_ns = snapshot__scaled(e->hold_ns, num, den);
		for (size_t j = 0; j < SP_HIST_SLOTS; j++)
			e->hist[j] = snapshot__scaled(e->hist[j], num, den);
	}
}

size_t snapshot__count(const struct snapshot *snap)
{
	return snap->count;
}

const struct snapshot_entry *snapshot__entries(const struct snapshot *snap)
{
	return snap->entries;
}

/* Counters only grow; guard anyway against a reset map. */
static uint64_t growth(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

static const struct snapshot_entry *
snapshot__find(const struct snapshot *snap, const struct sp_key *key)
{
	size_t lo = 0, hi = snap->sealed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = snapshot__key_cmp(key, &snap->entries[mid].key);

		if (!c)
			return &snap->entries[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Where a row of prev is counted in cur: its key, or the one it moved to. */
static const struct sp_key *snapshot__moved(const struct snapshot *cur,
					    const struct sp_key *key)
{
	size_t lo = 0, hi = cur->n_moves;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = snapshot__key_cmp(key, &cur->moves[mid].from);

		if (!c)
			return &cur->moves[mid].to;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return key;
}

/*
 * prev with its rows under the keys cur counts them under; sealed.  The
 * rows that stay keep prev's order, and the few that moved are sorted
 * alone and merged in (snapshot__seal): a read that folds one exited
 * thread does not sort every row again.
 */
static int snapshot__rekeyed(const struct snapshot *prev,
			     const struct snapshot *cur, struct snapshot **out)
{
	struct snapshot *moved;
	size_t n_moved = 0, stay = 0;
	int err = snapshot__new(&moved);

	if (err)
		return err;
	if (prev->count && array__grow(&moved->entries, &moved->cap,
				       prev->count, sizeof(*moved->entries))) {
		snapshot__free(moved);
		return -ENOMEM;
	}
	/* One lookup a row: those that stay from the front, in prev's
	 * order; those that moved from the back (the seal sorts them). */
	for (size_t i = 0; i < prev->count; i++) {
		const struct sp_key *to = snapshot__moved(cur,
							  &prev->entries[i].key);
		struct snapshot_entry *slot;

		if (to == &prev->entries[i].key) {
			moved->entries[stay++] = prev->entries[i];
			continue;
		}
		slot = &moved->entries[prev->count - ++n_moved];
		*slot = prev->entries[i];
		slot->key = *to;
	}
	moved->count = prev->count;
	/* prev sealed: what stayed is sorted and unique. */
	moved->sealed = prev->sealed == prev->count ? stay : 0;
	snapshot__seal(moved);
	*out = moved;
	return 0;
}

/*
 * The rows prev holds under keys cur moved rows to: the moved rows under
 * their new keys, with prev's own row of that key (unless it moved too);
 * sealed.  A read moves a few rows: prev is not copied for them.
 */
static int snapshot__moved_rows(const struct snapshot *prev,
				const struct snapshot *cur,
				struct snapshot **out)
{
	struct snapshot *moved;
	int err = snapshot__new(&moved);

	for (size_t i = 0; !err && i < cur->n_moves; i++) {
		const struct snapshot_entry *from =
			snapshot__find(prev, &cur->moves[i].from);
		struct snapshot_entry *e;

		if (!from)
			continue;
		e = snapshot__append(moved);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		*e = *from;
		e->key = cur->moves[i].to;
	}
	if (err) {
		snapshot__free(moved);
		return err;
	}
	snapshot__seal(moved);
	for (size_t i = 0; i < moved->count; i++) {
		const struct sp_key *k = &moved->entries[i].key;
		const struct snapshot_entry *own = snapshot__find(prev, k);

		if (own && snapshot__moved(cur, k) == k)
			wait_stats__add(&moved->entries[i].stats, &own->stats);
	}
	*out = moved;
	return 0;
}

/* The growth of c over p (NULL: none before), or false when none. */
static bool snapshot__growth(const struct snapshot_entry *c,
			     const struct snapshot_entry *p,
			     struct snapshot_entry *d)
{
	*d = *c;
	if (p) {
		d->count = growth(c->count, p->count);
		d->wait_ns = growth(c->wait_ns, p->wait_ns);
		d->failed = growth(c->failed, p->failed);
		d->failed_ns = growth(c->failed_ns, p->failed_ns);
		d->futile = growth(c->futile, p->futile);
		for (size_t k = 0; k < SP_HIST_SLOTS; k++)
			d->hist[k] = growth(c->hist[k], p->hist[k]);
		d->hold_count = growth(c->hold_count, p->hold_count);
		d->hold_ns = growth(c->hold_ns, p->hold_ns);
	}
	if (!d->count && !d->wait_ns && !d->failed && !d->hold_count &&
	    !d->futile)
		return false;
	/*
	 * The window's own maximum; a call that ended between the window
	 * switch and the read is in the next window's maximum, but if it
	 * raised the all-time maximum it is this one's.
	 */
	d->max_ns = c->window_max_ns;
	if ((!p || c->max_ns > p->max_ns) && c->max_ns > d->max_ns)
		d->max_ns = c->max_ns;
	d->hold_max_ns = c->hold_window_max_ns;
	if ((!p || c->hold_max_ns > p->hold_max_ns) &&
	    c->hold_max_ns > d->hold_max_ns)
		d->hold_max_ns = c->hold_max_ns;
	return true;
}

/* Where a sorted walk finds the entries of prev, in ascending keys. */
struct snapshot_cursor {
	const struct snapshot *snap;
	size_t at;
	bool linear;	/* keys asked in ascending order, snap sealed */
};

/* The entry of key, for ascending keys: one pass down the snapshot. */
static const struct snapshot_entry *
snapshot__cursor_find(struct snapshot_cursor *c, const struct sp_key *key)
{
	const struct snapshot *s = c->snap;

	if (!c->linear)
		return s ? snapshot__find(s, key) : NULL;
	while (s && c->at < s->count &&
	       snapshot__key_cmp(&s->entries[c->at].key, key) < 0)
		c->at++;
	if (s && c->at < s->count &&
	    !snapshot__key_cmp(&s->entries[c->at].key, key))
		return &s->entries[c->at];
	return NULL;
}

/*
 * cur and prev sealed (every read's are): one pass down both, as a
 * merge, where a binary search of prev for each of cur's rows cost a
 * server most of a read.  Rows that moved are looked up in the few
 * rows moved_rows made.
 */
int snapshot__delta(const struct snapshot *cur, const struct snapshot *prev,
		    struct snapshot **out)
{
	struct snapshot *delta, *moved = NULL;
	bool linear = cur->sealed == cur->count &&
		      (!prev || prev->sealed == prev->count);
	struct snapshot_cursor in_prev = { prev, 0, linear };
	struct snapshot_cursor in_moved = { NULL, 0, linear };
	int err;

	if (prev && cur->n_moves) {
		err = snapshot__moved_rows(prev, cur, &moved);
		if (err)
			return err;
		in_moved.snap = moved;
	}
	err = snapshot__new(&delta);
	if (err) {
		snapshot__free(moved);
		return err;
	}
	for (size_t i = 0; i < cur->count; i++) {
		const struct snapshot_entry *c = &cur->entries[i];
		const struct snapshot_entry *p = snapshot__cursor_find(&in_moved,
								       &c->key);
		const struct snapshot_entry *own = snapshot__cursor_find(&in_prev,
									 &c->key);
		struct snapshot_entry d, *slot;

		/* prev's row of this key counts here unless it moved. */
		if (!p && own && (!cur->n_moves ||
				  snapshot__moved(cur, &c->key) == &c->key))
			p = own;
		if (!snapshot__growth(c, p, &d))
			continue;
		slot = snapshot__append(delta);
		if (!slot) {
			snapshot__free(delta);
			snapshot__free(moved);
			return -ENOMEM;
		}
		*slot = d;
	}
	snapshot__free(moved);
	snapshot__seal(delta);	/* in cur's order: sorted already */
	*out = delta;
	return 0;
}

int snapshot__follow(struct snapshot **kept, const struct snapshot *cur)
{
	struct snapshot *moved;
	int err;

	if (!*kept || !cur->n_moves)
		return 0;
	err = snapshot__rekeyed(*kept, cur, &moved);
	if (err)
		return err;
	snapshot__free(*kept);
	*kept = moved;
	return 0;
}

/* Both sorted by key and unique: one pass, no sort. */
static bool snapshot__is_sealed(const struct snapshot *snap)
{
	return !snap || snap->sealed == snap->count;
}

/*
 * a and b sealed (every read's are): one pass down both, as a merge
 * sort's last step.  Appending both and sorting again cost a server a
 * sort of every row it ever saw at each read.
 */
static int snapshot__merge_sealed(const struct snapshot *a,
				  const struct snapshot *b,
				  struct snapshot *sum)
{
	size_t na = a ? a->count : 0, nb = b ? b->count : 0, i = 0, j = 0;

	if (na + nb && array__grow(&sum->entries, &sum->cap, na + nb,
				   sizeof(*sum->entries)))
		return -ENOMEM;
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1
			: snapshot__key_cmp(&a->entries[i].key,
					    &b->entries[j].key);

		if (c < 0) {
			sum->entries[sum->count++] = a->entries[i++];
		} else if (c > 0) {
			sum->entries[sum->count++] = b->entries[j++];
		} else {
			struct snapshot_entry *e = &sum->entries[sum->count++];

			*e = a->entries[i++];
			wait_stats__add(&e->stats, &b->entries[j++].stats);
		}
	}
	sum->sealed = sum->count;
	return 0;
}

int snapshot__merge(const struct snapshot *a, const struct snapshot *b,
		    struct snapshot **out)
{
	const struct snapshot *parts[] = { a, b };
	struct snapshot *sum;
	int err = snapshot__new(&sum);

	if (err)
		return err;
	if (snapshot__is_sealed(a) && snapshot__is_sealed(b)) {
		err = snapshot__merge_sealed(a, b, sum);
		if (err) {
			snapshot__free(sum);
			return err;
		}
		*out = sum;
		return 0;
	}
	for (size_t p = 0; p < 2; p++) {
		for (size_t i = 0; parts[p] && i < parts[p]->count; i++) {
			struct snapshot_entry *slot = snapshot__append(sum);

			if (!slot) {
				snapshot__free(sum);
				return -ENOMEM;
			}
			*slot = parts[p]->entries[i];
		}
	}
	snapshot__seal(sum);
	*out = sum;
	return 0;
}
