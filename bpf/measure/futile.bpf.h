/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Futile wakeups: a waiter woken only to wait again.  Counted per row
 * (sp_value.futile), in each mode exactly where the mode sees them.
 *
 * Contended mode (contended.bpf.c): within one acquisition of a mutex or
 * one of glibc's own locks (the waits of one lock call on one word), a
 * futex wait that returned 0 (woken by a FUTEX_WAKE; a timeout, EAGAIN
 * or a signal is no wakeup) and is followed by another wait on the same
 * word: the unlock handed the lock to this waiter and another thread
 * took it first (glibc's locks barge).  One per such re-wait, on the
 * acquisition's row.  Condvar rows get none here: a condvar wait ends its
 * acquisition when it is woken, because glibc's re-wait inside one
 * pthread_cond_wait (its signal taken by another waiter) and the
 * application's next pthread_cond_wait in its predicate loop issue the
 * same futex wait on the same word from the same stack, with no futex
 * call between them when the mutex is not contended: contended mode
 * cannot tell a futile wakeup from a useful one followed by the next
 * wait.  The same holds for rwlocks, semaphores and plain futexes.
 *
 * Full mode (full.bpf.c), two kinds:
 *  - a mutex lock call that slept n > 1 times (the thread's voluntary
 *    context switches between the call's entry and its return, read
 *    anyway for its stack) was woken n - 1 times to sleep again: n - 1
 *    futile wakeups on the call's row.  It misses a steal whose re-wait
 *    found the word changed and never slept (contended mode counts it),
 *    and counts a wait a handled signal broke into as one.  Not for
 *    condvar calls: their sleeps include taking the mutex back.
 *  - a condvar wait that returned 0, followed by another wait of the same
 *    thread on the same condvar and mutex with no lock call on that mutex
 *    between them: the thread found nothing to do and waited again.
 *    Exact without unlock probes: pthread_cond_wait needs the mutex
 *    held, so a thread that let it go after the wakeup took it again,
 *    and its lock call's entry clears the candidate.  At the entry, not
 *    at a successful return: a lock call that filters (--type, --object)
 *    or nesting keep from the stack of calls still clears it, and a
 *    thread can only call a lock on a mutex it holds to fail (EBUSY,
 *    EDEADLK) or to recurse.  Charged to the row of the wait that was
 *    woken for nothing, kept in the thread's task storage (struct
 *    sp_inflight).  It cannot tell a thread that did its work under the
 *    mutex and waits again without ever letting it go: that wakeup was
 *    useful, and is counted as futile.
 *
 * Cost: nothing on the common path beyond a flag (contended) or a few
 * compares in task storage already read (full); the row's update, one
 * hash lookup, only for a futile wakeup.  Measured against the build
 * before it (kernel.bpf_stats, 15 paired runs, load 12): contended
 * lockbench pingpong pinned, futex_enter 383 -> 386 ns a run (paired
 * difference +10), futex_exit 206 -> 211 (+6); full mode, uncontended
 * and condhandoff, within +-50 ns of ~500-700 either way: noise.  So it
 * is always on, not under --why.
 * The verifier's work grows (full's lock_return 11.6k -> 25k
 * instructions, contended's programs +1%).
 */
#ifndef SYNCPROF_FUTILE_BPF_H
#define SYNCPROF_FUTILE_BPF_H

#include "stats.bpf.h"

/* Adds n futile wakeups to key's row of the stats map. */
static __always_inline void futile_add(const struct sp_key *key, __u64 n)
{
	struct sp_key row = stats_row(key);
	const struct sp_value init = { .futile = n, .window = window };
	struct sp_value *v;
	bool inserted;

	v = map_lookup_or_init(&stats, &row, &init, &inserted);
	if (!v) {
		counter_bump(SP_CNT_DROPPED_STATS);
		return;
	}
	if (!inserted)
		__sync_fetch_and_add(&v->futile, n);
}

/* Full mode: a mutex lock call slept `sleeps` times. */
static __always_inline void futile_lock_slept(const struct sp_key *key,
					      __u32 sleeps)
{
	if (sleeps > 1 && (key->type == SP_TYPE_MUTEX ||
			   key->type == SP_TYPE_REC_MUTEX))
		futile_add(key, sleeps - 1);
}

/* Full mode: a lock call on mutex begins; the thread took it again. */
static __always_inline void futile_mutex_enter(struct sp_inflight *st,
					       __u64 mutex)
{
	if (st->woken_cond && st->woken_mutex == mutex)
		st->woken_cond = 0;
}

/*
 * Full mode: a wait on (cond, mutex) begins.  The last wakeup on the same
 * pair, the mutex held since, was futile; any wait on the mutex lets it
 * go and takes it back.
 */
static __always_inline void futile_cond_enter(struct sp_inflight *st,
					      __u64 cond, __u64 mutex)
{
	if (!st->woken_cond || st->woken_mutex != mutex)
		return;
	if (st->woken_cond == cond)
		futile_add(&st->woken_key, 1);
	st->woken_cond = 0;
}

/* Full mode: a counted wait on (cond, mutex) returned 0, in key's row. */
static __always_inline void futile_cond_woken(struct sp_inflight *st,
					      const struct sp_key *key,
					      __u64 cond, __u64 mutex)
{
	st->woken_key = *key;
	st->woken_cond = cond;
	st->woken_mutex = mutex;
}

#endif
