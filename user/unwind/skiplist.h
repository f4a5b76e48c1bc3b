/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions that are part of the lock implementation: the built-in
 * runtimes' wrappers (wrappers.h) and --skip GLOB, shell globs over
 * demangled names, resolved to address ranges per module, so the
 * kernel's walk can step past them to the call site and type the wait
 * by the runtime's lock function.
 */
#ifndef SYNCPROF_SKIPLIST_H
#define SYNCPROF_SKIPLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfitable.h"
#include "elfimage.h"

struct skiplist;

/* A function's range to skip, file-relative, with its row attributes. */
struct skiplist_range {
	uint64_t start;
	uint64_t end;
	uint32_t attrs;		/* SP_UNWIND_A_SKIP, and a wrapper's kind */
	bool user;		/* matched by a --skip glob */
};

/*
 * Copies the user's globs (--skip); n may be 0 (an empty list matches
 * nothing).  A user's glob is tried before the built-in ones.
 */
int skiplist__new(const char *const *globs, size_t n, struct skiplist **out);
/* Adds the built-in runtimes' wrappers (wrappers.h), after the user's. */
int skiplist__add_wrappers(struct skiplist *list);
void skiplist__free(struct skiplist *list);
bool skiplist__empty(const struct skiplist *list);
/* Whether the user named functions with --skip. */
bool skiplist__has_user_globs(const struct skiplist *list);
/*
 * Whether a demangled name matches a glob (fnmatch), whole ("ns::f(int)")
 * or without its parameter list ("ns::f").
 */
bool skiplist__match(const struct skiplist *list, const char *demangled);
/*
 * The same, with the first matching glob's row attributes (*attrs) and
 * whether it is the user's.
 */
bool skiplist__lookup(const struct skiplist *list, const char *demangled,
		      uint32_t *attrs, bool *user);
/*
 * The length of a demangled name without what follows the function's
 * own name: the parameter list and its qualifiers ("ns::f(int) const"
 * -> "ns::f"), and a compiler clone's suffix ("f(int) [clone .cold]",
 * "f.isra.0" -> "f").  The whole length when there is none.
 */
size_t skiplist__base_len(const char *demangled);
/*
 * The file-relative ranges of the image's functions whose names match
 * (.symtab, or .dynsym when stripped), and, for a wrapper with
 * WRAPPER_F_CALLEES, of the functions without a symbol it calls or
 * jumps to, bounded by cfi's FDEs (cfi may be NULL: none).  Sorted,
 * overlaps joined (the first range's attributes kept).  *out is
 * malloc'ed (NULL when none match).
 */
int skiplist__ranges(const struct skiplist *list, struct elfimage *image,
		     const struct cfitable *cfi, struct skiplist_range **out,
		     size_t *n);

#endif
