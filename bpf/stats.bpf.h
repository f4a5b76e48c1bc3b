/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every program shares: the declarations of stats.bpf.c's maps and
 * settings, and the helpers that update them.
 *
 * Counters are per-CPU but updated atomically: uprobe programs run
 * preemptibly, and two tasks on one CPU may update the same slot.  Rows
 * are updated atomically too.
 */
#ifndef SYNCPROF_STATS_BPF_H
#define SYNCPROF_STATS_BPF_H

#include "errno.bpf.h"

/* Defined in stats.bpf.c. */
extern const volatile __u32 target_tgid;
/* Several processes: the targets map, not target_tgid, says which. */
extern const volatile __u32 multi_target;
/* -v: the programs time their own work per wait (two clock reads). */
extern const volatile __u32 wait_timing;
/*
 * --duty: the on-slice the probes are in (the loader counts it up each
 * time it attaches them again).  A call or hold begun in an earlier one
 * lost its end while the probes were off: it is dropped, counted as cut.
 */
extern volatile __u32 duty_epoch;
/*
 * --duty: 1 while the slice's window is open (the loader opens it once
 * the probes are attached, closes it before they are detached): only a
 * call entering then is followed, so the time sampled is the window's,
 * measured by the loader at the two stores, not the attach's or detach's.
 * Always 1 without --duty.
 */
extern volatile __u32 duty_open;
extern const volatile __u32 rows_by_thread;
/* Report window, advanced by the loader before each read. */
extern volatile __u64 window;
/*
 * Filters, set before load.  Each drops a wait as early as what it needs
 * is known, so that a filtered wait costs the least work: a thread
 * (--tid) before anything, even the walk out of libc; a type and an
 * object (--type, --object) once the wait's lock is known (contended
 * mode: after the walk that classifies it; full mode: at the call's
 * entry, before its walk); a length (--min-wait) when the wait ends.
 */
extern const volatile __u32 filter_tids;	/* 1: only tid_filter's threads */
extern const volatile __u32 filter_types;	/* bit per sp_lock_type; 0: all */
extern const volatile __u64 filter_object_start; /* [start, end) */
extern const volatile __u64 filter_object_end;	/* 0: any object */
extern const volatile __u64 min_wait_ns;	/* shorter waits: not counted */

/* --tid: the threads measured (value unused). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} tid_filter_map_t;
extern tid_filter_map_t tid_filter SEC(".maps");

static __always_inline bool thread_wanted(__u32 tid)
{
	return !filter_tids || bpf_map_lookup_elem(&tid_filter, &tid);
}

static __always_inline bool lock_wanted(__u32 type, __u64 object)
{
	if (filter_types && (type >= 32 || !(filter_types & (1u << type))))
		return false;
	return !filter_object_end || (object >= filter_object_start &&
				      object < filter_object_end);
}

/*
 * One value per row, not per CPU: a row is keyed by its thread, so one
 * CPU at a time updates it (atomics, no bouncing), and the map costs its
 * rows, not rows x CPUs (131,072 rows x 64 CPUs x 64 bytes would be
 * 512 MiB preallocated).  Allocated as rows appear; the loader takes the
 * rows of exited threads out (user/waits/fold.c).
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sp_key);
	__type(value, struct sp_value);
	__uint(max_entries, 131072);
} stats_map_t;
extern stats_map_t stats SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, SP_CNT__COUNT);
} counters_map_t;
extern counters_map_t counters SEC(".maps");

/* 1 MiB: ~26,000 events, a second of forks and exits of a busy server. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} module_events_map_t;
extern module_events_map_t module_events SEC(".maps");

/* A set of processes by tgid (value: unused), memory as used. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 32768);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} pid_set_map_t;

/*
 * --children, --all: the processes forked that the loader has not read
 * yet (follow.bpf.c adds them at fork).  The loader reads a process's
 * mappings and builds its tables at its first wait, not at its fork,
 * exec and each library load: most short processes never wait.  The
 * first wait takes the process out of the map and tells the loader
 * (SP_MODULE_EVENT_WAIT), once: the delete that succeeds is the one.
 */
extern pid_set_map_t unread_procs SEC(".maps");

