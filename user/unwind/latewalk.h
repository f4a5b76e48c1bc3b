/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Late walks: stacks the kernel cut at a module whose table was not read
 * when the wait ended (a library dlopen'ed a moment before), with the
 * raw frames beyond the cut (bpf/unwind.h, struct sp_late_walk).  Kept
 * until the tables are read, then walked here with the same rules the
 * kernel applies (bpf/unwind/unwind.bpf.c), over the stack bytes the kernel
 * copied; the whole stack replaces the cut one under the wait's stack id.
 */
#ifndef SYNCPROF_LATEWALK_H
#define SYNCPROF_LATEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktab.h"
#include "unwind.h"

struct latewalks;

/*
 * The rule at a lookup address of a process, as the kernel's walk finds
 * it: 0 with *row; -ENODATA: placed, no row there (*map_flags says
 * whether frame pointers apply); -EAGAIN: no table placed there (yet).
 */
typedef int (*latewalk_rule_fn)(void *ctx, pid_t pid, uint64_t addr,
				struct sp_unwind_row *row, uint32_t *map_flags);

struct latewalk_stats {
	uint64_t kept;		/* late walks taken from the kernel */
	uint64_t finished;	/* walked to the thread's start or the depth */
	uint64_t cut;		/* given up: no table came, or the bytes
				   kept ran out (the stack stays cut) */
};

int latewalks__new(unsigned int depth, struct latewalks **out);
void latewalks__free(struct latewalks *lw);
/* Keeps a record from the kernel (size bytes); 0 or -errno. */
int latewalks__add(struct latewalks *lw, const void *rec, size_t size);
/*
 * Walks what can be walked now; each finished stack goes into tab under
 * the wait's id (pcs passed through translate, when set), and the id is
 * made an alias of the id the kernel gives the same frames (so late
 * waits merge with the stacks walked in time).  final: give up on the
 * rest (counted as cut).  0 or -ENOMEM.
 */
int latewalks__finish(struct latewalks *lw, latewalk_rule_fn rule, void *ctx,
		      uint64_t (*translate)(void *ctx, pid_t pid, uint64_t pc),
		      void *translate_ctx, struct stacktab *tab, bool final);
size_t latewalks__pending(const struct latewalks *lw);
void latewalks__stats(const struct latewalks *lw, struct latewalk_stats *st);

/* The kernel's stack id for n frames ending `end` (bpf/unwind/unwind.bpf.c). */
uint64_t latewalk__stack_id(const uint64_t *pcs, uint32_t n, uint32_t end);

#endif
