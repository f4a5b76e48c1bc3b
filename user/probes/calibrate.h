/* SPDX-License-Identifier: GPL-2.0 */
/* The probes' own time inside each measured call, measured at startup. */
#ifndef SYNCPROF_CALIBRATE_H
#define SYNCPROF_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "syncprof.h"

struct calibration {
	uint64_t ns;		/* pthread_mutex_lock's: median of round means */
	uint64_t min_ns;	/* the spread of its rounds */
	uint64_t max_ns;
	/* What to subtract per kind of probed instruction. */
	uint64_t by_site[SP_SITE__COUNT];
	unsigned int rounds;
	unsigned int calls;	/* per round */
};

/*
 * Times uncontended pthread_mutex_lock and _trylock calls of a child
 * process through probes placed as the real ones will be; 0 or -errno.
 */
int calibrate__run(bool probe_at_entry, struct calibration *out);
/* The median of n values (sorts them). */
uint64_t calibrate__median(uint64_t *values, unsigned int n);

#endif
