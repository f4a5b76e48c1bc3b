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
 * The bound: a row stays under its own key while its processes are
 * named (procset.c keeps the newest exited: at most 1,280), so that a
 * profile names its process and PID as the waits' rows do; once the
 * releaser's process or the waiter's is forgotten (probes__forget_pids,
 * at the read that forgets their waits' rows), the row is folded, as
 * fold.c folds the rows of forgotten processes: under process 0, no
 * thread, its call site and lock as canonical addresses and its stack as
 * its canonical frames' id (all translated when the row was taken,
 * while its process was still known), so that the runs of one program
 * share their rows; at most BLAMEKEEP_MERGED_MAX of those, beyond which
 * a row joins the "other" row of its lock type (no object, call site or
 * stack), counted (blamekeep merged).  A backstop bounds the own rows
 * by their count too, an eighth of --map-size (16,384 under --all; at
 * least BLAMEKEEP_OWN_MIN, so that a small table keeps the rows of the
 * named processes as a big one does): a long-lived releaser whose waiters come
 * and go would otherwise keep its rows forever; beyond it the oldest
 * quarter is folded.  Nothing is dropped: a folded row's charges are
 * added to the row it joins.  Each such move is recorded in the map's
 * next read, so that a reader reading in turn counts the row once; a
 * reader that skipped that read counts the moved row's earlier charges
 * again in its next delta.  The moves wait for that read: none before
 * the map's first read (no reader has a row to move), at most twice the
 * own rows' bound of them (--serve reads the map only when
 * /debug/pprof/mutex is asked; beyond, the next delta counts those
 * rows' earlier charges again).
 *
 * Before, the rows were kept under their own keys until 16,384 of them,
 * whatever their age: a storm of short programs (about 5 rows a
 * process) filled them only after some 3,300 processes, an hour at a few
 * a second, and each read of the map copied them all (512 bytes a row
 * in a snapshot, in several copies while a mutex profile is made):
 * syncprof's VmRSS rose for that hour.  Bounded by the named processes,
 * they stop growing once 1,280 processes have exited.  Rejected: a
 * bound by count alone (2,048 rows, say): the rows of processes the
 * report still names would lose their PID in the profiles while their
 * waits keep it, and a run of --children with a bigger table would lose
 * them long before it filled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

#define BLAMEKEEP_OWN_SHARE 8		/* of --map-size */
#define BLAMEKEEP_OWN_MIN 4096		/* 3 rows a named exited process */
#define BLAMEKEEP_MERGED_MAX 4096

