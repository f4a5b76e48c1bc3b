// SPDX-License-Identifier: GPL-2.0
/* Loaded with dlopen while the profiler runs. */
#include "stacklibs.h"

static volatile int calls;

int stackdl_lock(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m); /* CALLSITE:stackdl */

	calls++;
	return err;
}
