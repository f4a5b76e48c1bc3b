// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's programs, a skeleton of their own (skel/whatif.skel.h),
 * loaded only for the experiment and destroyed when it ends: the kernel
 * removes a uprobe with its last link, so the target runs as before once
 * syncprof's links are gone, SIGKILL included.
 *
 * whatif_release, on the unlock functions, lengthens the holds of one
 * object: it spins for delay_ns on bpf_ktime_get_ns() (bpf_loop) before
 * the release runs, so the holder keeps the lock that much longer.  A
 * spin, not a sleep: a uprobe's program cannot sleep, and a spin keeps
 * the holder on its CPU as a longer critical section would.  Bounded
 * twice: WHATIF_MAX_DELAY_NS per release, budget_ns in all (then it
 * counts over_budget and delays nothing).
 *
 * PostgreSQL's lightweight locks are lengthened the same way, at
 * LWLockRelease(lock) in the program's own file; their acquisitions
 * return a bool: LWLockAcquire always holds the lock on return
 * (whatif_locked_any), LWLockConditionalAcquire and LWLockAcquireOrWait
 * only when they return true (whatif_locked_true).
 *
 * The hold phase times the object's holds (lock return to unlock) with
 * whatif_lock/whatif_locked, attached for that phase only: a return probe
 * costs every lock call, and the delay windows are better without it.
 * whatif_switch, attached with them, counts the time holders spent off
 * a CPU while holding (preempted on a busy machine, or asleep): the
 * lock's arithmetic shortens the whole hold, the CPUs' bound only frees
 * the part on a CPU.
 *
 * The hold phase also times the object's handoffs and its waiters'
 * wake-ups: a release (the unlock probe's clock) to the next lock call's
 * return by a thread that called before the release (a thread that came
 * after found the lock free: no handoff).  A waiter woken (sched_waking)
 * after that release and before its call returned is a woken handoff:
 * whatif_switch times its wake-up (woken -> on a CPU) and, when the CPU
 * it ran on was idle until then, how long that CPU had been idle when
 * it was woken (the per-CPU time it switched to the idle task); the
 * wake-ups of every waiter (wake_bins) make the curve latency(idle),
 * the woken handoffs' (handoff_bins) say where on it the handoffs sit
 * (user/whatif/wakecurve.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "whatifbpf.h"
#include "errno.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Written by user space between windows (the .bss is mapped). */
__u64 object;		/* the lock whose holds are lengthened */
__u64 delay_ns;		/* 0: none */
__u64 budget_ns;	/* total delay allowed */
__u32 observing;	/* the hold phase: progress threads noted */
__u64 released_ns;	/* the object's last release */
struct whatif_counts counts;
struct whatif_wakebin wake_bins[WHATIF_WAKE_BINS];
struct whatif_wakebin handoff_bins[WHATIF_WAKE_BINS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct whatif_taking);
} taking SEC(".maps");		/* tid -> calling lock on the object */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} idle_since SEC(".maps");	/* when this CPU switched to idle; 0: busy */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} held_since SEC(".maps");	/* tid -> when it took the object */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} switched_out SEC(".maps");	/* tid -> when its holder left the CPU */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct whatif_holder);
	__type(value, __u8);
} holders SEC(".maps");		/* the threads that held each object */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WHATIF_MAX_PROCESSES);
	__type(key, __u32);
	__type(value, __u8);
} processes SEC(".maps");	/* the experiment's tgids */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WHATIF_MAX_PROGRESS);
	__type(key, __u32);
	__type(value, __u8);
} progress_threads SEC(".maps");	/* tids that made progress */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WHATIF_MAX_WAKES);
	__type(key, struct whatif_wake);
	__type(value, __u64);
} wakes SEC(".maps");		/* waker -> wakee: how many */

