/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code mappings a process has had: the ones it maps now, and a
 * bounded list of those it unmapped (a library dlclose'd), so an address
 * taken while a library was loaded is still named after it is gone.
 */
#ifndef SYNCPROF_MAPHISTORY_H
#define SYNCPROF_MAPHISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"

struct maphistory;

/* Keeps at most max_gone unmapped entries (the oldest go first). */
int maphistory__new(size_t max_gone, struct maphistory **out);
void maphistory__free(struct maphistory *h);
/*
 * maps (sorted by start, as /proc/PID/maps is; not taken over): its
 * executable file mappings become the current ones, and the current ones
 * it lacks are kept as unmapped.  1: something changed, 0: the same,
 * -ENOMEM (the current list as it was).
 */
int maphistory__update(struct maphistory *h, const struct procmaps *maps);
/*
 * The mapping that holds addr: mapped now, else the newest unmapped one;
 * NULL if none.  Paths stay valid until maphistory__free.
 */
const struct procmaps_entry *maphistory__find(const struct maphistory *h,
					      uint64_t addr);
/* How many entries are mapped now, and how many unmapped are kept. */
size_t maphistory__current(const struct maphistory *h);
size_t maphistory__gone(const struct maphistory *h);

#endif
