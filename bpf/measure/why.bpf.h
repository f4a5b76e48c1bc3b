/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --why: what the holder did while a waiter waited, and where each chain
 * of waits ends.  The maps are defined in why.bpf.c; contended.bpf.c
 * calls why_wait_begin() as each futex wait begins and why_wait_end()
 * where the wait is added to its row.  Full mode (full.bpf.c) calls
 * why_wait_begin() at each lock call's entry, and at its return
 * why_call_end() for a call that blocked (its release: the last unlock
 * of its lock by another thread, whose probe, hold.bpf.c, reads the
 * releaser's clocks), why_call_unblocked() for the rest.  Full mode's
 * lock_return verifies ~343k instructions with --why (30k with --blame
 * --states alone; the load takes 4.5 s instead of 1.8 s here),
 * as futex_exit does; measured costs: make bench, section why.
 *
 * The holder's state.  --why runs --states' programs (states.bpf.c):
 * every thread of the target has cumulative counters (running,
 * runnable, lock wait, other sleep, stolen) in `threads`, kept up to
 * date at each of its switches and wakeups, plus the state it is in
 * since since_ns.  A counter read "now" is the counter plus the open interval.
 * As a wait begins, the holder's clocks are read (a mutex's holder
 * from its owner word, an rwlock's writer from __cur_writer); as the
 * holder wakes the waiter (--blame's sched_waking program,
 * blame.bpf.c), again: the differences are exactly
 * what the holder did during the wait, however many times it switched,
 * at the cost of two hash lookups per wait and nothing per switch beyond
 * --states.  Measured (bpf_stats, lockbench pingpong pinned to one CPU,
 * against --blame --states, load average 8): futex_exit +100 ns a run,
 * sched_waking +80 ns a wakeup, ~0.4-0.6 us per blocking wait in all;
 * futex_exit verifies ~350k instructions (42k without --why) because
 * why_wait_end's bounded loops are checked per caller.  From that wakeup to the waiter's return the wait is the
 * waiter's own (waiting for a CPU): `woken`.  A waiter woken by another
 * thread than the holder it began with (a steal, a handoff) reads the
 * holder's clocks at its return instead.  Rejected: sampling the holder's state at the wait's start
 * and end (wrong for any holder that switches during a wait), and a
 * per-waiter list of the holder's switches (unbounded, and a program on
 * the switch path that must find the holder's waiters).
 *
 * Chains.  When a wait ends, the thread's own record (why_last, by TID)
 * is rewritten with the roots that wait was charged to: a few (site,
 * process, state, ns).  A waiter whose holder spent part of the wait in
 * a lock wait passes that part on, in proportion, to the roots of the
 * holder's last wait (which ended inside this one: the holder cannot
 * release before its own wait ends), so a chain of any length is
 * followed one hop per wait, in O(1).  A chain ends (counted in
 * SP_CNT_WHY_CUT, charged to the holder's release site as `lock`) when
 * the holder's last wait is not inside this one, when this thread is in
 * the holder's chain (a cycle), or past SP_WHY_DEPTH holders.  A record
 * keeps SP_WHY_ROOTS roots: more are charged to the row but not passed
 * on (counted in SP_CNT_WHY_DROPPED, as a full map).  Only the
 * holder's last wait is followed: a holder that waited twice during one
 * wait has both shares passed on in the proportions of its last.
 */
#ifndef SYNCPROF_WHY_BPF_H
#define SYNCPROF_WHY_BPF_H

#include "threads.bpf.h"
#include "blame.bpf.h"
#include "steal.bpf.h"

#define SP_WHY_CLOCKS	5	/* enum sp_why_state up to SP_WHY_STOLEN */

/* The wait in flight of a thread: its holder and the holder's clocks. */
struct sp_why_wait {
	__u64 t0;
	__u64 at[SP_WHY_CLOCKS];
	__u32 holder;		/* 0: no owner known */
	__u32 known;		/* the holder's clocks were read at t0 */
};

extern const volatile __u32 why_enabled;

typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_why_wait);
} why_waits_map_t;
extern why_waits_map_t why_waits SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct sp_why_last);
	__uint(max_entries, 4096);
} why_last_map_t;
extern why_last_map_t why_last SEC(".maps");
/* A new thread's record: too big for the stack beside the walk's. */
extern const struct sp_why_last why_last_zero;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sp_why_key);
	__type(value, struct sp_why_value);
	__uint(max_entries, 1);		/* set by the loader */
} why_map_t;
extern why_map_t why SEC(".maps");
/*
 * No release seen: charged to site 0.  Writable memory, never written: a
 * global function's pointer arguments must be (static: not in the
 * skeleton).
 */
static struct sp_release why_no_release;

