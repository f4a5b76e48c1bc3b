/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The libraries tests/targets/stacks waits through, each built its own
 * way (see the Makefile):
 *   libstackwrap.so  -O2 -fomit-frame-pointer, CFI: a lock wrapper
 *   libstackfp.so    frame pointers and no unwind tables at all
 *   libstackdl.so    dlopen'ed after the profiler attached
 */
#ifndef SYNCPROF_STACKLIBS_H
#define SYNCPROF_STACKLIBS_H

#include <pthread.h>

/* Locks m: what a program's own mutex wrapper does. */
int stackwrap_lock(pthread_mutex_t *m);
/* stackfp_outer -> stackfp_inner -> pthread_mutex_lock. */
int stackfp_outer(pthread_mutex_t *m);
int stackfp_inner(pthread_mutex_t *m);
/* In the dlopen'ed library. */
int stackdl_lock(pthread_mutex_t *m);

#endif
