/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --record: the declarations of record.bpf.c's ring buffer and settings,
 * and record_wait(), which both modes call where a wait ends, right
 * after stats_add().
 *
 * Recording off costs nothing: record_on is read-only data set before
 * load, so the verifier removes the body as dead code (one load of the
 * switch stays).  Recording
 * on costs one ring reservation and a copy of 88 bytes, and no wakeup:
 * waking the writer (an irq_work, a self-IPI, which traps on these
 * virtual machines) took ~0.8 us a wait in full mode and ~4.5 us in
 * contended mode (make bench, the kernel's BPF stats), so the writer
 * drains on a timer and is woken only as the ring fills past a quarter,
 * a half and three quarters: the wait whose reservation crosses one of
 * those marks wakes it, the others do not (waking on every wait past a
 * mark cost ~0.2-0.5 us a wait with a 64 KiB ring).  A full ring
 * drops the event in the kernel (the target never waits for syncprof),
 * counts it (SP_CNT_DROPPED_RING) and keeps, per thread, how many were
 * lost since that thread's last recorded wait: its next recorded wait
 * carries the count, so the timeline marks the gap where it is.  Threads
 * that never record again leave theirs in record_lost, which the loader
 * reads at the end.
 */
#ifndef SYNCPROF_RECORD_BPF_H
#define SYNCPROF_RECORD_BPF_H

/* Defined in record.bpf.c. */
extern const volatile __u32 record_on;
/* Past this many bytes waiting in the ring, the writer is woken at once. */
extern const volatile __u64 record_wake_bytes;
/* Set at the first loss: only then does a recorded wait look for losses. */
extern volatile __u32 record_lost_pending;

typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* --ring-size, set by the loader */
} record_ring_t;
extern record_ring_t record_ring SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);		/* tid */
	__type(value, struct sp_lost);
	__uint(max_entries, 8192);
} record_lost_t;
extern record_lost_t record_lost SEC(".maps");

static __always_inline void record_lose(__u32 tid, __u64 start_ns)
{
	struct sp_lost *lost, first = { .count = 1, .first_ns = start_ns };

	counter_bump(SP_CNT_DROPPED_RING);
	record_lost_pending = 1;
	lost = bpf_map_lookup_elem(&record_lost, &tid);
	if (!lost) {
		/* Full table: the loss stays counted, told at the end. */
		bpf_map_update_elem(&record_lost, &tid, &first, BPF_NOEXIST);
		return;
	}
	if (!lost->count)
		lost->first_ns = start_ns;
	__sync_fetch_and_add(&lost->count, 1);
}

/* Bytes a wait takes in the ring: the record and the ring's 8-byte header. */
#define RECORD_SLOT (sizeof(struct sp_wait_event) + 8)

/* Whether the reservation that left `avail` bytes waiting crossed a mark. */
static __always_inline bool record_crossed(__u64 avail)
{
	return avail >= record_wake_bytes && record_wake_bytes &&
	       avail / record_wake_bytes != (avail - RECORD_SLOT) / record_wake_bytes;
}

/*
 * One wait of key's thread, [start_ns, end_ns), added to key's row with
 * max_ns as its candidate maximum and flags saying what it counted.
 */
static __always_inline void record_wait(const struct sp_key *key,
					__u64 start_ns, __u64 end_ns,
					__u64 max_ns, __u32 flags)
{
	struct sp_wait_event *e;

	if (!record_on)
		return;
	e = bpf_ringbuf_reserve(&record_ring, sizeof(*e), 0);
	if (!e) {
		record_lose(key->tid, start_ns);
		return;
	}
	e->key = *key;
	e->start_ns = start_ns;
	e->end_ns = end_ns;
	e->max_ns = max_ns;
	e->flags = flags;
	e->window = (__u32)window;
	e->lost = 0;
	e->lost_ns = 0;
	e->pad = 0;
	if (record_lost_pending) {
		__u32 tid = key->tid;
		struct sp_lost *lost = bpf_map_lookup_elem(&record_lost, &tid);

		/* Only this thread's own programs change its entry. */
		if (lost && lost->count) {
			e->lost = (__u32)lost->count;
			e->lost_ns = lost->first_ns;
			lost->count = 0;
		}
	}
	bpf_ringbuf_submit(e, record_crossed(bpf_ringbuf_query(&record_ring,
							       BPF_RB_AVAIL_DATA))
			      ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

#endif
