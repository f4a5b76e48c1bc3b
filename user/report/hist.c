// SPDX-License-Identifier: GPL-2.0
/*
 * Quantiles from a log2 histogram are estimates: the bucket holding the
 * q-th wait is exact, its place inside the bucket is interpolated
 * linearly (a bucket spans a factor of two, so the estimate is within 2x
 * of the truth, and much closer when waits are spread evenly), and capped
 * by the longest wait, which the stats map keeps exactly.
 */
#include <inttypes.h>
#include <string.h>

#include "hist.h"

size_t hist__slot(uint64_t ns)
{
	size_t slot = 0;

	while (ns) {
		slot++;
		ns >>= 1;
	}
	return slot < SP_HIST_SLOTS ? slot : SP_HIST_SLOTS - 1;
}

uint64_t hist__lower(size_t slot)
{
	return slot ? 1ull << (slot - 1) : 0;
}

uint64_t hist__upper(size_t slot)
{
	return slot + 1 < SP_HIST_SLOTS ? 1ull << slot : UINT64_MAX;
}

uint64_t hist__total(const uint64_t slots[SP_HIST_SLOTS])
{
	uint64_t n = 0;

	for (size_t k = 0; k < SP_HIST_SLOTS; k++)
		n += slots[k];
	return n;
}

bool hist__quantile(const uint64_t slots[SP_HIST_SLOTS], double q,
		    uint64_t max_ns, uint64_t *out)
{
	uint64_t total = hist__total(slots), seen = 0;
	double rank;

	if (!total || q <= 0)
		return false;
	if (q > 1)
		q = 1;
	rank = q * (double)total;
	for (size_t k = 0; k < SP_HIST_SLOTS; k++) {
		uint64_t lo = hist__lower(k), hi = hist__upper(k);
		double est;

		if (!slots[k] || (double)(seen + slots[k]) < rank) {
			seen += slots[k];
			continue;
		}
		if (max_ns && max_ns >= lo && max_ns < hi)
			hi = max_ns;
		else if (hi == UINT64_MAX)
			hi = lo * 2;	/* the open bucket, no maximum known */
		est = (double)lo + (double)(hi - lo) *
		      ((rank - (double)seen) / (double)slots[k]);
		*out = est >= (double)hi ? hi : (uint64_t)est;
		return true;
	}
	*out = max_ns;
	return true;
}

/* 2^shift as bpftrace writes it: 1, 512, 1K, 2M, ... */
static void power_label(unsigned int shift, char *buf, size_t len)
{
	static const char suffix[] = " KMGTPE";
	unsigned int unit = shift / 10;

	if (!unit)
		snprintf(buf, len, "%" PRIu64, (uint64_t)1 << shift);
	else
		snprintf(buf, len, "%" PRIu64 "%c", (uint64_t)1 << (shift % 10),
			 suffix[unit]);
}

void hist__label(size_t slot, char *buf, size_t len)
{
	char lo[16], hi[16];

	if (slot == 0) {
		snprintf(buf, len, "[0]");
		return;
	}
	if (slot == 1) {
		snprintf(buf, len, "[1]");
		return;
	}
	power_label((unsigned int)slot - 1, lo, sizeof(lo));
	if (slot + 1 >= SP_HIST_SLOTS)
		snprintf(buf, len, "[%s, ...)", lo);
	else {
		power_label((unsigned int)slot, hi, sizeof(hi));
		snprintf(buf, len, "[%s, %s)", lo, hi);
	}
}

int hist__lines(const uint64_t slots[SP_HIST_SLOTS],
		void (*emit)(const char *line, void *arg), void *arg)
{
	size_t first = SP_HIST_SLOTS, last = 0;
	uint64_t top = 0;
	int lines = 0;

	for (size_t k = 0; k < SP_HIST_SLOTS; k++) {
		if (!slots[k])
			continue;
		if (first == SP_HIST_SLOTS)
			first = k;
		last = k;
		if (slots[k] > top)
			top = slots[k];
	}
	for (size_t k = first; k <= last && first < SP_HIST_SLOTS; k++) {
		char label[40], bar[HIST_BAR_WIDTH + 1], line[128];
		size_t n = (size_t)((unsigned __int128)slots[k] * HIST_BAR_WIDTH / top);

		if (slots[k] && !n)
			n = 1;	/* a bucket with waits is never blank */
		memset(bar, '@', n);
		memset(bar + n, ' ', HIST_BAR_WIDTH - n);
		bar[HIST_BAR_WIDTH] = '\0';
		hist__label(k, label, sizeof(label));
		snprintf(line, sizeof(line), "%-16s%8" PRIu64 " |%s|", label,
			 slots[k], bar);
		emit(line, arg);
		lines++;
	}
	return lines;
}
