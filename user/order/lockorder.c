// SPDX-License-Identifier: GPL-2.0
/*
 * --lock-order's reader: the kernel keeps every pair (held, then taken)
 * by objects and sites (bpf/measure/lockorder.bpf.h); this classes the
 * locks and feeds the order graph (lockgraph.c), which finds the cycles.
 *
 * A lock's class is its object when the object is named, a global or a
 * static, and the site that took it otherwise, as lockdep classes a
 * dynamically allocated lock by where it was set up: heap locks are many
 * and short-lived, and an address freed by one lock and reused by
 * another would join two unrelated classes into a false cycle.  Classes
 * are per process: two processes' locks never wait for each other.
 *
 * The kernel's map only grows, so each read sums every pair again and
 * the counts are totals since attach; an edge keeps its first pair as
 * the example a report shows.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "array.h"
#include "lockgraph.h"
#include "lockorder.h"
#include "syncprof.h"

struct lo_class {
	uint32_t pid;
	uint32_t by_site;
	uint64_t addr;
	uint64_t id;
};

struct lockorder {
	int map_fd;
	lockorder_named_fn named;
	void *ctx;
	void *classes;		/* tsearch tree of struct lo_class */
	uint64_t n_classes;
	struct lockgraph *graph;
	struct lockorder_edge *edges;	/* by the graph's edge index */
	size_t n_edges, cap_edges;
};

static int class_cmp(const void *a, const void *b)
{
	const struct lo_class *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->by_site != y->by_site)
		return x->by_site < y->by_site ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int lockorder__new(int map_fd, lockorder_named_fn named, void *ctx,
		   struct lockorder **out)
{
	struct lockorder *lo = calloc(1, sizeof(*lo));
	int err;

	if (!lo)
		return -ENOMEM;
	lo->map_fd = map_fd;
	lo->named = named;
	lo->ctx = ctx;
	err = lockgraph__new(&lo->graph);
	if (err) {
		free(lo);
		return err;
	}
	*out = lo;
	return 0;
}

void lockorder__free(struct lockorder *lo)
{
	if (!lo)
		return;
	tdestroy(lo->classes, free);
	lockgraph__free(lo->graph);
	free(lo->edges);
	free(lo);
}

/* The class of a lock of process pid, numbered as classes appear. */
static int class_of(struct lockorder *lo, uint32_t pid,
		    const struct lockorder_lock *lock, uint64_t *id)
{
	struct lo_class probe = { .pid = pid }, *item, **found;

	probe.by_site = !lo->named(lo->ctx, pid, lock->object);
	probe.addr = probe.by_site ? lock->site : lock->object;
	found = tfind(&probe, &lo->classes, class_cmp);
	if (found) {
		*id = (*found)->id;
		return 0;
	}
	item = malloc(sizeof(*item));
	if (!item)
		return -ENOMEM;
	*item = probe;
	item->id = lo->n_classes;
	if (!tsearch(item, &lo->classes, class_cmp)) {
		free(item);
		return -ENOMEM;
	}
	*id = lo->n_classes++;
	return 0;
}

int lockorder__add(struct lockorder *lo, const struct lockorder_edge *pair)
{
	unsigned int flags = 0;
	uint64_t from, to;
	size_t index;
	bool changed;
	int err;

	err = class_of(lo, pair->pid, &pair->held, &from);
	if (!err)
		err = class_of(lo, pair->pid, &pair->acquired, &to);
	if (err)
		return err;
	if (from == to)
		return 0;	/* a class taken under its own: no order */
	if (pair->held.type != SP_TYPE_RWLOCK_R)
		flags |= LOCKGRAPH_HELD_EXCLUSIVE;
	if (pair->acquired.type != SP_TYPE_RWLOCK_R)
		flags |= LOCKGRAPH_TAKEN_EXCLUSIVE;
	err = lockgraph__add(lo->graph, from, to, flags, &index, &changed);
	if (err)
		return err;
	if (index == lo->n_edges) {
		if (array__grow(&lo->edges, &lo->cap_edges, lo->n_edges + 1,
				sizeof(*lo->edges)))
			return -ENOMEM;
		lo->edges[lo->n_edges++] = *pair;
	} else {
		lo->edges[index].count += pair->count;
	}
	if (!changed)
		return 0;
	err = lockgraph__find_cycle(lo->graph, index);
	return err < 0 ? err : 0;
}

int lockorder__read(struct lockorder *lo)
{
	struct sp_order_key key, next;
	struct sp_order_edge value;
	void *prev = NULL;
	int err = 0;

	for (size_t i = 0; i < lo->n_edges; i++)
		lo->edges[i].count = 0;
	while (!bpf_map_get_next_key(lo->map_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(lo->map_fd, &key, &value))
			continue;	/* never deleted; a race with nothing */
		err = lockorder__add(lo, &(struct lockorder_edge){
			.held = { key.held, key.held_site, value.held_stack_id,
				  value.held_type },
			.acquired = { key.acquired, key.acquired_site,
				      value.acquired_stack_id,
				      value.acquired_type },
			.count = value.count,
			.pid = key.pid,
			.tid = value.tid,
		});
		if (err)
			break;
	}
	return err;
}

size_t lockorder__cycles(const struct lockorder *lo)
{
	const struct lockgraph_cycle *cycles;

	return lockgraph__cycles(lo->graph, &cycles);
}

size_t lockorder__cycle_len(const struct lockorder *lo, size_t i)
{
	const struct lockgraph_cycle *cycles;

	return i < lockgraph__cycles(lo->graph, &cycles) ? cycles[i].n : 0;
}

const struct lockorder_edge *lockorder__cycle_edge(const struct lockorder *lo,
						   size_t i, size_t k)
{
	const struct lockgraph_cycle *cycles;

	if (i >= lockgraph__cycles(lo->graph, &cycles) || k >= cycles[i].n)
		return NULL;
	return &lo->edges[cycles[i].edges[k]];
}
