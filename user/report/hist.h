/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A row's log2 histogram of single waits (struct sp_hist, filled in the
 * kernel): the bounds of its buckets, quantile estimates, and the text
 * bpftrace's hist() draws.  Slot 0 holds waits of 0 ns, slot k >= 1 waits
 * in [2^(k-1), 2^k) ns; the last slot is open-ended.
 */
#ifndef SYNCPROF_HIST_H
#define SYNCPROF_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncprof.h"

/* The slot a wait of ns goes to, as the BPF programs choose it. */
size_t hist__slot(uint64_t ns);
/* The smallest wait of a slot: 0, 1, 2, 4, ... */
uint64_t hist__lower(size_t slot);
/* One past its largest: 1, 2, 4, ...; UINT64_MAX for the last slot. */
uint64_t hist__upper(size_t slot);
/* The waits a histogram holds. */
uint64_t hist__total(const uint64_t slots[SP_HIST_SLOTS]);
/*
 * An estimate of the q-quantile (0 < q <= 1) of the waits: the bucket
 * that holds it, linearly inside it, and never above max_ns (the longest
 * wait, 0 if unknown).  false when the histogram is empty.
 */
bool hist__quantile(const uint64_t slots[SP_HIST_SLOTS], double q,
		    uint64_t max_ns, uint64_t *out);
/* A bucket's label, as bpftrace prints it: "[0]", "[1]", "[2, 4)", "[1K, 2K)". */
void hist__label(size_t slot, char *buf, size_t len);
/* Columns of the bar of the fullest bucket. */
#define HIST_BAR_WIDTH 52
/*
 * The lines of a histogram, from its first non-empty bucket to its last,
 * as bpftrace's hist(): label, count and a bar of '@' scaled to the
 * fullest bucket.  Each line goes to emit(line, arg) without a newline;
 * returns the number of lines (0 for an empty histogram).
 */
int hist__lines(const uint64_t slots[SP_HIST_SLOTS],
		void (*emit)(const char *line, void *arg), void *arg);

#endif
