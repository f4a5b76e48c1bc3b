/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --replay DIR: the reports of a recording, printed again from its waits
 * as the live run printed them (the same windows, times and drop counts),
 * with this run's sort, coalescing, per-thread split, top and format.
 */
#ifndef SYNCPROF_REPLAY_H
#define SYNCPROF_REPLAY_H

#include <stdio.h>

#include "options.h"

/* Prints to out; --chrome FILE also converts.  Errors are printed. */
int replay__run(const struct options *opts, FILE *out);

#endif
