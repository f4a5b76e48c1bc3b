// SPDX-License-Identifier: GPL-2.0
/*
 * The lock-order graph, as lockdep keeps it: a node per lock class, an
 * edge per "held A, then took B", and a cycle is a possible deadlock
 * whether or not it ever happened.
 *
 * Cycles are looked for as edges arrive, only through the edge that is
 * new (or that gained a flag): every older cycle was found when its own
 * last edge came.  A breadth-first walk from the new edge's head back to
 * its tail finds the shortest cycle through it, which is the one a user
 * can read; lockdep reports the first one it finds the same way.  Rejected:
 * a full strongly-connected-components pass per read (Tarjan), which
 * finds every cycle at once but repeats the whole graph's work on every
 * report, and names components, not the cycles a user fixes.
 *
 * A cycle is kept once: its classes, rotated to start at the smallest,
 * are its identity.  The graph grows only (edges are never taken back
 * while syncprof runs), so what was reported stays true.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "lockgraph.h"

struct lg_node {
	uint64_t id;
	size_t *out;		/* edge indexes */
	size_t n_out, cap_out;
};

struct lg_edge {
	struct lockgraph_edge pub;
	size_t tail, head;	/* nodes */
};

struct lg_lookup {		/* tsearch's item: a class and its node */
	uint64_t id;
	size_t node;
};

struct lockgraph {
	void *index;		/* tsearch tree of struct lg_lookup */
	struct lg_node *nodes;
	size_t n_nodes, cap_nodes;
	struct lg_edge *edges;
	size_t n_edges, cap_edges;
	struct lockgraph_cycle *cycles;
	size_t n_cycles, cap_cycles;
};

static int lookup_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct lg_lookup *)a)->id;
	uint64_t y = ((const struct lg_lookup *)b)->id;

	return x < y ? -1 : x > y;
}

int lockgraph__new(struct lockgraph **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void lockgraph__free(struct lockgraph *g)
{
	if (!g)
		return;
	tdestroy(g->index, free);
	for (size_t i = 0; i < g->n_nodes; i++)
		free(g->nodes[i].out);
	for (size_t i = 0; i < g->n_cycles; i++)
		free(g->cycles[i].edges);
	free(g->nodes);
	free(g->edges);
	free(g->cycles);
	free(g);
}

/* The node of class id, made if new. */
static int node_of(struct lockgraph *g, uint64_t id, size_t *node)
{
	struct lg_lookup probe = { .id = id }, *item, **found;

	found = tfind(&probe, &g->index, lookup_cmp);
	if (found) {
		*node = (*found)->node;
		return 0;
	}
	if (array__grow(&g->nodes, &g->cap_nodes, g->n_nodes + 1,
			sizeof(*g->nodes)))
		return -ENOMEM;
	item = malloc(sizeof(*item));
	if (!item)
		return -ENOMEM;
	item->id = id;
	item->node = g->n_nodes;
	if (!tsearch(item, &g->index, lookup_cmp)) {
		free(item);
		return -ENOMEM;
	}
	g->nodes[g->n_nodes] = (struct lg_node){ .id = id };
	*node = g->n_nodes++;
	return 0;
}

int lockgraph__add(struct lockgraph *g, uint64_t from, uint64_t to,
		   unsigned int flags, size_t *index, bool *changed)
{
	struct lg_node *tail;
	size_t a, b;
	int err;

	if (from == to)
		return -EINVAL;
	err = node_of(g, from, &a);
	if (!err)
		err = node_of(g, to, &b);
	if (err)
		return err;
	tail = &g->nodes[a];
	for (size_t i = 0; i < tail->n_out; i++) {
		struct lg_edge *e = &g->edges[tail->out[i]];

		if (e->head != b)
			continue;
		*index = tail->out[i];
		*changed = (e->pub.flags | flags) != e->pub.flags;
		e->pub.flags |= flags;
		return 0;
	}
	if (array__grow(&g->edges, &g->cap_edges, g->n_edges + 1,
			sizeof(*g->edges)) ||
	    array__grow(&tail->out, &tail->cap_out, tail->n_out + 1,
			sizeof(*tail->out)))
		return -ENOMEM;
	g->edges[g->n_edges] = (struct lg_edge){ { from, to, flags }, a, b };
	tail->out[tail->n_out++] = g->n_edges;
	*index = g->n_edges++;
	*changed = true;
	return 0;
}

const struct lockgraph_edge *lockgraph__edge(const struct lockgraph *g,
					     size_t index)
{
	return index < g->n_edges ? &g->edges[index].pub : NULL;
}

size_t lockgraph__cycles(const struct lockgraph *g,
			 const struct lockgraph_cycle **cycles)
{
	*cycles = g->cycles;
	return g->n_cycles;
}

/*
 * Whether the cycle can block at every lock on it: at a lock that the
 * edge before takes only as a reader and the edge after holds only as a
 * reader, the waiter would get in beside the holder.
 */
static bool cycle_can_block(const struct lockgraph *g, const size_t *edges,
			    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct lockgraph_edge *in = &g->edges[edges[i]].pub;
		const struct lockgraph_edge *out =
			&g->edges[edges[(i + 1) % n]].pub;

		if (!(in->flags & LOCKGRAPH_TAKEN_EXCLUSIVE) &&
		    !(out->flags & LOCKGRAPH_HELD_EXCLUSIVE))
			return false;
	}
	return true;
}

