/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The symbolizer's answers, kept: one entry per address and kind of
 * question, and every string and frame array it handed out, valid until
 * symcache__free.
 */
#ifndef SYNCPROF_SYMCACHE_H
#define SYNCPROF_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolinfo.h"

struct symcache;

enum symcache_kind {
	SYMCACHE_CALLSITE = 0,
	SYMCACHE_OBJECT = 1,
	SYMCACHE_FRAMES_RET = 2,	/* symbolizer__frames, a return address */
	SYMCACHE_FRAMES_PC = 3,		/* ..., an exact pc */
	SYMCACHE_ARG_LOCK = 4,		/* symbolizer__argument_lock: a lock */
	SYMCACHE_ARG_COND = 5,		/* ... a condvar */
};

/* One answer; the fields its kind answers with. */
struct symcache_entry {
	uint64_t key;		/* (addr << 3 | kind) + 1; 0: empty */
	int err;
	struct symbol_info info;
	const char *object;
	const struct symbol_frame *frames;
	size_t n_frames;
};

int symcache__new(struct symcache **out);
/* Frees the entries and everything kept. */
void symcache__free(struct symcache *c);
/*
 * The entry for addr and kind: filled (key set) if cached, else empty,
 * to be filled with symcache__fill.  Valid until the next call (the
 * table may grow).  NULL: no memory.
 */
struct symcache_entry *symcache__slot(struct symcache *c, uint64_t addr,
				      enum symcache_kind kind);
/* Marks the empty entry slot as addr's and kind's answer. */
void symcache__fill(struct symcache *c, struct symcache_entry *slot,
		    uint64_t addr, enum symcache_kind kind);
/* Keeps p (malloc'ed) until symcache__free; false (p freed): no memory. */
bool symcache__keep(struct symcache *c, void *p);
/* Keeps s (malloc'ed) until symcache__free; NULL stays NULL. */
const char *symcache__own(struct symcache *c, char *s);

#endif
