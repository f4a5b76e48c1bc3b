// SPDX-License-Identifier: GPL-2.0
/*
 * tests/targets/dlrace's library: dlopen'ed right after the start, its
 * first call waits at once, three frames deep in here.
 */
#include <pthread.h>

#include "dlrace.h"

static volatile int sink;

/* One frame per function: the store after each call keeps it a call. */
__attribute__((noipa)) static int dlrace_inner(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m); /* CALLSITE:dlrace_inner */

	sink++;
	return err;
}

__attribute__((noipa)) static int dlrace_middle(pthread_mutex_t *m)
{
	int err = dlrace_inner(m); /* CALLSITE:dlrace_middle */

	sink++;
	return err;
}

__attribute__((noipa)) int dlrace_lock(pthread_mutex_t *m)
{
	int err = dlrace_middle(m); /* CALLSITE:dlrace_lock */

	sink++;
	return err;
}
