/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --blame: who made them wait.  The maps are defined in blame.bpf.c; the
 * mode programs call these helpers where a lock is released and where a
 * wait ends.  A wait that a release ended is charged to it in the blame
 * map: a stats-like map whose key is the waiter's (type, object) with the
 * release's call site, stack and thread in place of the waiter's.
 *
 * Contended mode.  A release is a futex wake (or requeue) by a thread of
 * the target; its entry records where libc was called from in the
 * thread's task storage.  The kernel wakes each waiter from inside that
 * system call: sched_waking fires in the waker's context with the woken
 * task, and copies the record to woken_by[woken tid] (blame.bpf.c).  The
 * waiter's futex exit takes it: exact, whatever the order in which
 * wakers, waiters and CPUs run.  Rejected: the last release per futex
 * word, looked up by the waiter: a second release of the same word before
 * the woken waiter runs again (a steal, a second signal) takes the
 * charge; one futex call would be charged to a release it never saw.
 * The cost: a program on every wakeup of the machine while --blame runs,
 * which returns after the process filter for any other process.
 *
 * Across processes (several --pid, --children), a release in one ends a
 * wait in another: a lock in shared memory, one futex to the kernel
 * whatever address each process maps it at.  sched_waking takes any
 * followed process's waiter, and the charge keeps the waiter's process
 * beside the releaser's (blame_charge): the loader names each address
 * in its own process, and both by the backing object and offset.
 *
 * Full mode.  Uprobes on pthread_mutex_unlock and pthread_cond_signal /
 * _broadcast record each release per object (releases); a lock or wait
 * call that returns after another thread released its object during the
 * call is charged to the last such release.
 */
#ifndef SYNCPROF_BLAME_BPF_H
#define SYNCPROF_BLAME_BPF_H

/* x86-64 system call numbers: where a waker's registers say it is. */
#define SP_NR_FUTEX		202
#define SP_NR_FUTEX_WAKE	454

/* One release: where, by whom, when, of which futex word or object. */
struct sp_release {
	__u64 site;		/* the return address into the caller */
	__u64 stack_id;		/* its stack, 0 if none kept */
	__u64 uaddr;		/* contended: the word woken; full: the object */
	__u64 uaddr2;		/* a requeue's target word */
	__u64 ts;		/* bpf_ktime_get_ns() at the release (woken_by:
				   at the wakeup) */
	__u64 entry_ts;		/* contended: at the wake's entry, always */
	__u32 tid;
	__u32 cmd;		/* contended: the futex command */
	__u32 pid;		/* the releaser's process */
	__u32 clocked;		/* woken_by, --why: at[] holds the
				   releaser's clocks at the wakeup */
	__u64 at[5];		/* SP_WHY_CLOCKS, see why.bpf.h */
};

/* Defined in blame.bpf.c. */
extern const volatile __u32 blame_enabled;
/* The holds' charges (caused, recent): only when a report reads them. */
extern const volatile __u32 caused_enabled;

/* The release a thread is making (contended: its futex wake). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_release);
} releasing_map_t;
extern releasing_map_t releasing SEC(".maps");

/*
 * Keyed by a woken thread (contended mode) or by a requeued futex word:
 * the release that woke or moved it.  LRU: an entry whose waiter died
 * before taking it ages out.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct sp_release);
	__uint(max_entries, 4096);
} release_by_map_t;
extern release_by_map_t woken_by SEC(".maps");
extern release_by_map_t requeues SEC(".maps");
/* Full mode: the last release of each object. */
extern release_by_map_t releases SEC(".maps");
/* Waits charged to releases (max_entries set by the loader). */
extern stats_map_t blame SEC(".maps");

/*
 * The holds a wait overlapped (contended mode, for the findings): the
 * last SP_RECENT releases of each futex word, and the waits charged to
 * the holds they ended.  A waiter that queued during a long hold and was
 * woken later by a short holder's release charges the part of its wait
 * up to the long hold's release to that release, the next part to the
 * next release of the word, and so on to the release that woke it.
 * Rejected: charging the whole wait to the release that woke it (the
 * blame map's contract): a queue behind one long hold is then charged,
 * nearly all of it, to the short holders that emptied it.  Writers of a
 * word's ring race without a lock (tracing programs cannot take BPF spin
 * locks): a slot overwritten or out of order moves a part of a wait to
 * the next release, and every wait is still charged in full.
 */
