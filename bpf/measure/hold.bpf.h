/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --hold (full mode): how long each lock was held, from the return of the
 * call that took it to the entry of the unlock that let it go, charged to
 * the row of the call that took it.  The maps are defined in hold.bpf.c;
 * full.bpf.c begins holds, the unlock probe ends them.
 *
 * Holds are kept per lock, not per thread: a mutex has one holder, so
 * the lock's address finds the hold its unlock ends, however many locks
 * the thread holds.  A recursive mutex taken again by its holder deepens
 * the hold; only the outermost unlock ends it.  A condvar wait lets its
 * mutex go at entry (that hold ends there) and takes it back before it
 * returns (a new hold, charged to the wait's row).
 *
 * An rwlock's readers hold it together: a reader's hold is keyed by the
 * lock and the reader, a writer's (and every other kind's) by the lock
 * alone.  pthread_rwlock_unlock does not say which it ends: it ends the
 * thread's write hold if there is one, else its read hold.  A semaphore
 * and a barrier hold nothing (sem_post is often another thread's).
 */
#ifndef SYNCPROF_HOLD_BPF_H
#define SYNCPROF_HOLD_BPF_H

/* A lock held now. */
struct sp_hold {
	struct sp_key key;	/* the row of the call that took it */
	__u64 t0;		/* when that call returned */
	__u32 tid;		/* the holder */
	__u32 depth;		/* recursive takes by the holder */
	__u32 epoch;		/* --duty: the on-slice it began in */
	__u32 pad;
};

/* Defined in hold.bpf.c. */
extern const volatile __u32 hold_enabled;

/* The holds map's key: reader 0 for an exclusive hold. */
struct sp_hold_key {
	__u64 lock;
	__u32 reader;		/* an rwlock reader's TID */
	__u32 pad;
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sp_hold_key);
	__type(value, struct sp_hold);
	__uint(max_entries, 16384);
} holds_map_t;
extern holds_map_t holds SEC(".maps");
/* Per row: count = holds ended, wait_ns = their time, max_ns = longest. */
extern stats_map_t hold_stats SEC(".maps");

static __always_inline void hold_begin(const struct sp_key *key, __u64 lock,
				       __u32 tid, __u64 now)
{
	struct sp_hold_key hk = {
		.lock = lock,
		.reader = key->type == SP_TYPE_RWLOCK_R ? tid : 0,
	};
	struct sp_hold *h = bpf_map_lookup_elem(&holds, &hk);
	struct sp_hold fresh = { .key = *key, .t0 = now, .tid = tid, .depth = 1,
				 .epoch = duty_epoch };

	if (h && h->tid == tid && h->epoch == duty_epoch) {
		h->depth++;	/* recursive: the outermost hold goes on */
		return;
	}
	/* A hold left by an unlock not seen (another path) is replaced. */
	if (bpf_map_update_elem(&holds, &hk, &fresh, BPF_ANY))
		counter_bump(SP_CNT_DROPPED_STATS);
}

/* Ends tid's hold under hk: true if it had one there. */
static __always_inline bool hold_end_at(struct sp_hold_key *hk, __u32 tid,
					__u64 now)
{
	struct sp_hold *h = bpf_map_lookup_elem(&holds, hk);
	__u64 ns;

	if (!h || h->tid != tid)
		return false;	/* not taken under the probes, or not ours */
	if (h->epoch != duty_epoch) {
		/* Taken before the probes went off: its length is unknown. */
		bpf_map_delete_elem(&holds, hk);
		counter_bump(SP_CNT_DUTY_CUT);
		return true;
	}
	if (--h->depth)
		return true;
	ns = now > h->t0 ? now - h->t0 : 0;
	value_add(&hold_stats, &h->key, ns, ns, 1, 0);
	bpf_map_delete_elem(&holds, hk);
	return true;
}

/* An exclusive lock's unlock (a mutex, a spinlock, a condvar's mutex). */
static __always_inline void hold_end(__u64 lock, __u32 tid, __u64 now)
{
	struct sp_hold_key hk = { .lock = lock };

	hold_end_at(&hk, tid, now);
}

/* pthread_rwlock_unlock: the thread's write hold, else its read hold. */
static __always_inline void hold_end_rw(__u64 lock, __u32 tid, __u64 now)
{
	struct sp_hold_key hk = { .lock = lock };

	if (hold_end_at(&hk, tid, now))
		return;
	hk.reader = tid;
	hold_end_at(&hk, tid, now);
}

#endif
