/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a libc's pthread_cond_wait sleeps: the offset of the futex word
 * (glibc's __g_signals) inside pthread_cond_t, found by watching a child.
 */
#ifndef SYNCPROF_CONDPROBE_H
#define SYNCPROF_CONDPROBE_H

#include <stdint.h>

/*
 * The offset for the libc at target_libc, if it is the very libc syncprof
 * runs on (the same GNU build ID): a forked child makes one short
 * pthread_cond_timedwait under ptrace, and its futex call's address less
 * the condvar's is the answer.  -ENOTSUP: another libc build; -ETIME:
 * the child never slept on the condvar.
 */
int condprobe__signal_offset(const char *target_libc, uint32_t *offset);

#endif