struct blamekeep {
	/* Kept under their own keys, oldest first, each with the key it
	   is folded under once it is among the oldest (prog). */
	struct sp_key *keys, *prog;
	struct sp_value *values;
	size_t n, cap, cap_values, cap_prog, max;
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
	uint64_t merged;		/* into "other" rows */
	uint64_t folded;		/* own rows folded by program */
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

static int blamekeep__merge(struct blamekeep *k, const struct sp_key *key,
			    const struct sp_key *prog,
			    const struct sp_value *v)
{
	struct sp_key to = *prog;
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
	if (!k->read || k->n_moved >= 2 * k->max)
		return 0;
	k->moved[k->n_moved++] = *key;
	k->moved[k->n_moved++] = to;
	return 0;
}

/*
 * The oldest quarter of the own rows folded by program (blamekeep__merge),
 * the rest moved to the front: 0 or -ENOMEM (then nothing moved).
 */
static int blamekeep__fold_oldest(struct blamekeep *k)
{
	size_t n = k->max / 4 ? k->max / 4 : 1, done = 0;
	int err = 0;

	if (n > k->n)
		n = k->n;
	while (done < n && !err) {
		err = blamekeep__merge(k, &k->keys[done], &k->prog[done],
				       &k->values[done]);
		done += !err;
	}
	memmove(k->keys, k->keys + done, (k->n - done) * sizeof(*k->keys));
	memmove(k->prog, k->prog + done, (k->n - done) * sizeof(*k->prog));
	memmove(k->values, k->values + done,
		(k->n - done) * sizeof(*k->values));
	k->n -= done;
	k->folded += done;
	return err;
}

/* key's last value, out of the map and kept. */
static int blamekeep__take(struct probes *p, int fd, const struct sp_key *key)
{
	struct blamekeep *k = p->blame_kept;
	struct sp_value last;
	struct sp_key prog;

	if (bpf_map_lookup_and_delete_elem(fd, key, &last))
		return 0;	/* gone already */
	/* Its program's key now, while its process is known. */
	prog = blamekeep__program_key(p, key);
	if (k->n >= k->max && blamekeep__fold_oldest(k))
		return blamekeep__merge(k, key, &prog, &last);
	if (array__grow(&k->prog, &k->cap_prog, k->n + 1, sizeof(*k->prog)))
		return blamekeep__merge(k, key, &prog, &last);
	k->prog[k->n] = prog;
	return blamekeep__append(&k->keys, &k->values, &k->n, &k->cap,
				 &k->cap_values, key, &last);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool blamekeep__forgotten(pid_t pid, const pid_t *pids, size_t n)
{
	return pid && bsearch(&pid, pids, n, sizeof(*pids), cmp_pid);
}

int probes__forget_blame(struct probes *p, pid_t *pids, size_t n)
{
	struct blamekeep *k = p->blame_kept;
	size_t out = 0;
	int err = 0;

	if (!k || !n || !k->n)
		return 0;
	qsort(pids, n, sizeof(*pids), cmp_pid);
	for (size_t i = 0; i < k->n; i++) {
		const struct sp_key *key = &k->keys[i];

		if (!err && (blamekeep__forgotten((pid_t)key->pid, pids, n) ||
			     blamekeep__forgotten((pid_t)key->owner_tid, pids,
						  n))) {
			err = blamekeep__merge(k, key, &k->prog[i],
					       &k->values[i]);
			if (!err) {
				k->folded++;
				continue;
			}
		}
		k->keys[out] = k->keys[i];
		k->prog[out] = k->prog[i];
		k->values[out] = k->values[i];
		out++;
	}
	k->n = out;
	return err;
}

/* The store, made at its first use: 0 or -ENOMEM. */
static int blamekeep__make(struct probes *p)
{
	struct blamekeep *k;

	if (p->blame_kept)
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->max = p->map_size / BLAMEKEEP_OWN_SHARE;
	if (k->max < BLAMEKEEP_OWN_MIN)
		k->max = BLAMEKEEP_OWN_MIN;
	p->blame_kept = k;
	return 0;
}

int probes__fold_blame(struct probes *p, const __u32 *dead, size_t n_dead,
		       probes_told_gone_fn told,
		       void (*canon)(void *p, struct sp_key *key))
{
	int fd = bpf_map__fd(p->skel->maps.blame);

	if (!p->blame || (!n_dead && !(told && (p->n_gone[0] ||
						 p->n_gone[1]))))
		return 0;
	if (blamekeep__make(p))
		return -ENOMEM;
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
	if (blamekeep__make(p)) {
		snapshot__free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	k = p->blame_kept;
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

void probes__blame_kept(const struct probes *p,
			struct probes_blame_kept *out)
{
	const struct blamekeep *k = p->blame_kept;

	*out = (struct probes_blame_kept){ 0 };
	if (!k)
		return;
	*out = (struct probes_blame_kept){
		.rows = k->n + k->n_other, .own = k->n, .own_max = k->max,
		.merged = k->merged, .folded = k->folded,
	};
}

void probes__blame_kept_free(struct probes *p)
{
	struct blamekeep *k = p->blame_kept;

	if (!k)
		return;
	free(k->keys);
	free(k->prog);
	free(k->values);
	free(k->other_keys);
	free(k->other_values);
	free(k->other_used);
	free(k->moved);
	free(k);
	p->blame_kept = NULL;
}