#define SP_RECENT 8
struct sp_recent_rel {
	__u64 ts;		/* at the wake's entry */
	__u64 site;
	__u64 stack_id;
	__u32 tid;
	__u32 pid;
};
struct sp_recent {
	__u32 head;		/* the next slot, modulo SP_RECENT */
	__u32 pad;
	struct sp_recent_rel r[SP_RECENT];
};
typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct sp_recent);
	__uint(max_entries, 4096);
} recent_map_t;
extern recent_map_t recent SEC(".maps");
extern stats_map_t caused SEC(".maps");

/*
 * Charges ns of a wait on object (an address in the waiter's process,
 * the current one) to rel.  A release by another process (a lock in
 * shared memory) keys the row by the releaser's process, as its site and
 * stack are addresses there, and carries the waiter's process in
 * owner_tid (unused in blame rows otherwise): the loader translates the
 * object with it to the one identity every process shares, the backing
 * object and offset (user/session/follow.c), then clears it.
 */
static __always_inline void blame_charge(__u32 type, __u64 object,
					 const struct sp_release *rel, __u64 ns)
{
	__u32 waiter = (__u32)(bpf_get_current_pid_tgid() >> 32);
	struct sp_key key = {
		.object = object,
		.type = type,
		.pid = waiter,
	};

	if (rel) {
		key.callsite = rel->site;
		key.stack_id = rel->stack_id;
		key.tid = rel->tid;
		key.pid = rel->pid;
		if (rel->pid != waiter)
			key.owner_tid = waiter;
	}
	value_add_or(&blame, &key, ns, ns, 1, 0, SP_CNT_BLAME_FULL);
}

/*
 * A part of a wait, charged to the hold a release ended (caused): keyed
 * as blame_charge keys a release's row, the waiter's process in
 * owner_tid when the releaser is another.
 */
static __always_inline void caused_add(__u32 type, __u64 object, __u64 site,
				       __u64 stack_id, __u32 tid, __u32 pid,
				       __u64 ns, __u64 count)
{
	__u32 waiter = (__u32)(bpf_get_current_pid_tgid() >> 32);
	struct sp_key key = {
		.object = object,
		.type = type,
		.callsite = site,
		.stack_id = stack_id,
		.tid = tid,
		.pid = pid,
		.owner_tid = pid != waiter ? waiter : 0,
	};

	if (ns)
		value_add_or(&caused, &key, ns, ns, count, 0,
			     SP_CNT_CAUSED_FULL);
}

/*
 * A lock wait of [t0, now] (ns blocked, the parts not charged before
 * included) that rel woke: each part charged to the hold in progress
 * (see caused above).  The wait counts once, at the release that woke it.
 */
static __always_inline void caused_charge(__u32 type, __u64 object,
					  __u64 uaddr, __u64 t0, __u64 now,
					  __u64 ns, const struct sp_release *rel)
{
	struct sp_recent *rc = bpf_map_lookup_elem(&recent, &uaddr);
	__u64 from = t0, extra = ns > now - t0 ? ns - (now - t0) : 0;
	__u32 head;

	if (rc) {
		head = rc->head;
		for (__u32 k = SP_RECENT; k > 0; k--) {
			struct sp_recent_rel *e =
				&rc->r[(head - k) & (SP_RECENT - 1)];
			__u64 ts = e->ts;

			/* Between the wait's start and the release that
			 * woke it: a hold it waited through. */
			if (ts <= from || ts >= rel->entry_ts || ts >= now)
				continue;
			caused_add(type, object, e->site, e->stack_id, e->tid,
				   e->pid, ts - from + extra, 0);
			extra = 0;
			from = ts;
		}
	}
	caused_add(type, object, rel->site, rel->stack_id, rel->tid, rel->pid,
		   now - from + extra, 1);
}

/* Contended mode: a futex wake of a word, into the word's ring. */
static __always_inline void recent_note(const struct sp_release *rel)
{
	__u64 uaddr = rel->uaddr;
	struct sp_recent *rc = bpf_map_lookup_elem(&recent, &uaddr);
	struct sp_recent_rel *e;
	__u32 i;

	if (!rc) {
		struct sp_recent zero = {};

		bpf_map_update_elem(&recent, &uaddr, &zero, BPF_NOEXIST);
		rc = bpf_map_lookup_elem(&recent, &uaddr);
		if (!rc)
			return;
	}
	i = rc->head & (SP_RECENT - 1);
	rc->head = i + 1;
	e = &rc->r[i];
	e->ts = rel->entry_ts;
	e->site = rel->site;
	e->stack_id = rel->stack_id;
	e->tid = rel->tid;
	e->pid = rel->pid;
}

