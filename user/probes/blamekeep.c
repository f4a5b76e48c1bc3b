// SPDX-License-Identifier: GPL-2.0
/*
 * --blame's rows of exited threads and processes, kept out of the map.
 *
 * A blame row is keyed by the releasing thread and process, and by the
 * waiter's process when it is another (bpf/measure/blame.bpf.h): once
 * one of them has exited, no charge adds to it.  Left in the map, such
 * rows filled it under --all within a minute of a storm of short
 * programs, and every later charge was lost (counted in
 * charges_lost.blame).  So at each read that folds the stats map's rows
 * (mapread.c), the blame rows of the threads and processes that exited
 * leave the map with their last value and are kept here, under the very
 * key they had, and every later read of the map adds them.
 *
 * Chosen: the row's own key.  The map is read by more than one reader
 * (a report's delta, the served releasers' profile and its windows),
 * each at its own pace: a row that kept its key reads the same to all
 * of them, and every delta stays exact with no move to tell.  Rejected:
 * folding them all as fold.c folds the stats rows (no thread, canonical
 * stacks): a move is told only to the snapshot of the read that makes
 * it, and a reader whose last read was another's would count the row's
 * history twice.  Rejected: handing them to the next read only, as the
 * caused map does (one reader): the other readers would lose them.
 *
 * The bound: BLAMEKEEP_MAX rows under their own keys (120 bytes each),
 * which a storm of short programs under --all reaches in minutes (a row
 * or two a process).  Beyond it, a row is kept as fold.c keeps the rows
 * of forgotten processes: under process 0, no thread, its call site and
 * lock as canonical addresses (translated now, while its process is
 * still known) and its stack as its canonical frames' id, so that the
 * runs of one program share their rows; at most BLAMEKEEP_MERGED_MAX
 * of those, beyond which a row joins the "other" row of its lock type
 * (no object, call site or stack), counted (blamekeep merged).  Each
 * such move is recorded in the map's next read, so that a reader
 * reading in turn counts the row once; a reader that skipped that read
 * counts the moved row's earlier charges again in its next delta.  The
 * moves wait for that read: none before the map's first read (no reader
 * has a row to move), at most BLAMEKEEP_MAX of them (--serve reads the
 * map only when /debug/pprof/mutex is asked; beyond, the next delta
 * counts those rows' earlier charges again).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

#define BLAMEKEEP_MAX 16384
#define BLAMEKEEP_MERGED_MAX 4096

struct blamekeep {
	struct sp_key *keys;		/* kept under their own keys */
	struct sp_value *values;
	size_t n, cap, cap_values;
	/* Beyond BLAMEKEEP_MAX: by program (process 0), and "other" rows;
	   open addressing, cap a power of two. */
	struct sp_key *other_keys;
	struct sp_value *other_values;
	bool *other_used;
	size_t n_other, cap_other;
	void (*canon)(void *p, struct sp_key *key);	/* stacks' */
	struct sp_key *moved;		/* since the last read: from, to */
	size_t n_moved, cap_moved;
	bool read;			/* the map was read once */
	uint64_t merged;
};

/* Adds v's counts to c (the "other" rows: no window maxima). */
static void blamekeep__sum(struct sp_value *c, const struct sp_value *v)
{
	c->count += v->count;
	c->wait_ns += v->wait_ns;
	c->failed += v->failed;
	c->failed_ns += v->failed_ns;
	c->futile += v->futile;
	if (v->max_ns > c->max_ns)
		c->max_ns = v->max_ns;
}

/* Appends key, v to a pair of arrays grown together. */
static int blamekeep__append(struct sp_key **keys, struct sp_value **values,
			     size_t *n, size_t *cap, size_t *cap_values,
			     const struct sp_key *key,
			     const struct sp_value *v)
{
	if (array__grow(keys, cap, *n + 1, sizeof(**keys)) ||
	    array__grow(values, cap_values, *n + 1, sizeof(**values)))
		return -ENOMEM;
	(*keys)[*n] = *key;
	(*values)[*n] = *v;
	(*n)++;
	return 0;
}

static size_t blamekeep__hash(const struct sp_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return (size_t)h;
}

/* The slot of key among the merged rows (free if it has none). */
static size_t blamekeep__slot(const struct blamekeep *k,
			      const struct sp_key *key)
{
	size_t i = blamekeep__hash(key) & (k->cap_other - 1);

	while (k->other_used[i] &&
	       memcmp(&k->other_keys[i], key, sizeof(*key)))
		i = (i + 1) & (k->cap_other - 1);
	return i;
}

static int blamekeep__grow(struct blamekeep *k)
{
	struct blamekeep old = *k;
	size_t cap = k->cap_other ? 2 * k->cap_other : 64;

	k->other_keys = calloc(cap, sizeof(*k->other_keys));
	k->other_values = calloc(cap, sizeof(*k->other_values));
	k->other_used = calloc(cap, sizeof(*k->other_used));
	if (!k->other_keys || !k->other_values || !k->other_used) {
		free(k->other_keys);
		free(k->other_values);
		free(k->other_used);
		*k = old;
		return -ENOMEM;
	}
	k->cap_other = cap;
	for (size_t i = 0; i < old.cap_other; i++) {
		size_t j;

		if (!old.other_used[i])
			continue;
		j = blamekeep__slot(k, &old.other_keys[i]);
		k->other_used[j] = true;
		k->other_keys[j] = old.other_keys[i];
		k->other_values[j] = old.other_values[i];
	}
	free(old.other_keys);
	free(old.other_values);
	free(old.other_used);
	return 0;
}