/*
 * The processes inside a dlclose: from the loader's call that says
 * RT_DELETE to its call that says RT_CONSISTENT (modwatch.bpf.c); taken
 * out at the second call or at the exit.
 */
extern pid_set_map_t unloading SEC(".maps");

/*
 * The followed processes, by tgid (value: unused, 1): filled by the
 * loader with the --pid processes, and by follow.bpf.c at fork time with
 * their new children (--children), before the child runs its first
 * instruction, so its first waits are counted.
 */
#define SP_MAX_TARGETS	SP_UNWIND_MAX_PROCS

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 4096);
} targets_map_t;
extern targets_map_t targets SEC(".maps");

static __always_inline void counter_bump(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &which);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void counter_add(__u32 which, __u64 value)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &which);

	if (n)
		__sync_fetch_and_add(n, value);
}

/*
 * -v's own clock around a program's work for a wait: the thread's
 * involuntary context switches at the start.  The programs run
 * preemptibly (uprobes, and syscall tracepoints since Linux 6.13), and
 * on a loaded machine one preemption in a thousand runs outweighs all
 * the others: a run whose thread was switched out meanwhile is left out
 * (counted apart), its time being another task's.
 */
static __always_inline __u32 timing_mark(void)
{
	return wait_timing ? (__u32)bpf_get_current_task_btf()->nivcsw : 0;
}

/* Adds end - start unless preempted since mark; counts a wait if asked. */
static __always_inline void timing_add(__u64 start, __u64 end, __u32 mark,
				       bool wait)
{
	if (!wait_timing)
		return;
	if ((__u32)bpf_get_current_task_btf()->nivcsw != mark) {
		counter_bump(SP_CNT_TIMING_PREEMPTED);
		return;
	}
	counter_add(SP_CNT_WAIT_BPF_NS, end - start);
	if (wait)
		counter_bump(SP_CNT_WAITS);
}

/*
 * The value at key in map, inserted as *init when there was none: one
 * update with BPF_NOEXIST, so that of two CPUs inserting the same key at
 * once, one inserts and the other finds it (*inserted: this call's insert
 * is the value).  NULL: the map is full (or the entry went meanwhile);
 * the caller counts what it drops.
 */
static __always_inline void *map_lookup_or_init(void *map, const void *key,
						const void *init,
						bool *inserted)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	*inserted = false;
	if (v)
		return v;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return NULL;
	*inserted = !err;
	return bpf_map_lookup_elem(map, key);
}

/*
 * The kernel already filters pid-attached uprobes by process; this check
 * (a few ns) keeps the programs right for a forked child that inherited
 * the breakpoints before the kernel removed them from it.
 */
