/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --lock-order (full mode): which locks each thread holds, and every pair
 * (held, then taken) it ever made, for the loader's order graph
 * (user/analysis/lockgraph.c finds its cycles).  The maps are defined in
 * lockorder.bpf.c; full.bpf.c calls lockorder_taken() when a call got its
 * lock and lockorder_released() when a condvar wait lets its mutex go;
 * the unlock probe (hold.bpf.c) calls lockorder_released().
 *
 * The held set is a small array in task storage, oldest first: a thread
 * rarely holds more than two or three locks, so a linear scan is cheaper
 * than any map, and the common call (nothing held) writes one slot.  An
 * edge is looked up, and inserted only the first time: its stacks are
 * the first ones seen, its count goes up atomically after that.
 *
 * lockdep's rules, as far as a pthread probe can see them:
 * - a lock its thread already holds, taken again (a recursive mutex, a
 *   reader twice), deepens the hold and makes no edge;
 * - a successful try function joins the held set but makes no edge into
 *   itself (it cannot wait, so it cannot deadlock there); a failed one
 *   changes nothing;
 * - an rwlock's readers and writers make edges alike, each with its type;
 *   glibc's default rwlock prefers readers, so a reader never waits for
 *   another reader: the loader drops a cycle whose only link through an
 *   rwlock is read after read;
 * - a condvar wait lets its mutex go at entry and takes it back on
 *   return: the re-acquire orders the mutex after every lock still held.
 * Locks taken before attach are unknown: their unlock finds nothing.
 */
#ifndef SYNCPROF_LOCKORDER_BPF_H
#define SYNCPROF_LOCKORDER_BPF_H

struct sp_held_lock {
	__u64 object;
	__u64 site;
	__u64 stack_id;
	__u32 type;
	__u32 depth;		/* takes by this thread, recursive ones too */
};

struct sp_heldset {
	struct sp_held_lock locks[SP_HELD_MAX];
	__u32 n;
	__u32 pad;
};

/* Defined in lockorder.bpf.c. */
extern const volatile __u32 lockorder_enabled;

typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_heldset);
} heldset_map_t;
extern heldset_map_t heldsets SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sp_order_key);
	__type(value, struct sp_order_edge);
	__uint(max_entries, 16384);	/* set by the loader */
} order_map_t;
extern order_map_t lock_order SEC(".maps");

static __always_inline struct sp_held_lock *held_slot(struct sp_heldset *hs,
						      __u32 i)
{
	barrier_var(i);
	return &hs->locks[i & (SP_HELD_MAX - 1)];
}

/* Locks in the set, bounded where the verifier sees it. */
static __always_inline __u32 held_count(const struct sp_heldset *hs)
{
	return hs->n > SP_HELD_MAX ? SP_HELD_MAX : hs->n;
}

/* An edge from held to the lock just taken. */
static __always_inline void order_edge(const struct sp_held_lock *held,
				       __u64 object, __u64 site,
				       __u64 stack_id, __u32 type, __u32 tid,
				       __u32 pid)
{
	struct sp_order_key key = {
		.held = held->object,
		.held_site = held->site,
		.acquired = object,
		.acquired_site = site,
		.pid = pid,
	};
	struct sp_order_edge *e = bpf_map_lookup_elem(&lock_order, &key);
	struct sp_order_edge fresh = {
		.count = 1,
		.held_stack_id = held->stack_id,
		.acquired_stack_id = stack_id,
		.tid = tid,
		.held_type = held->type,
		.acquired_type = type,
	};

	if (e) {
		__sync_fetch_and_add(&e->count, 1);
		return;
	}
	if (bpf_map_update_elem(&lock_order, &key, &fresh, BPF_NOEXIST)) {
		e = bpf_map_lookup_elem(&lock_order, &key);
		if (e)		/* another CPU inserted it first */
			__sync_fetch_and_add(&e->count, 1);
		else
			counter_bump(SP_CNT_DROPPED_ORDER);
	}
}

/* The current thread got object (site, stack_id: the call that took it). */
static __always_inline void lockorder_taken(__u64 object, __u64 site,
					    __u64 stack_id, __u32 type,
					    bool try)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sp_heldset *hs;
	struct sp_held_lock *slot;
	__u32 n;

	hs = bpf_task_storage_get(&heldsets, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!hs) {
		counter_bump(SP_CNT_HELD_OVERFLOW);
		return;
	}
	n = held_count(hs);
	for (__u32 i = 0; i < SP_HELD_MAX; i++) {
		if (i >= n)
			break;
		slot = held_slot(hs, i);
		if (slot->object == object) {
			slot->depth++;	/* taken again by its holder */
			return;
		}
	}
	if (!try) {
		for (__u32 i = 0; i < SP_HELD_MAX; i++) {
			if (i >= n)
				break;
			order_edge(held_slot(hs, i), object, site, stack_id,
				   type, (__u32)pid_tgid,
				   (__u32)(pid_tgid >> 32));
		}
	}
	if (n >= SP_HELD_MAX) {
		counter_bump(SP_CNT_HELD_OVERFLOW);
		return;
	}
	slot = held_slot(hs, n);
	slot->object = object;
	slot->site = site;
	slot->stack_id = stack_id;
	slot->type = type;
	slot->depth = 1;
	hs->n = n + 1;
}

/* The current thread let object go (its outermost hold ends the entry). */
static __always_inline void lockorder_released(__u64 object)
{
	struct sp_heldset *hs;
	__u32 n, at = SP_HELD_MAX;

	hs = bpf_task_storage_get(&heldsets, bpf_get_current_task_btf(), 0, 0);
	if (!hs)
		return;
	n = held_count(hs);
	/* Newest first: locks are most often let go in reverse order. */
	for (__u32 i = 0; i < SP_HELD_MAX; i++) {
		if (i >= n)
			break;
		if (held_slot(hs, n - 1 - i)->object == object) {
			at = n - 1 - i;
			break;
		}
	}
	if (at >= n)
		return;		/* taken before attach, or not tracked */
	if (--held_slot(hs, at)->depth)
		return;
	/* Close the gap, keeping the order in which the rest were taken. */
	for (__u32 i = 0; i < SP_HELD_MAX - 1; i++) {
		if (i < at)
			continue;
		if (i + 1 >= n)
			break;
		*held_slot(hs, i) = *held_slot(hs, i + 1);
	}
	hs->n = n - 1;
}

#endif
