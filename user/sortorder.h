/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The orders every sort shares: of numbers (as comparisons and as qsort
 * comparators), and QSP's order of ties, so that rows and keys that tie
 * come out in one order in the reports, the snapshots and the recording.
 */
#ifndef SYNCPROF_SORTORDER_H
#define SYNCPROF_SORTORDER_H

#include <stdint.h>

/* -1, 0 or 1 as a is below, equal to or above b. */
static inline int order__u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* qsort's comparators of uint64_t and uint32_t (or records led by one). */
static inline int order__u64_at(const void *a, const void *b)
{
	return order__u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static inline int order__u32_at(const void *a, const void *b)
{
	return order__u64(*(const uint32_t *)a, *(const uint32_t *)b);
}

/*
 * QSP's order of ties (QEMU's util/qsp.c): by object, then call site,
 * then type.  a's and b's fields, in that order.
 */
static inline int order__qsp(uint64_t object_a, uint64_t callsite_a,
			     uint32_t type_a, uint64_t object_b,
			     uint64_t callsite_b, uint32_t type_b)
{
	int c = order__u64(object_a, object_b);

	if (!c)
		c = order__u64(callsite_a, callsite_b);
	return c ? c : order__u64(type_a, type_b);
}

#endif
