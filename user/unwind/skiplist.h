/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions that are part of the lock implementation (--skip GLOB):
 * shell globs over demangled names, resolved to address ranges per
 * module, so the kernel's walk can step past them to the call site.
 */
#ifndef SYNCPROF_SKIPLIST_H
#define SYNCPROF_SKIPLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "cfitable.h"
#include "elfimage.h"

struct skiplist;

/* Copies the globs; n may be 0 (an empty list matches nothing). */
int skiplist__new(const char *const *globs, size_t n, struct skiplist **out);
void skiplist__free(struct skiplist *list);
bool skiplist__empty(const struct skiplist *list);
/*
 * Whether a demangled name matches a glob (fnmatch), whole ("ns::f(int)")
 * or without its parameter list ("ns::f").
 */
bool skiplist__match(const struct skiplist *list, const char *demangled);
/*
 * The length of a demangled name without what follows the function's
 * own name: the parameter list and its qualifiers ("ns::f(int) const"
 * -> "ns::f"), and a compiler clone's suffix ("f(int) [clone .cold]",
 * "f.isra.0" -> "f").  The whole length when there is none.
 */
size_t skiplist__base_len(const char *demangled);
/*
 * The file-relative ranges of the image's functions whose names match
 * (.symtab, or .dynsym when stripped): sorted, overlaps joined.  *out is
 * malloc'ed (NULL when none match).
 */
int skiplist__ranges(const struct skiplist *list, struct elfimage *image,
		     struct cfitable_range **out, size_t *n);

#endif