/*
 * The holder's clocks at now: its counters and the open interval.  A
 * running holder's interval less the steal its run queue has accounted
 * since its switch-in (as of that queue's last clock update) is running,
 * the rest stolen; its switch-out settles them on its CPU time
 * (states.bpf.c), which a holder on another CPU does not show.
 */
static __always_inline void why_clocks(const struct sp_thread *t, __u64 now,
				       __u64 at[SP_WHY_CLOCKS])
{
	__u64 d = now > t->since_ns ? now - t->since_ns : 0, lock = 0, s = 0;

	for (int i = 0; i < SP_TYPE__COUNT; i++)
		lock += t->lock_ns[i];
	at[SP_WHY_RUNNING] = t->running_ns;
	at[SP_WHY_RUNNABLE] = t->runnable_ns;
	at[SP_WHY_LOCK] = lock;
	at[SP_WHY_SLEEP] = t->sleep_ns;
	at[SP_WHY_STOLEN] = t->stolen_ns;
	switch (t->state) {
	case SP_THREAD_RUNNING:
		if (t->in_rq) {
			s = steal_of(t->in_rq);
			s = s > t->in_steal_ns ? s - t->in_steal_ns : 0;
			s = s < d ? s : d;
		}
		at[SP_WHY_RUNNING] += d - s;
		at[SP_WHY_STOLEN] += s;
		break;
	case SP_THREAD_RUNNABLE:
		at[SP_WHY_RUNNABLE] += d;
		break;
	case SP_THREAD_LOCK:
		if (t->lock_type < SP_TYPE__COUNT)
			at[SP_WHY_LOCK] += d;
		else
			at[SP_WHY_SLEEP] += d;
		break;
	case SP_THREAD_SLEEP:
		at[SP_WHY_SLEEP] += d;
		break;
	default:
		break;
	}
}

/*
 * Where a lock of this type names its holder, from the lock's address
 * (0: nowhere).  A mutex: glibc's __owner.  An rwlock: __cur_writer,
 * the writer holding it; while readers hold it, 0: no owner known, its
 * waits go to the releaser as a condvar's do.
 */
static __always_inline __u32 why_owner_offset(__u32 type)
{
	switch (type) {
	case SP_TYPE_MUTEX:
	case SP_TYPE_REC_MUTEX:
		return SP_MUTEX_OWNER_OFFSET;
	case SP_TYPE_RWLOCK_R:
	case SP_TYPE_RWLOCK_W:
		return SP_RWLOCK_WRITER_OFFSET;
	default:
		return 0;
	}
}

/* A wait on the lock at object, of a row of this type, begins at now. */
static __always_inline void why_wait_begin(__u32 type, __u64 object,
					   __u64 now)
{
	__u32 at = why_owner_offset(type);

	struct sp_why_wait *w;
	struct sp_thread *t;
	__u32 holder = 0;

	w = bpf_task_storage_get(&why_waits, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return;
	}
	w->t0 = now;
	w->known = 0;
	/* The owner now, not at the first wait: a steal changes it. */
	if (at)
		bpf_probe_read_user(&holder, sizeof(holder),
				    (void *)(object + at));
	w->holder = holder;
	if (!holder || holder == (__u32)bpf_get_current_pid_tgid())
		return;
	t = bpf_map_lookup_elem(&threads, &holder);
	if (!t)
		return;
	why_clocks(t, now, w->at);
	w->known = 1;
}

/*
 * The wait begun last added wait ns to its row at now; rel: the release
 * that woke it (site 0: none seen).  Global (why.bpf.c): checked once by
 * the verifier, not at every program's call.
 */
int why_wait_end(const struct sp_key *row, const struct sp_release *rel,
		 __u64 now, __u64 wait);

/* Full mode: a call that did not block (why.bpf.c). */
int why_call_unblocked(const struct sp_key *row, __u64 wait);

/*
 * Full mode: the lock call of row that began at t0 (why_wait_begin's
 * now) returned at now, having blocked, with wait ns added to its row.
 * Its release is the last of its lock by another thread during the call
 * (hold.bpf.c records each, with the releaser's clocks); none: site 0.
 * A call whose record a nested call (a signal handler's) took over is
 * left out: its wait stays uncharged, as the calls that never blocked.
 */
static __always_inline void why_call_end(const struct sp_key *row, __u64 t0,
					 __u64 now, __u64 wait)
{
	struct sp_why_wait *w;
	const struct sp_release *rel;
	__u64 object = row->object;

	w = bpf_task_storage_get(&why_waits, bpf_get_current_task_btf(), 0, 0);
	if (!w || w->t0 != t0)
		return;
	rel = bpf_map_lookup_elem(&releases, &object);
	if (!rel || rel->ts < t0 || rel->tid == row->tid)
		rel = &why_no_release;
	why_wait_end(row, rel, now, wait);
}

#endif