/* Rotates edges so that the cycle starts at its smallest class. */
static void cycle_rotate(const struct lockgraph *g, size_t *edges, size_t n)
{
	size_t first = 0, *copy;

	for (size_t i = 1; i < n; i++)
		if (g->edges[edges[i]].pub.from < g->edges[edges[first]].pub.from)
			first = i;
	if (!first)
		return;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return;		/* still a cycle; only its identity differs */
	for (size_t i = 0; i < n; i++)
		copy[i] = edges[(first + i) % n];
	memcpy(edges, copy, n * sizeof(*copy));
	free(copy);
}

static bool cycle_known(const struct lockgraph *g, const size_t *edges,
			size_t n)
{
	for (size_t c = 0; c < g->n_cycles; c++) {
		const struct lockgraph_cycle *k = &g->cycles[c];

		if (k->n == n && !memcmp(k->edges, edges, n * sizeof(*edges)))
			return true;
	}
	return false;
}

int lockgraph__find_cycle(struct lockgraph *g, size_t index)
{
	size_t *via = NULL, *queue = NULL, *edges = NULL;
	size_t start, goal, head = 0, tail = 0, n = 0;
	int ret = 0;

	if (index >= g->n_edges)
		return 0;
	start = g->edges[index].head;
	goal = g->edges[index].tail;
	/* via[node]: the edge the walk came in by, plus one; 0: not seen. */
	via = calloc(g->n_nodes, sizeof(*via));
	queue = malloc(g->n_nodes * sizeof(*queue));
	if (!via || !queue) {
		ret = -ENOMEM;
		goto out;
	}
	via[start] = index + 1;
	queue[tail++] = start;
	while (head < tail && !via[goal]) {
		const struct lg_node *node = &g->nodes[queue[head++]];

		for (size_t i = 0; i < node->n_out; i++) {
			size_t next = g->edges[node->out[i]].head;

			if (via[next])
				continue;
			via[next] = node->out[i] + 1;
			queue[tail++] = next;
		}
	}
	if (!via[goal])
		goto out;
	/* Back from the tail of the new edge to its head, then the edge. */
	for (size_t at = goal; at != start; n++)
		at = g->edges[via[at] - 1].tail;
	edges = malloc((n + 1) * sizeof(*edges));
	if (!edges) {
		ret = -ENOMEM;
		goto out;
	}
	edges[0] = index;
	for (size_t at = goal, i = n; at != start; i--) {
		edges[i] = via[at] - 1;
		at = g->edges[edges[i]].tail;
	}
	n++;
	cycle_rotate(g, edges, n);
	if (!cycle_can_block(g, edges, n) || cycle_known(g, edges, n))
		goto out;
	if (array__grow(&g->cycles, &g->cap_cycles, g->n_cycles + 1,
			sizeof(*g->cycles))) {
		ret = -ENOMEM;
		goto out;
	}
	g->cycles[g->n_cycles++] = (struct lockgraph_cycle){ n, edges };
	edges = NULL;
	ret = 1;
out:
	free(edges);
	free(queue);
	free(via);
	return ret;
}
