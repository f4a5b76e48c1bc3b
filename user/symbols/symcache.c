// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer's cache: open addressing on (address, kind), grown at
 * three quarters full.  A cached call site's name costs 23 ns against
 * 2.5 us cold (docs/performance.md), where the miss walks DWARF.
 * Strings and frame arrays are owned here, not per entry: an answer
 * handed out stays valid until the symbolizer is freed, so renderers
 * keep pointers instead of copies.
 */
#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "symcache.h"

#define KIND_BITS 3

struct symcache {
	struct symcache_entry *table;
	size_t cap;		/* a power of two */
	size_t used;
	void **kept;		/* everything handed out, freed at the end */
	size_t n_kept;
	size_t kept_cap;
};

int symcache__new(struct symcache **out)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cap = 64;	/* grows: most processes name a few addresses */
	c->table = calloc(c->cap, sizeof(*c->table));
	if (!c->table) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_kept; i++)
		free(c->kept[i]);
	free(c->kept);
	free(c->table);
	free(c);
}

bool symcache__keep(struct symcache *c, void *p)
{
	if (array__grow(&c->kept, &c->kept_cap, c->n_kept + 1,
			sizeof(*c->kept))) {
		free(p);
		return false;
	}
	c->kept[c->n_kept++] = p;
	return true;
}

const char *symcache__own(struct symcache *c, char *s)
{
	return s && symcache__keep(c, s) ? s : NULL;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t cache_key(uint64_t addr, enum symcache_kind kind)
{
	return (addr << KIND_BITS | kind) + 1;	/* never 0 */
}

static struct symcache_entry *cache_slot(struct symcache_entry *table,
					 size_t cap, uint64_t key)
{
	size_t i = (size_t)hash64(key) & (cap - 1);

	while (table[i].key && table[i].key != key)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

static int symcache__grow(struct symcache *c)
{
	size_t cap = c->cap * 2;
	struct symcache_entry *table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++)
		if (c->table[i].key)
			*cache_slot(table, cap, c->table[i].key) = c->table[i];
	free(c->table);
	c->table = table;
	c->cap = cap;
	return 0;
}

struct symcache_entry *symcache__slot(struct symcache *c, uint64_t addr,
				      enum symcache_kind kind)
{
	if ((c->used + 1) * 4 > c->cap * 3 && symcache__grow(c))
		return NULL;
	return cache_slot(c->table, c->cap, cache_key(addr, kind));
}

void symcache__fill(struct symcache *c, struct symcache_entry *slot,
		    uint64_t addr, enum symcache_kind kind)
{
	slot->key = cache_key(addr, kind);
	c->used++;
}
