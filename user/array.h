/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one growable array: a module keeps its items pointer, count and
 * capacity, and asks for room before it appends.
 */
#ifndef SYNCPROF_ARRAY_H
#define SYNCPROF_ARRAY_H

#include <stddef.h>

/* The number of items of an array (not of a pointer). */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Makes *items (a pointer to the module's T * pointer) hold at least need
 * items of size bytes: the capacity doubles from 16, reallocarray checks
 * the multiplication.  0, or -ENOMEM with *items and *cap unchanged.
 */
int array__grow(void *items, size_t *cap, size_t need, size_t size);

#endif
