/* SPDX-License-Identifier: GPL-2.0 */
/* A shared library with its own lock, for call sites inside a .so. */
#ifndef SHAREDLOCK_H
#define SHAREDLOCK_H

#include <pthread.h>

extern pthread_mutex_t shared_lock;
/* Locks shared_lock iters times; returns the number of acquisitions. */
long shared_lock_work(int iters);

#endif
