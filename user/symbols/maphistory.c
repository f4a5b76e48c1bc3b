// SPDX-License-Identifier: GPL-2.0
/*
 * A process's code mappings over time, for naming addresses after their
 * library is unloaded.
 *
 * Chosen: the current list, plus the entries that left it, each kept once
 * (an entry unmapped again moves to the newest place) and at most
 * max_gone of them; paths are interned, so a name handed out stays valid
 * while the entries that held it come and go.  A target that dlopens and
 * dlcloses one library keeps one unmapped entry and one path however
 * often it does.
 *
 * Rejected: a copy of the whole list at each change (what the symbolizer
 * kept before: every "generation" of the maps, for as long as the run).
 * Each load and each unload made one, with the capacity of the full maps
 * file behind it: over 2,400 dlopen/dlclose cycles of a target
 * (test_dlchurn.py) syncprof's VmRSS grew by 8.4 MB in contended mode and
 * 9.7 MB in full mode (3.5 and 4.0 KB a cycle); with this list, by 16
 * and 32 KB.
 *
 * Lookups: the current list by binary search, the unmapped ones newest
 * first by a linear scan (bounded; the symbolizer caches results by
 * address, so it runs once per address).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "maphistory.h"

struct maphistory {
	struct procmaps_entry *now;	/* sorted by start */
	size_t n_now;
	struct procmaps_entry *gone;	/* oldest first */
	size_t n_gone, cap_gone, max_gone;
	char **paths;			/* interned: open addressing */
	size_t n_paths, cap_paths;	/* cap: a power of two */
};

int maphistory__new(size_t max_gone, struct maphistory **out)
{
	struct maphistory *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->max_gone = max_gone;
	*out = h;
	return 0;
}

void maphistory__free(struct maphistory *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->cap_paths; i++)
		free(h->paths[i]);
	free(h->paths);
	free(h->now);
	free(h->gone);
	free(h);
}

static uint64_t path_hash(const char *s)
{
	uint64_t x = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (*s)
		x = (x ^ (unsigned char)*s++) * 0x100000001b3ull;
	return x;
}

/* The slot that holds s, or the empty one where it would go. */
static char **path_slot(char **table, size_t cap, const char *s)
{
	size_t i = path_hash(s) & (cap - 1);

	while (table[i] && strcmp(table[i], s))
		i = (i + 1) & (cap - 1);
	return &table[i];
}

static int maphistory__grow_paths(struct maphistory *h)
{
	size_t cap = h->cap_paths ? h->cap_paths * 2 : 64;
	char **table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap_paths; i++)
		if (h->paths[i])
			*path_slot(table, cap, h->paths[i]) = h->paths[i];
	free(h->paths);
	h->paths = table;
	h->cap_paths = cap;
	return 0;
}

/* The one copy of path; NULL: no memory. */
static const char *maphistory__intern(struct maphistory *h, const char *path)
{
	char **slot;

	if ((h->n_paths + 1) * 2 > h->cap_paths && maphistory__grow_paths(h))
		return NULL;
	slot = path_slot(h->paths, h->cap_paths, path);
	if (!*slot) {
		*slot = strdup(path);
		if (!*slot)
			return NULL;
		h->n_paths++;
	}
	return *slot;
}

/* Same mapping: interned paths compare by pointer. */
static bool same_entry(const struct procmaps_entry *a,
		       const struct procmaps_entry *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->dev == b->dev &&
	       a->inode == b->inode && a->deleted == b->deleted &&
	       a->path == b->path;
}

/* The entry of v (sorted by start) that holds addr, or NULL. */
static const struct procmaps_entry *find_sorted(const struct procmaps_entry *v,
						size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < v[mid].start)
			hi = mid;
		else if (addr >= v[mid].end)
			lo = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

/* e left the current list: kept once, as the newest unmapped entry. */
static int maphistory__retire(struct maphistory *h,
			      const struct procmaps_entry *e)
{
	size_t i;

	if (!h->max_gone)
		return 0;
	for (i = 0; i < h->n_gone && !same_entry(&h->gone[i], e); i++)
		;
	if (i < h->n_gone) {
		memmove(&h->gone[i], &h->gone[i + 1],
			(h->n_gone - i - 1) * sizeof(*h->gone));
		h->n_gone--;
	} else if (h->n_gone == h->max_gone) {
		memmove(&h->gone[0], &h->gone[1],
			(h->n_gone - 1) * sizeof(*h->gone));
		h->n_gone--;
	} else if (array__grow(&h->gone, &h->cap_gone, h->n_gone + 1,
			       sizeof(*h->gone))) {
		return -ENOMEM;
	}
	h->gone[h->n_gone++] = *e;
	return 0;
}

int maphistory__update(struct maphistory *h, const struct procmaps *maps)
{
	size_t n = 0, count = procmaps__count(maps);
	struct procmaps_entry *next = calloc(count + 1, sizeof(*next));
	bool changed;

	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!e->exec || e->path[0] != '/')
			continue;
		next[n] = *e;
		next[n].path = maphistory__intern(h, e->path);
		if (!next[n].path) {
			free(next);
			return -ENOMEM;
		}
		n++;
	}
	changed = n != h->n_now;
	for (size_t i = 0; !changed && i < n; i++)
		changed = !same_entry(&next[i], &h->now[i]);
	if (!changed) {
		free(next);
		return 0;
	}
	for (size_t i = 0; i < h->n_now; i++) {
		const struct procmaps_entry *kept =
			find_sorted(next, n, h->now[i].start);

		if (kept && same_entry(kept, &h->now[i]))
			continue;
		if (maphistory__retire(h, &h->now[i])) {
			free(next);
			return -ENOMEM;
		}
	}
	free(h->now);
	h->now = next;
	h->n_now = n;
	return 1;
}

const struct procmaps_entry *maphistory__find(const struct maphistory *h,
					      uint64_t addr)
{
	const struct procmaps_entry *e = find_sorted(h->now, h->n_now, addr);

	for (size_t i = h->n_gone; !e && i-- > 0;)
		if (addr >= h->gone[i].start && addr < h->gone[i].end)
			e = &h->gone[i];
	return e;
}

size_t maphistory__current(const struct maphistory *h)
{
	return h->n_now;
}

size_t maphistory__gone(const struct maphistory *h)
{
	return h->n_gone;
}
