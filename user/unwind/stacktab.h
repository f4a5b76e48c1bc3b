/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stacks the kernel interned, in user space: a wait's row key carries
 * a stack id (0: no stack kept), and this table gives its frames.  Frames
 * are absolute return addresses, innermost first (the first one: where
 * the walk left libc, the return address of the call into it);
 * renderers look each up at pc - 1, as a call site.  Stacks are kept for
 * the whole run: a report printed after the target exited still has
 * them.  The loader also keeps the frames it drained from the kernel and
 * has not resolved yet in a table of this kind (probes/stackread.c).
 */
#ifndef SYNCPROF_STACKTAB_H
#define SYNCPROF_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

/* How a stack ended, beyond its last frame. */
enum stacktab_end {
	STACKTAB_END_COMPLETE = 0,	/* the thread's outermost frame */
	STACKTAB_END_TRUNCATED = 1,	/* --stack-depth reached */
	STACKTAB_END_STOPPED = 2,	/* no rule to go on: JIT, anonymous
					   code, a broken frame chain */
};

struct stacktab;

int stacktab__new(struct stacktab **out);
void stacktab__free(struct stacktab *tab);
/*
 * Keeps the n frames of stack id (a copy).  Adding an id again replaces
 * its frames.  0, -EINVAL for id 0, or -ENOMEM.
 */
int stacktab__add(struct stacktab *tab, uint64_t id, const uint64_t *frames,
		  uint32_t n, enum stacktab_end end);
/*
 * The frames of id: 0 with *frames (owned by the table, valid until the
 * id is added again or the table is freed), *n and *end; -ENOENT if the
 * table has no such stack.
 */
int stacktab__get(const struct stacktab *tab, uint64_t id,
		  const uint64_t **frames, uint32_t *n, enum stacktab_end *end);
/* Forgets id and its frames: 0, or -ENOENT when the table has no such id. */
int stacktab__remove(struct stacktab *tab, uint64_t id);
size_t stacktab__count(const struct stacktab *tab);
/*
 * Stack id is also known as to (the same frames, interned apart: a late
 * walk, see latewalk.h): reports merge its waits into to's.  0, -EINVAL,
 * or -ENOENT when id has no frames in the table.
 */
int stacktab__alias(struct stacktab *tab, uint64_t id, uint64_t to);
/* The id id's waits are merged under: its alias, or itself. */
uint64_t stacktab__canonical(const struct stacktab *tab, uint64_t id);

#endif
