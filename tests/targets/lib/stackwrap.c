// SPDX-License-Identifier: GPL-2.0
/* A lock wrapper in a shared library without frame pointers. */
#include "stacklibs.h"

/* Work after the call keeps it a call (no tail jump), as real wrappers
 * that check errors or count do. */
static volatile int calls;

int stackwrap_lock(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m); /* CALLSITE:stackwrap */

	calls++;
	return err;
}