/* The key a row beyond BLAMEKEEP_MAX is kept under (see above). */
static struct sp_key blamekeep__program_key(struct probes *p,
					    const struct sp_key *key)
{
	struct sp_key m = *key;
	pid_t waiter = key->owner_tid ? (pid_t)key->owner_tid
				      : (pid_t)key->pid;

	if (!p->several)
		return (struct sp_key){ .type = key->type, .pid = key->pid,
					.object = key->object,
					.callsite = key->callsite,
					.stack_id = key->stack_id };
	if (p->translate) {
		m.callsite = p->translate(p->translate_ctx, (pid_t)key->pid,
					  key->callsite);
		m.object = p->translate(p->translate_ctx, waiter, key->object);
	}
	p->blame_kept->canon(p, &m);	/* by the releaser's frames */
	m.tid = 0;
	m.owner_tid = 0;
	m.pid = 0;
	return m;
}

static int blamekeep__merge(struct probes *p, const struct sp_key *key,
			    const struct sp_value *v)
{
	struct blamekeep *k = p->blame_kept;
	struct sp_key to = blamekeep__program_key(p, key);
	size_t i;

	if (array__grow(&k->moved, &k->cap_moved, k->n_moved + 2,
			sizeof(*k->moved)))
		return -ENOMEM;
	if ((k->n_other + 1) * 4 > k->cap_other * 3 && blamekeep__grow(k))
		return -ENOMEM;
	i = blamekeep__slot(k, &to);
	if (!k->other_used[i] && k->n_other >= BLAMEKEEP_MERGED_MAX) {
		to = (struct sp_key){ .type = key->type };
		i = blamekeep__slot(k, &to);
		k->merged++;
	}
	if (!k->other_used[i]) {
		k->other_used[i] = true;
		k->other_keys[i] = to;
		memset(&k->other_values[i], 0, sizeof(k->other_values[i]));
		k->n_other++;
	}
	blamekeep__sum(&k->other_values[i], v);
	if (!k->read || k->n_moved >= 2 * BLAMEKEEP_MAX)
		return 0;
	k->moved[k->n_moved++] = *key;
	k->moved[k->n_moved++] = to;
	return 0;
}

/* key's last value, out of the map and kept. */
static int blamekeep__take(struct probes *p, int fd, const struct sp_key *key)
{
	struct blamekeep *k = p->blame_kept;
	struct sp_value last;

	if (bpf_map_lookup_and_delete_elem(fd, key, &last))
		return 0;	/* gone already */
	if (k->n >= BLAMEKEEP_MAX)
		return blamekeep__merge(p, key, &last);
	return blamekeep__append(&k->keys, &k->values, &k->n, &k->cap,
				 &k->cap_values, key, &last);
}

int probes__fold_blame(struct probes *p, const __u32 *dead, size_t n_dead,
		       probes_told_gone_fn told,
		       void (*canon)(void *p, struct sp_key *key))
{
	int fd = bpf_map__fd(p->skel->maps.blame);

	if (!p->blame || (!n_dead && !(told && (p->n_gone[0] ||
						 p->n_gone[1]))))
		return 0;
	if (!p->blame_kept) {
		p->blame_kept = calloc(1, sizeof(*p->blame_kept));
		if (!p->blame_kept)
			return -ENOMEM;
	}
	p->blame_kept->canon = canon;
	return probes__take_gone_charges(p, fd, dead, n_dead, told,
					 blamekeep__take);
}

int probes__read_blame(struct probes *p, struct snapshot **out)
{
	struct blamekeep *k = p->blame_kept;
	uint64_t open = p->window - 1;
	int err = probes__read_charges(p, bpf_map__fd(p->skel->maps.blame),
				       out);

	if (err)
		return err;
	if (!k) {
		p->blame_kept = k = calloc(1, sizeof(*k));
		if (!k) {
			snapshot__free(*out);
			*out = NULL;
			return -ENOMEM;
		}
	}
	k->read = true;
	for (size_t i = 0; !err && i < k->n; i++)
		err = snapshot__add(*out, &k->keys[i], &k->values[i], 1, open);
	for (size_t i = 0; !err && i < k->cap_other; i++)
		if (k->other_used[i])
			err = snapshot__add(*out, &k->other_keys[i],
					    &k->other_values[i], 1, open);
	for (size_t i = 0; !err && i + 1 < k->n_moved; i += 2)
		err = snapshot__add_move(*out, &k->moved[i], &k->moved[i + 1]);
	if (err) {
		snapshot__free(*out);
		*out = NULL;
		return err;
	}
	k->n_moved = 0;
	snapshot__seal(*out);
	return 0;
}

void probes__blame_kept(const struct probes *p, size_t *rows,
			uint64_t *merged)
{
	const struct blamekeep *k = p->blame_kept;

	*rows = k ? k->n + k->n_other : 0;
	*merged = k ? k->merged : 0;
}

void probes__blame_kept_free(struct probes *p)
{
	struct blamekeep *k = p->blame_kept;

	if (!k)
		return;
	free(k->keys);
	free(k->values);
	free(k->other_keys);
	free(k->other_values);
	free(k->other_used);
	free(k->moved);
	free(k);
	p->blame_kept = NULL;
}
