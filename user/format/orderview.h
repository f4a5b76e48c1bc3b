/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --lock-order for the report: the lock classes named, the cycles with
 * their sites, as struct format_lock_order.
 */
#ifndef SYNCPROF_ORDERVIEW_H
#define SYNCPROF_ORDERVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "lockorder.h"

struct procspace;

/* Where the names come from; space: several processes, else NULL. */
struct orderview_names {
	struct symbolizer *symbolizer;
	struct procspace *space;
};

/* lockorder_named_fn over ctx, a struct orderview_names: has a symbol. */
bool orderview__named(void *ctx, uint32_t pid, uint64_t addr);
int orderview__build(const struct lockorder *lo,
		     const struct orderview_names *names,
		     struct format_lock_order *out);
void orderview__free(struct format_lock_order *view);

#endif
