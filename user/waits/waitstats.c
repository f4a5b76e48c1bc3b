// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include "waitstats.h"

static void wait_stats__max(uint64_t *into, uint64_t v)
{
	if (v > *into)
		*into = v;
}

void wait_stats__add(struct wait_stats *into, const struct wait_stats *from)
{
	into->count += from->count;
	into->wait_ns += from->wait_ns;
	into->failed += from->failed;
	into->failed_ns += from->failed_ns;
	into->futile += from->futile;
	wait_stats__max(&into->max_ns, from->max_ns);
	wait_stats__max(&into->window_max_ns, from->window_max_ns);
	for (size_t k = 0; k < SP_HIST_SLOTS; k++)
		into->hist[k] += from->hist[k];
	into->hold_count += from->hold_count;
	into->hold_ns += from->hold_ns;
	wait_stats__max(&into->hold_max_ns, from->hold_max_ns);
	wait_stats__max(&into->hold_window_max_ns, from->hold_window_max_ns);
}
