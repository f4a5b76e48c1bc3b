/* SPDX-License-Identifier: GPL-2.0 */
/* The library tests/targets/dlrace dlopens (tests/targets/lib/dlrace.c). */
#ifndef SYNCPROF_DLRACE_H
#define SYNCPROF_DLRACE_H

#include <pthread.h>

/* dlrace_lock -> dlrace_middle -> dlrace_inner -> pthread_mutex_lock. */
int dlrace_lock(pthread_mutex_t *m);

#endif
