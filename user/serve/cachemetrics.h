/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syncprof_cache_* gauges of /metrics: what syncprof holds of the
 * files it names, shared and bounded (docs/fleet.md, "Bounds").
 */
#ifndef SYNCPROF_CACHEMETRICS_H
#define SYNCPROF_CACHEMETRICS_H

#include <stdio.h>

/* Their families and values, in the text exposition format. */
void cachemetrics__write(FILE *out);

#endif
