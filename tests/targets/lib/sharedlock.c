// SPDX-License-Identifier: GPL-2.0
#include <time.h>

#include "sharedlock.h"

pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_count;

long shared_lock_work(int iters)
{
	struct timespec hold = { 0, 200000 };
	long done = 0;

	for (int i = 0; i < iters; i++) {
		pthread_mutex_lock(&shared_lock); /* CALLSITE:shared_lock_work */
		shared_count++;
		nanosleep(&hold, NULL);
		pthread_mutex_unlock(&shared_lock);
		done++;
	}
	return done;
}