static long spin_until(__u64 index, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

SEC("uprobe")
int BPF_KPROBE(whatif_release, void *lock)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 want = delay_ns, start, end, *since;

	if ((__u64)lock != object)
		return 0;
	start = bpf_ktime_get_ns();
	since = bpf_map_lookup_elem(&held_since, &tid);
	if (since) {
		struct whatif_holder h = { .object = object, .tid = tid };
		__u8 one = 1;

		if (!bpf_map_update_elem(&holders, &h, &one, BPF_NOEXIST))
			__sync_fetch_and_add(&counts.holders, 1);
		__sync_fetch_and_add(&counts.holds, 1);
		__sync_fetch_and_add(&counts.hold_ns, start - *since);
		bpf_map_delete_elem(&held_since, &tid);
		bpf_map_delete_elem(&switched_out, &tid);
		released_ns = start;
	}
	if (!want)
		return 0;
	if (want > WHATIF_MAX_DELAY_NS)
		want = WHATIF_MAX_DELAY_NS;
	if (counts.injected_ns + want > budget_ns) {
		__sync_fetch_and_add(&counts.over_budget, 1);
		return 0;
	}
	end = start + want;
	bpf_loop(WHATIF_SPIN_LOOPS, spin_until, &end, 0);
	__sync_fetch_and_add(&counts.injected, 1);
	__sync_fetch_and_add(&counts.injected_ns, bpf_ktime_get_ns() - start);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(whatif_progress)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;
	long err;

	__sync_fetch_and_add(&counts.progress, 1);
	if (!observing || bpf_map_lookup_elem(&progress_threads, &tid))
		return 0;
	err = bpf_map_update_elem(&progress_threads, &tid, &one, BPF_NOEXIST);
	if (err && err != -EEXIST)
		__sync_fetch_and_add(&counts.reach_lost, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(whatif_acquire)
{
	__sync_fetch_and_add(&counts.acquisitions, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(whatif_lock, void *lock)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct whatif_taking t = { .since = bpf_ktime_get_ns() };

	if ((__u64)lock == object &&
	    bpf_map_update_elem(&taking, &tid, &t, BPF_ANY))
		__sync_fetch_and_add(&counts.waiter_lost, 1);
	return 0;
}

/* The bin of a wake-up after `idle` ns of the CPU's idle. */
static __always_inline __u32 wake_bin(__u64 idle)
{
	__u64 top = 2 * WHATIF_WAKE_FINE_NS;
	__u32 bin = WHATIF_WAKE_FINE;

	if (idle < WHATIF_WAKE_FINE_NS)
		return (__u32)(idle / WHATIF_WAKE_STEP_NS);
	for (int i = 0; i < WHATIF_WAKE_COARSE - 1 && idle >= top; i++) {
		top *= 2;
		bin++;
	}
	return bin;
}

/* A woken handoff: its wake-up's bin gets the handoff too. */
static __always_inline void add_handoff(const struct whatif_taking *t,
					__u64 released, __u64 gap)
{
	__u32 bin = t->bin;

	__sync_fetch_and_add(&counts.handoffs, 1);
	__sync_fetch_and_add(&counts.handoff_ns, gap);
	if (!t->woken || !t->ran || t->woken < released ||
	    bin >= WHATIF_WAKE_BINS)
		return;
	__sync_fetch_and_add(&counts.handoffs_woken, 1);
	__sync_fetch_and_add(&handoff_bins[bin].count, 1);
	__sync_fetch_and_add(&handoff_bins[bin].idle_ns, t->idle);
	__sync_fetch_and_add(&handoff_bins[bin].lat_ns, t->ran - t->woken);
	__sync_fetch_and_add(&handoff_bins[bin].handoff_ns, gap);
}

/* A lock call on the object returns: held when `held`. */
static __always_inline int locked(bool held)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct whatif_taking *t = bpf_map_lookup_elem(&taking, &tid);
	__u64 now, released = released_ns;

	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	if (held && released && t->since < released && now > released)
		add_handoff(t, released, now - released);
	bpf_map_delete_elem(&taking, &tid);
	if (!held)
		return 0;
	bpf_map_update_elem(&held_since, &tid, &now, BPF_ANY);
	return 0;
}

/* pthread: 0 is success. */
SEC("uretprobe")
int BPF_KRETPROBE(whatif_locked, int ret)
{
	return locked(ret == 0);
}

SEC("uretprobe")
int BPF_KRETPROBE(whatif_locked_any)
{
	return locked(true);
}

/* A C bool: only its low byte is defined. */
SEC("uretprobe")
int BPF_KRETPROBE(whatif_locked_true, long ret)
{
	return locked((ret & 0xff) != 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(whatif_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 prev_tid = BPF_CORE_READ(prev, pid);
	__u32 next_tid = BPF_CORE_READ(next, pid);
	__u64 now = bpf_ktime_get_ns(), *out, *idle;
	struct whatif_taking *t;
	__u32 zero = 0;

	idle = bpf_map_lookup_elem(&idle_since, &zero);
	if (!idle)
		return 0;
	/* A waiter woken runs: its wake-up, by the CPU's idle before. */
	t = next_tid ? bpf_map_lookup_elem(&taking, &next_tid) : NULL;
	if (t && t->woken && !t->ran) {
		__u32 bin = WHATIF_WAKE_BUSY;
		__u64 before = 0;

		if (!prev_tid && *idle && *idle <= t->woken) {
			before = t->woken - *idle;
			bin = wake_bin(before);
		}
		t->ran = now;
		t->idle = before;
		t->bin = bin;
		/* Kept as a check the verifier sees, not folded away. */
		asm volatile("" : "+r"(bin));
		if (bin < WHATIF_WAKE_BINS) {
			__sync_fetch_and_add(&wake_bins[bin].count, 1);
			__sync_fetch_and_add(&wake_bins[bin].idle_ns, before);
			__sync_fetch_and_add(&wake_bins[bin].lat_ns,
					     now - t->woken);
		}
	}
	*idle = next_tid ? 0 : now;
	if (bpf_map_lookup_elem(&held_since, &prev_tid))
		bpf_map_update_elem(&switched_out, &prev_tid, &now, BPF_ANY);
	out = bpf_map_lookup_elem(&switched_out, &next_tid);
	if (out) {
		__sync_fetch_and_add(&counts.hold_off_ns, now - *out);
		bpf_map_delete_elem(&switched_out, &next_tid);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(whatif_waking, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 waker_tgid = (__u32)(id >> 32);
	__u32 wakee_tgid = BPF_CORE_READ(p, tgid);
	struct whatif_wake edge = { .waker = (__u32)id };
	__u64 one = 1, *n;
	long err;

	if (!bpf_map_lookup_elem(&processes, &waker_tgid) ||
	    !bpf_map_lookup_elem(&processes, &wakee_tgid))
		return 0;
	edge.wakee = BPF_CORE_READ(p, pid);
	n = bpf_map_lookup_elem(&wakes, &edge);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	err = bpf_map_update_elem(&wakes, &edge, &one, BPF_NOEXIST);
	if (err && err != -EEXIST)
		__sync_fetch_and_add(&counts.reach_lost, 1);
	return 0;
}

/* A waiter of the object woken: when (whatif_switch times the rest). */
SEC("tp_btf/sched_waking")
int BPF_PROG(whatif_waiter_woken, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct whatif_taking *t = bpf_map_lookup_elem(&taking, &tid);

	if (t) {
		t->woken = bpf_ktime_get_ns();
		t->ran = 0;
	}
	return 0;
}
