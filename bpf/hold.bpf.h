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
 */
#ifndef SYNCPROF_HOLD_BPF_H
#define SYNCPROF_HOLD_BPF_H

/* A lock held now. */
struct sp_hold {
	struct sp_key key;	/* the row of the call that took it */
	__u64 t0;		/* when that call returned */
	__u32 tid;		/* the holder */
	__u32 depth;		/* recursive takes by the holder */
};

/* Defined in hold.bpf.c. */
extern const volatile __u32 hold_enabled;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);			/* the lock */
	__type(value, struct sp_hold);
	__uint(max_entries, 16384);
} holds_map_t;
extern holds_map_t holds SEC(".maps");
/* Per row: count = holds ended, wait_ns = their time, max_ns = longest. */
extern stats_map_t hold_stats SEC(".maps");

static __always_inline void hold_begin(const struct sp_key *key, __u64 lock,
				       __u32 tid, __u64 now)
{
	struct sp_hold *h = bpf_map_lookup_elem(&holds, &lock);
	struct sp_hold fresh = { .key = *key, .t0 = now, .tid = tid, .depth = 1 };

	if (h && h->tid == tid) {
		h->depth++;	/* recursive: the outermost hold goes on */
		return;
	}
	/* A hold left by an unlock not seen (another path) is replaced. */
	if (bpf_map_update_elem(&holds, &lock, &fresh, BPF_ANY))
		counter_bump(SP_CNT_DROPPED_STATS);
}

static __always_inline void hold_end(__u64 lock, __u32 tid, __u64 now)
{
	struct sp_hold *h = bpf_map_lookup_elem(&holds, &lock);
	__u64 ns;

	if (!h || h->tid != tid)
		return;		/* not taken under the probes, or not ours */
	if (--h->depth)
		return;
	ns = now > h->t0 ? now - h->t0 : 0;
	value_add(&hold_stats, &h->key, ns, ns, 1, 0);
	bpf_map_delete_elem(&holds, &lock);
}

#endif
