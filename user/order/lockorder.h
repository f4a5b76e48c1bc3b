/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --lock-order: reads the kernel's pairs of locks (held, then taken),
 * classes each lock, and keeps the order graph's cycles with an example
 * of every edge on them: both locks, the sites and stacks that took them.
 */
#ifndef SYNCPROF_LOCKORDER_H
#define SYNCPROF_LOCKORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lockorder;

/*
 * Whether the lock at addr in process pid is one lock for its whole life
 * (a global or a static: it is its own class), rather than one of many
 * short-lived ones (heap, stack: the site that takes it is its class).
 */
typedef bool (*lockorder_named_fn)(void *ctx, uint32_t pid, uint64_t addr);

/* One lock of an edge, the first time the edge was seen. */
struct lockorder_lock {
	uint64_t object;
	uint64_t site;		/* return address of the call that took it */
	uint64_t stack_id;	/* its stack (stacktab.h); 0: none */
	uint32_t type;		/* enum sp_lock_type */
};

struct lockorder_edge {
	struct lockorder_lock held;
	struct lockorder_lock acquired;
	uint64_t count;		/* times taken in this order, all sites */
	uint32_t pid;
	uint32_t tid;		/* the first thread that did */
};

int lockorder__new(int map_fd, lockorder_named_fn named, void *ctx,
		   struct lockorder **out);
void lockorder__free(struct lockorder *lo);
/* Takes in the pairs seen so far; cycles found are kept. 0 or -errno. */
int lockorder__read(struct lockorder *lo);
/* Adds one pair (what read does for each map entry; tests call it). */
int lockorder__add(struct lockorder *lo, const struct lockorder_edge *pair);
size_t lockorder__cycles(const struct lockorder *lo);
/* Cycle i's length, and its edge k: each edge holds the lock the one
 * before took (valid until the next read or add). */
size_t lockorder__cycle_len(const struct lockorder *lo, size_t i);
const struct lockorder_edge *lockorder__cycle_edge(const struct lockorder *lo,
						   size_t i, size_t k);


#endif
