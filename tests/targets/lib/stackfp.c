// SPDX-License-Identifier: GPL-2.0
/* Built with frame pointers and no unwind tables: walked by rbp. */
#include "stacklibs.h"

static volatile int calls;

__attribute__((noinline)) int stackfp_inner(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m); /* CALLSITE:stackfp_inner */

	calls++;
	return err;
}

__attribute__((noinline)) int stackfp_outer(pthread_mutex_t *m)
{
	int err = stackfp_inner(m); /* CALLSITE:stackfp_outer */

	calls++;
	return err;
}