static __always_inline bool is_target(__u64 pid_tgid)
{
	__u32 tgid = (__u32)(pid_tgid >> 32);

	if (!multi_target)
		return tgid == target_tgid;
	/* One hash lookup (~20 ns) per event of every process. */
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/*
 * Several processes: whether an event can wait for the loader's next
 * wake-up (another event's, or its housekeeping tick, where it takes the
 * ring first): a fork read at its first wait, the exec of a process not
 * read yet, the end of a dlclose (the tables were marked stale at its
 * start: walks go by file until the loader re-reads), an exit.  Each
 * had woken the loader, three times for every
 * short program of a fork/exec storm that never waits.  The others wake
 * it always: a record that does not wake would keep the ring's own
 * wake-up (only when the loader has read everything before) from the
 * next.
 */
static __always_inline __u64 module_event_wakeup(__u32 type, __u32 tgid,
						 __u32 parent)
{
	if (!multi_target)
		return 0;
	if ((type == SP_MODULE_EVENT_FORK && !(parent & SP_FORK_READ_NOW)) ||
	    (type == SP_MODULE_EVENT_LOAD && (parent & SP_LOAD_UNLOADED)) ||
	    (type == SP_MODULE_EVENT_EXEC &&
	     bpf_map_lookup_elem(&unread_procs, &tgid)) ||
	    type == SP_MODULE_EVENT_EXIT || type == SP_MODULE_EVENT_THREAD_EXIT)
		return BPF_RB_NO_WAKEUP;
	return BPF_RB_FORCE_WAKEUP;
}

/* Tells the loader something happened in process tgid. */
static __always_inline void module_event(__u32 type, __u32 tgid,
					 __u32 parent)
{
	struct sp_module_event_rec *ev;

	ev = bpf_ringbuf_reserve(&module_events, sizeof(*ev), 0);
	if (ev) {
		ev->type = type;
		ev->tgid = tgid;
		ev->parent = parent;
		ev->pad = 0;
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
		bpf_ringbuf_submit(ev, module_event_wakeup(type, tgid, parent));
	} else {
		counter_bump(SP_CNT_LOST_PROC_EVENTS);
	}
}

/*
 * A wait (or, in full mode, a lock call) in a process the loader has not
 * read: its first tells the loader (unread_procs).  One hash delete that
 * fails for every later wait.
 */
static __always_inline void first_wait(__u64 pid_tgid)
{
	__u32 tgid = (__u32)(pid_tgid >> 32);

	if (multi_target && !bpf_map_delete_elem(&unread_procs, &tgid))
		module_event(SP_MODULE_EVENT_WAIT, tgid, 0);
}

static __always_inline __u32 mutex_type(__u64 mutex)
{
	__u32 kind = 0;

	bpf_probe_read_user(&kind, sizeof(kind),
			    (void *)(mutex + SP_MUTEX_KIND_OFFSET));
	if ((kind & SP_MUTEX_KIND_MASK) == SP_MUTEX_KIND_RECURSIVE)
		return SP_TYPE_REC_MUTEX;
	return SP_TYPE_MUTEX;
}

/*
 * A row's histogram (see struct sp_hist), in a hash shared by the CPUs:
 * one map, not a slot array in the per-CPU value, whose 384 bytes would
 * be preallocated for every row on every CPU (16384 rows: 6 MB per CPU);
 * allocated on first use, so it costs only the rows that exist.  Its
 * lookup and atomic add cost ~17 ns per wait that ends (full mode's
 * return program: 100 -> 117 ns, medians of 5 runs of 200,000 calls,
 * kernel.bpf_stats_enabled), against ~2 us for the probes themselves.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sp_key);
	__type(value, struct sp_hist);
	__uint(max_entries, 16384);
} hists_map_t;
extern hists_map_t hists SEC(".maps");

/* A zeroed histogram to insert (too large for the BPF stack). */
static const struct sp_hist hist_zero;

/* floor(log2(v)) for v > 0, without loops. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = (v > 0xffffffffull) << 5, shift;

	v >>= r;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	return r | (__u32)(v >> 1);
}

static __always_inline void hist_add(struct sp_key *key, __u64 ns)
{
	__u32 slot = ns ? log2_u64(ns) + 1 : 0;
	bool inserted;
	struct sp_hist *h = map_lookup_or_init(&hists, key, &hist_zero,
					       &inserted);

	if (!h) {
		counter_bump(SP_CNT_DROPPED_STATS);
		return;
	}
	if (slot >= SP_HIST_SLOTS)
		slot = SP_HIST_SLOTS - 1;
	__sync_fetch_and_add(&h->slot[slot], 1);
}

/*
 * Adds one wait to key's row of a map of sp_values (the stats map, and
 * the maps of --blame and --hold): count and failed grow by their
 * increments, and max_candidate_ns (the wait, or the whole acquisition so
 * far) may raise the maxima; a failure adds max_candidate_ns to failed_ns.
 */
/*
 * Adds a wait to key's row of map; a row that cannot be made (the map
 * full) bumps the counter full: the stats map's is a wait lost, a side
 * map's (--blame's charges) only that side's record of it.
 */
static __always_inline void value_add_or(void *map, struct sp_key *key,
					 __u64 wait_ns, __u64 max_candidate_ns,
					 __u64 count_inc, __u64 failed_inc,
					 __u32 full)
{
	__u64 cur_window = window;
	__u64 failed_ns = failed_inc ? max_candidate_ns : 0;
	const struct sp_value init = {
		.count = count_inc,
		.wait_ns = wait_ns,
		.max_ns = max_candidate_ns,
		.failed = failed_inc,
		.failed_ns = failed_ns,
		.window_max_ns = max_candidate_ns,
		.window = cur_window,
	};
	bool inserted;
	struct sp_value *v = map_lookup_or_init(map, key, &init, &inserted);

	if (!v) {
		counter_bump(full);
		return;
	}
	if (inserted)
		return;		/* the wait is the row */
	if (count_inc)
		__sync_fetch_and_add(&v->count, count_inc);
	if (failed_inc) {
		__sync_fetch_and_add(&v->failed, failed_inc);
		__sync_fetch_and_add(&v->failed_ns, failed_ns);
	}
	__sync_fetch_and_add(&v->wait_ns, wait_ns);
	if (max_candidate_ns > v->max_ns)
		v->max_ns = max_candidate_ns;
	/*
	 * The loader advances the window, then reads: a call ending between
	 * the two starts the new window here, so the closing window's max
	 * moves to prev_* rather than being lost.  max_ns and these are plain
	 * read-modify-writes: two tasks preempting each other on one CPU in
	 * this very spot can lose a maximum, never a count or a wait.
	 */
	if (v->window != cur_window) {
		v->prev_window = v->window;
		v->prev_window_max_ns = v->window_max_ns;
		v->window = cur_window;
		v->window_max_ns = max_candidate_ns;
	} else if (max_candidate_ns > v->window_max_ns) {
		v->window_max_ns = max_candidate_ns;
	}
}

static __always_inline void value_add(void *map, struct sp_key *key,
				      __u64 wait_ns, __u64 max_candidate_ns,
				      __u64 count_inc, __u64 failed_inc)
{
	value_add_or(map, key, wait_ns, max_candidate_ns, count_inc,
		     failed_inc, SP_CNT_DROPPED_STATS);
}

/*
 * Adds one wait to key's row of the stats map; a wait that ends (counted
 * or failed) also goes into the row's histogram, with max_candidate_ns:
 * the call, or the acquisition's whole blocked time.
 */
/*
 * The stats map's row of a wait's key.  Rows by thread only when
 * something reads them so (--per-thread, the live screen's toggle,
 * --hold, --blame, --states): else a server's threads share its rows,
 * and the loader's memory, a row of every lock by every thread
 * (memcached's item locks x its workers: a quarter of the rows), shrinks
 * with them.
 */
static __always_inline struct sp_key stats_row(const struct sp_key *key)
{
	struct sp_key row = *key;

	if (!rows_by_thread)
		row.tid = 0;
	return row;
}

static __always_inline void stats_add(struct sp_key *key, __u64 wait_ns,
				      __u64 max_candidate_ns, __u64 count_inc,
				      __u64 failed_inc)
{
	struct sp_key row = stats_row(key);

	value_add(&stats, &row, wait_ns, max_candidate_ns, count_inc,
		  failed_inc);
	if (count_inc | failed_inc)
		hist_add(&row, max_candidate_ns);
}

/*
 * Another tool's return probe (a uretprobe on a libc function, from
 * bpftrace or perf) replaces the return address on the stack with the
 * kernel's trampoline and keeps the real one in the thread's
 * return_instances, keyed by the slot's address.  Returns it, or ra.
 */
static __always_inline __u64 real_return_address(__u64 slot, __u64 ra)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri;
	struct uprobe_task *ut;

	/*
	 * Kernel internals, not an ABI: on a kernel whose uprobe structures
	 * lack these fields (CO-RE finds them by name), the address stays
	 * as read rather than the programs failing to load.
	 */
	if (!bpf_core_field_exists(struct task_struct, utask) ||
	    !bpf_core_field_exists(struct uprobe_task, return_instances) ||
	    !bpf_core_field_exists(struct return_instance, stack) ||
	    !bpf_core_field_exists(struct return_instance, orig_ret_vaddr) ||
	    !bpf_core_field_exists(struct return_instance, next))
		return ra;
	/*
	 * Read, not loaded: a pointer field loaded from a trusted task
	 * makes the verifier search the kernel's BTF by name for the
	 * field's trust rule, at each of its many visits of this inlined
	 * code (~8% of the attach's CPU here).  Two reads, as before.
	 */
	ut = BPF_CORE_READ(task, utask);
	if (!ut)
		return ra;
	ri = BPF_CORE_READ(ut, return_instances);
	for (int i = 0; i < 4 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == slot)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	return ra;
}

#endif
