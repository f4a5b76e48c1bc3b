// SPDX-License-Identifier: GPL-2.0
/*
 * --why's charges as read from the map (see whycharges.h): a flat array
 * of its entries, sorted by key, so that a window's delta finds each
 * entry of the read before by bsearch.  What a report row is charged:
 * report/whyrows.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "whycharges.h"

struct why {
	struct why_entry *items;
	size_t n, cap;
	uint64_t cut, dropped;
};

int why__new(struct why **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void why__free(struct why *w)
{
	if (!w)
		return;
	free(w->items);
	free(w);
}

int why__add(struct why *w, const struct sp_why_key *key,
	     const struct sp_why_value *value)
{
	int err = array__grow(&w->items, &w->cap, w->n + 1, sizeof(*w->items));

	if (err)
		return err;
	w->items[w->n++] = (struct why_entry){ *key, *value };
	return 0;
}

void why__set_counts(struct why *w, uint64_t cut, uint64_t dropped)
{
	w->cut = cut;
	w->dropped = dropped;
}

void why__counts(const struct why *w, uint64_t *cut, uint64_t *dropped)
{
	*cut = w ? w->cut : 0;
	*dropped = w ? w->dropped : 0;
}

/* The key has no padding (syncprof.h): bytes order it. */
static int why__key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sp_why_key));
}

void why__seal(struct why *w)
{
	size_t out = 0;

	if (w->n)
		qsort(w->items, w->n, sizeof(*w->items), why__key_cmp);
	/* Keys a rekey made equal: one entry. */
	for (size_t i = 0; i < w->n; i++) {
		struct why_entry *e = &w->items[i];
		struct why_entry *last = out ? &w->items[out - 1] : NULL;

		if (last && !why__key_cmp(&last->key, &e->key)) {
			for (size_t k = 0; k < SP_WHY__COUNT; k++) {
				last->value.ns[k] += e->value.ns[k];
				last->value.waits[k] += e->value.waits[k];
			}
			continue;
		}
		w->items[out++] = *e;
	}
	w->n = out;
}

void why__rekey(struct why *w, void (*fn)(void *ctx, struct sp_key *key),
		void *ctx)
{
	for (size_t i = 0; i < w->n; i++) {
		struct sp_why_key *k = &w->items[i].key;
		struct sp_key site = { .callsite = k->site, .pid = k->pid };

		fn(ctx, &k->row);
		if (k->site) {
			fn(ctx, &site);
			k->site = site.callsite;
		}
	}
	why__seal(w);
}

int why__delta(const struct why *cur, const struct why *prev,
	       struct why **out)
{
	struct why *d;
	int err = why__new(&d);

	for (size_t i = 0; !err && i < cur->n; i++) {
		const struct why_entry *e = &cur->items[i], *p = NULL;
		struct sp_why_value v = e->value;
		bool any = false;

		if (prev && prev->n)
			p = bsearch(&e->key, prev->items, prev->n,
				    sizeof(*prev->items), why__key_cmp);
		for (size_t k = 0; k < SP_WHY__COUNT; k++) {
			uint64_t was = p ? p->value.ns[k] : 0;

			v.ns[k] = v.ns[k] > was ? v.ns[k] - was : 0;
			any |= v.ns[k] != 0;
		}
		for (size_t k = 0; k < SP_WHY__COUNT; k++)
			v.waits[k] -= p && p->value.waits[k] <= v.waits[k]
				      ? p->value.waits[k] : 0;
		if (any)
			err = why__add(d, &e->key, &v);
	}
	if (err) {
		why__free(d);
		return err;
	}
	d->cut = cur->cut - (prev && prev->cut <= cur->cut ? prev->cut : 0);
	d->dropped = cur->dropped -
		     (prev && prev->dropped <= cur->dropped ? prev->dropped : 0);
	why__seal(d);
	*out = d;
	return 0;
}

const struct why_entry *why__entries(const struct why *w, size_t *n)
{
	*n = w->n;
	return w->items;
}