/* Contended mode, at a futex wake's entry: the release begins. */
static __always_inline void blame_release(__u64 site, __u64 stack_id,
					  __u64 uaddr, __u64 uaddr2, __u32 cmd,
					  bool requeue)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sp_release *rel;

	rel = bpf_task_storage_get(&releasing, bpf_get_current_task_btf(), 0,
				   BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!rel) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return;
	}
	rel->site = site;
	rel->stack_id = stack_id;
	rel->uaddr = uaddr;
	rel->uaddr2 = uaddr2;
	rel->ts = bpf_ktime_get_ns();
	rel->entry_ts = rel->ts;
	rel->tid = (__u32)pid_tgid;
	rel->pid = (__u32)(pid_tgid >> 32);
	rel->cmd = cmd;
	if (requeue)
		bpf_map_update_elem(&requeues, &uaddr, rel, BPF_ANY);
	else if (caused_enabled)
		recent_note(rel);
}

/*
 * Contended mode, when a wait of the acquisition in st ended woken (or
 * found its word changed), after [t0, now]: charges the blocked time not
 * yet charged (signals' interruptions roll into it) to the release that
 * woke the thread.  A wait that a requeue moved onto another word is
 * split at the requeue: before it, the requeue's; after, the release that
 * woke it on the new word (as a mutex wait when the first word was a
 * condvar's).  A wake no release was seen for is charged to release 0.
 * woke: the release charged last (zero: none), for --why.
 */
static __always_inline void blame_wait_end(struct sp_contended *st,
					   __u64 t0, __u64 now,
					   struct sp_release *woke)
{
	__u64 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ns = st->episode_ns - st->blamed_ns;
	struct sp_release rel, *found, *rq;

	st->blamed_ns = st->episode_ns;
	found = bpf_map_lookup_elem(&woken_by, &tid);
	if (!found) {
		blame_charge(st->key.type, st->key.object, NULL, ns);
		return;
	}
	rel = *found;
	bpf_map_delete_elem(&woken_by, &tid);
	if (rel.ts < t0 || rel.ts > now) {
		/* Left from a wakeup before this wait: not its release. */
		blame_charge(st->key.type, st->key.object, NULL, ns);
		return;
	}
	*woke = rel;
	if (rel.uaddr != st->uaddr) {
		rq = bpf_map_lookup_elem(&requeues, &st->uaddr);
		if (rq && rq->uaddr2 == rel.uaddr && rq->ts >= t0 &&
		    rq->ts <= rel.ts && now - rq->ts <= ns) {
			__u64 after = now - rq->ts;
			__u32 type = st->key.type == SP_TYPE_CONDVAR
				     ? mutex_type(rel.uaddr) : st->key.type;

			blame_charge(st->key.type, st->key.object, rq,
				     ns - after);
			blame_charge(type, rel.uaddr, &rel, after);
			return;
		}
	}
	blame_charge(st->key.type, st->key.object, &rel, ns);
	if (caused_enabled && rel.uaddr == st->uaddr &&
	    st->key.type != SP_TYPE_CONDVAR &&
	    st->key.type != SP_TYPE_BARRIER && st->key.type != SP_TYPE_JOIN &&
	    st->key.type != SP_TYPE_PARK)
		caused_charge(st->key.type, st->key.object, st->uaddr, t0,
			      now, ns, &rel);
}

/*
 * Full mode, when a lock call or condvar wait of row key returns with
 * the lock (or woken) after [t0, t0 + ns + calibration]: charged to the
 * last release of its object by another thread during the call, if any
 * (none: it never waited for one).
 */
static __always_inline void blame_full_charge(const struct sp_key *key,
					      __u64 t0, __u64 ns)
{
	__u64 object = key->object;
	struct sp_release *rel = bpf_map_lookup_elem(&releases, &object);

	if (rel && rel->ts >= t0 && rel->tid != key->tid)
		blame_charge(key->type, key->object, rel, ns);
}

#endif
