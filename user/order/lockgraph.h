/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock-order graph (--lock-order): classes of locks as nodes, "held
 * while taking" as edges, and the cycles found as edges arrive.  Pure
 * logic: classes are numbers the caller gives, and what an edge stands
 * for (its sites and stacks) stays with the caller, by edge index.
 */
#ifndef SYNCPROF_LOCKGRAPH_H
#define SYNCPROF_LOCKGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lockgraph;

/* How an edge's locks were held and taken, OR-ed over its instances. */
enum lockgraph_flags {
	LOCKGRAPH_HELD_EXCLUSIVE = 1,	/* the held lock, not as a reader */
	LOCKGRAPH_TAKEN_EXCLUSIVE = 2,	/* the taken lock, not as a reader */
};

struct lockgraph_edge {
	uint64_t from;		/* the class held */
	uint64_t to;		/* the class taken while holding it */
	unsigned int flags;	/* enum lockgraph_flags */
};

/* A cycle: edges[i] goes from the class edges[i-1] went to. */
struct lockgraph_cycle {
	size_t n;
	size_t *edges;		/* edge indexes, the smallest class first */
};

int lockgraph__new(struct lockgraph **out);
void lockgraph__free(struct lockgraph *g);
/*
 * The edge from -> to, made if new, its flags OR-ed in; *index is its
 * index, *changed whether it is new or gained a flag (then look for
 * cycles through it).  An edge from a class to itself is refused with
 * -EINVAL: a lock class taken while one of its own is held (a recursive
 * take, or two objects of one site) orders nothing.
 */
int lockgraph__add(struct lockgraph *g, uint64_t from, uint64_t to,
		   unsigned int flags, size_t *index, bool *changed);
const struct lockgraph_edge *lockgraph__edge(const struct lockgraph *g,
					     size_t index);
/*
 * Looks for a cycle through edge index, shortest first.  A cycle that can
 * never block is left out: one that passes an rwlock read after read (a
 * reader never waits for another reader in glibc's default rwlock).
 * Returns 1 when it found a cycle not seen before (then the newest of
 * lockgraph__cycles), 0 when none or a known one, or -ENOMEM.
 */
int lockgraph__find_cycle(struct lockgraph *g, size_t index);
size_t lockgraph__cycles(const struct lockgraph *g,
			 const struct lockgraph_cycle **cycles);

#endif
