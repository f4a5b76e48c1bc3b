/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --why: the charges the programs keep (bpf/measure/why.bpf.h), by the
 * waiter's stats key.  Read from the map as totals since attach; a
 * window is the difference of two reads.
 */
#ifndef SYNCPROF_WHYCHARGES_H
#define SYNCPROF_WHYCHARGES_H

#include <stddef.h>
#include <stdint.h>

#include "syncprof.h"

struct why;

/* One entry of the map. */
struct why_entry {
	struct sp_why_key key;
	struct sp_why_value value;
};

int why__new(struct why **out);
void why__free(struct why *w);
int why__add(struct why *w, const struct sp_why_key *key,
	     const struct sp_why_value *value);
/* Chains cut short and charges lost, since attach (SP_CNT_WHY_*). */
void why__set_counts(struct why *w, uint64_t cut, uint64_t dropped);
void why__counts(const struct why *w, uint64_t *cut, uint64_t *dropped);
/* After the adds: sorted for why__delta's lookups. */
void why__seal(struct why *w);
/*
 * Several processes: fn turns each key's addresses (the row's, and the
 * root's site in its process) into canonical ones; equal keys merge.
 */
void why__rekey(struct why *w, void (*fn)(void *ctx, struct sp_key *key),
		void *ctx);
/* cur - prev (prev NULL: cur), key by key, into a new sealed *out. */
int why__delta(const struct why *cur, const struct why *prev,
	       struct why **out);
/* The entries, sorted by key once sealed. */
const struct why_entry *why__entries(const struct why *w, size_t *n);

#endif
