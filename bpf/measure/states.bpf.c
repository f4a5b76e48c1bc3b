// SPDX-License-Identifier: GPL-2.0
/*
 * --states: where each thread of the target spends its time, from the
 * scheduler's classic tracepoints.  One entry per thread in `threads`
 * (key: TID) holds a state, when it began, and nanoseconds per state;
 * every event charges the time since the last one to one state, so a
 * thread's counters add up to its life without a gap.  The loader adds
 * the open interval of the current state when it reads.
 *
 *   sched_switch      prev (always the current task): running, then
 *                     runnable (preempted, still TASK_RUNNING), lock wait
 *                     (asleep inside a wait the mode's own programs have
 *                     in flight: contended's futex wait, full's pthread
 *                     call) or sleep; next: runnable (or the sleep whose
 *                     wakeup was not seen), then running
 *   sched_wakeup      sleep or lock wait, then runnable
 *   task_newtask      a thread cloned by the target (CLONE_THREAD): new,
 *                     counted from sched_wakeup_new, its first wakeup
 *   sched_process_exit  running, then dead: the entry keeps its totals
 *                     and name until the loader has read it
 *
 * Filtering.  These tracepoints fire for every task on the machine, and
 * every other process pays for them.  The switch-out side compares the
 * current task's tgid (a helper call); the switch-in and wakeup sides
 * know only a TID, so they look it up in `threads`, which holds the
 * target's threads only.  Measured here (2-vCPU PVM guest, pipe
 * ping-pong pinned to one CPU, best of 7 runs): ~900 ns per switch bare;
 * empty classic programs on sched_switch and sched_wakeup add 60-150 ns
 * (quiet machine / load average 5), and the tgid check with the hash
 * lookup add nothing measurable on top, so a bitmap pre-filter (tried)
 * measured no better.  Rejected: tp_btf (cannot load on these kernels),
 * raw tracepoints (~20 ns cheaper per switch, but their arguments are
 * kernel internals where the classic record is a stable format).
 *
 * Missed events.  Now and then the kernel switches a thread in without
 * the sched_switch event (seen here: 9 of 4,762 switches of four
 * spinners on two CPUs, in perf's and ftrace's records alike, with no
 * recursion miss counted), which would charge its wait for a CPU as
 * running.  At every switch-out the scheduler has just brought the
 * thread's own CPU time and run-queue wait up to date; settle() makes
 * what the events charged since the last switch-out agree with them.
 * Events that cannot follow a thread's state are counted (sched gaps).
 *
 * Stolen time (steal.bpf.h).  In a virtual machine the host may run
 * something else while a thread is on one of the guest's CPUs: that time
 * is in neither the thread's CPU time nor its run-queue wait.  The steal
 * its run queue accounted, read at the switch-in and again at the
 * switch-out (the thread does not change CPU in between), says how much
 * of the running the events charged beyond the kernel's CPU time is
 * stolen: settle() moves that much of the surplus, no more, to stolen_ns
 * (the run queue's steal is as of its last clock update, which a switch
 * may skip: read alone, it counted time stolen before a switch-in as the
 * thread's, and running fell below its CPU time).  A stretch whose
 * switch-in was missed counts none: settle() moves its surplus to
 * runnable, as before.
 *
 * Consistency.  A thread's events are serialized by the scheduler (its
 * run queue's lock), but the loader copies entries while they change:
 * each update is bracketed by two increments of seq, and the reader keeps
 * a copy only when it read the same even seq twice.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "waits.bpf.h"
#include "sched.bpf.h"
#include "threads.bpf.h"
#include "steal.bpf.h"

#define CLONE_THREAD		0x00010000
/* sched_switch's prev_state: TASK_REPORT_MAX (0x100) marks a preemption,
 * the bits below it the sleep; none of them: still runnable. */
#define TASK_REPORT_SLEEP_MASK	0xff

/* Which mode's in-flight waits name a lock wait (enum sp_lock_source). */
const volatile __u32 states_lock_source = SP_LOCKS_NONE;


/* The tracepoints' records (events/sched/.../format, task/task_newtask). */

struct sched_wakeup_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
};

/* follow.bpf.c: --children, children become targets as they fork. */
extern const volatile __u32 follow_children;

struct task_newtask_args {
	__u64 common;
	__s32 pid;
	char comm[16];
	__u32 pad;
	__u64 clone_flags;
};

struct sched_process_exit_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
};

static __always_inline void update_begin(struct sp_thread *t)
{
	__sync_fetch_and_add(&t->seq, 1);
}

static __always_inline void update_end(struct sp_thread *t)
{
	__sync_fetch_and_add(&t->seq, 1);
}

/*
 * The current thread's stretch on its CPU since its switch-in: the steal
 * its run queue accounted since then (0 when the switch-in is not known,
 * or was on another run queue), at most d.  The switch-in is used up.
 */
static __always_inline __u64 stolen_since_in(struct sp_thread *t, __u64 d)
{
	__u64 rq = steal_rq(), steal, stolen = 0;

	if (rq && t->in_rq == rq) {
		steal = steal_of(rq);
		if (steal > t->in_steal_ns)
			stolen = steal - t->in_steal_ns;
	}
	t->in_rq = 0;
	return stolen < d ? stolen : d;
}

/* The thread goes on this CPU now: its run queue's steal. */
static __always_inline void switched_in(struct sp_thread *t)
{
	t->in_rq = steal_rq();
	t->in_steal_ns = steal_of(t->in_rq);
}

/*
 * Adds the time since since_ns to `state`'s counter; the clock moves on.
 * Running is charged by the current thread only (its switch-out or
 * exit, settle() next): the steal of its run queue meanwhile is noted.
 */
static __always_inline void charge(struct sp_thread *t, __u32 state, __u64 now)
{
	__u64 d = now > t->since_ns ? now - t->since_ns : 0;
	__u32 type = t->lock_type;

	switch (state) {
	case SP_THREAD_RUNNING:
		t->out_steal_ns += stolen_since_in(t, d);
		t->running_ns += d;
		break;
	case SP_THREAD_RUNNABLE:
		t->runnable_ns += d;
		break;
	case SP_THREAD_LOCK:
		if (type < SP_TYPE__COUNT) {
			t->lock_ns[type] += d;
			break;
		}
		t->sleep_ns += d;
		break;
	case SP_THREAD_SLEEP:
		t->sleep_ns += d;
		break;
	default:
		break;		/* new or dead: not alive to count */
	}
	if (now > t->since_ns)
		t->since_ns = now;
}

static __always_inline bool asleep(__u32 state)
{
	return state == SP_THREAD_SLEEP || state == SP_THREAD_LOCK;
}

/* The counter a state charges (NULL for new and dead). */
static __always_inline __u64 *counter_of(struct sp_thread *t, __u32 state,
					 __u32 type)
{
	switch (state) {
	case SP_THREAD_RUNNING:
		return &t->running_ns;
	case SP_THREAD_RUNNABLE:
		return &t->runnable_ns;
	case SP_THREAD_LOCK:
		if (type < SP_TYPE__COUNT)
			return &t->lock_ns[type];
		return &t->sleep_ns;
	case SP_THREAD_SLEEP:
		return &t->sleep_ns;
	default:
		return 0;
	}
}

/* Moves up to want from *from to *to; returns what moved. */
static __always_inline __u64 move_ns(__u64 *from, __u64 *to, __u64 want,
				     __u64 limit)
{
	__u64 move = want < limit ? want : limit;

	*from -= move;
	*to += move;
	return move;
}

/*
 * Settles the stretch since the last switch-out on the kernel's own
 * accounting of the current task, which the scheduler has brought up to
 * date before sched_switch and sched_process_exit: its CPU time
 * (se.sum_exec_runtime, what CLOCK_THREAD_CPUTIME_ID reads) and, where
 * the kernel keeps it (CONFIG_SCHED_INFO), its time waiting on a run
 * queue (sched_info.run_delay, /proc's schedstat).  A missed switch-in
 * (its wait for a CPU charged as running), a missed switch-out (its
 * running charged as waiting), a missed wakeup (its wait for a CPU
 * charged as sleep), a microsecond of clock skew at each switch and the
 * host's steal make them differ from what the events charged: the
 * difference moves between the stretch's counters, never more than the
 * giver was charged in the stretch, so the sum stays the same.  Steal is
 * settled first, by the run queue's account of it in the stretch.
 */
static __always_inline void settle(struct sp_thread *t)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 exec = task->se.sum_exec_runtime;
	__u64 ran = t->running_ns - t->out_running_ns;
	__u64 waited = t->runnable_ns - t->out_runnable_ns;
	__u64 ran_kernel = exec > t->out_exec_ns ? exec - t->out_exec_ns : 0;
	__u64 *slept = 0;

	/* Stolen: the surplus over the CPU time, up to the queue's steal. */
	if (ran > ran_kernel) {
		ran -= move_ns(&t->running_ns, &t->stolen_ns,
			       t->out_steal_ns, ran - ran_kernel);
	}
	t->out_steal_ns = 0;
	if (ran_kernel > ran)
		waited -= move_ns(&t->runnable_ns, &t->running_ns,
				  ran_kernel - ran, waited);
	else if (ran > ran_kernel)
		waited += move_ns(&t->running_ns, &t->runnable_ns,
				  ran - ran_kernel, ran);
	t->out_exec_ns = exec;
	if (asleep(t->out_state))
		slept = counter_of(t, t->out_state, t->out_lock_type);
	if (bpf_core_field_exists(task->sched_info)) {
		__u64 delay = BPF_CORE_READ(task, sched_info.run_delay);
		__u64 waited_kernel = delay > t->out_run_delay_ns
				      ? delay - t->out_run_delay_ns : 0;

		if (slept && *slept >= t->out_asleep_ns) {
			__u64 slept_in = *slept - t->out_asleep_ns;

			if (waited_kernel > waited)
				move_ns(slept, &t->runnable_ns,
					waited_kernel - waited, slept_in);
			else if (waited > waited_kernel)
				move_ns(&t->runnable_ns, slept,
					waited - waited_kernel, waited);
		}
		t->out_run_delay_ns = delay;
	}
	t->out_running_ns = t->running_ns;
	t->out_runnable_ns = t->runnable_ns;
}

/* Where the next stretch starts: the state the thread goes into now. */
static __always_inline void stretch_begin(struct sp_thread *t)
{
	__u64 *c = counter_of(t, t->state, t->lock_type);

	t->out_state = t->state;
	t->out_lock_type = t->lock_type;
	t->out_asleep_ns = c ? *c : 0;
}

/*
 * An event that cannot follow the thread's state: one before it never
 * came (the kernel did not deliver it).  Not counted for an entry no
 * program has touched yet: the loader's view from /proc may be old.
 */
static __always_inline void count_gap(struct sp_thread *t, bool gap)
{
	if (gap && t->seq)
		counter_bump(SP_CNT_SCHED_GAPS);
}

/* A thread that missed its wakeup_new is counted from its first event. */
static __always_inline bool start_if_new(struct sp_thread *t, __u64 now)
{
	if (t->state != SP_THREAD_NEW)
		return false;
	t->born_ns = now;
	t->since_ns = now;
	return true;
}

static __always_inline void set_comm(struct sp_thread *t, const char *comm)
{
	__builtin_memcpy(t->comm, comm, sizeof(t->comm));
}

/*
 * The lock type of the wait the current thread sleeps in, or
 * SP_TYPE__COUNT when it is in none.
 */
static __always_inline __u32 lock_wait_type(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (states_lock_source == SP_LOCKS_CONTENDED) {
		struct sp_contended *st =
			bpf_task_storage_get(&contended, task, 0, 0);

		/* A join waits for a thread, not a lock: a sleep, as before
		   joins were typed (a futex wait of no lock). */
		if (st && st->t0)
			return st->key.type == SP_TYPE_JOIN ? SP_TYPE_FUTEX
							    : st->key.type;
	} else if (states_lock_source == SP_LOCKS_FULL) {
		struct sp_inflight *st =
			bpf_task_storage_get(&inflight, task, 0, 0);
		__u32 depth = st ? st->depth : 0;

		if (depth >= 1 && depth <= SP_CALLS_MAX)
			return st->calls[(depth - 1) & (SP_CALLS_MAX - 1)].type;
	}
	return SP_TYPE__COUNT;
}

/*
 * A thread of the target met without an entry (created between the
 * loader's scan of /proc and the attach): counted from now.
 */
static __always_inline struct sp_thread *thread_create(__u32 tid, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sp_thread init = {
		.born_ns = now,
		.since_ns = now,
		.out_exec_ns = task->se.sum_exec_runtime,
		.out_state = SP_THREAD_RUNNING,
		.state = SP_THREAD_RUNNING,
	};
	struct sp_thread *t;
	bool inserted;

	if (bpf_core_field_exists(task->sched_info))
		init.out_run_delay_ns = BPF_CORE_READ(task, sched_info.run_delay);
	init.in_rq = steal_rq();
	init.in_steal_ns = steal_of(init.in_rq);
	t = map_lookup_or_init(&threads, &tid, &init, &inserted);
	if (!t)
		counter_bump(SP_CNT_DROPPED_THREADS);
	return t;
}

static __always_inline void switch_out(struct sched_switch_args *ctx, __u64 now)
{
	__u32 tid = (__u32)ctx->prev_pid, type;
	struct sp_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (!t)
		t = thread_create(tid, now);
	if (!t || t->state == SP_THREAD_DEAD)
		return;		/* a dead thread's last switch */
	count_gap(t, t->state != SP_THREAD_RUNNING);
	update_begin(t);
	if (!start_if_new(t, now))
		charge(t, asleep(t->state) ? t->state : SP_THREAD_RUNNING, now);
	settle(t);
	if (!(ctx->prev_state & TASK_REPORT_SLEEP_MASK)) {
		t->state = SP_THREAD_RUNNABLE;
	} else {
		type = lock_wait_type();
		if (type < SP_TYPE__COUNT) {
			t->state = SP_THREAD_LOCK;
			t->lock_type = type;
		} else {
			t->state = SP_THREAD_SLEEP;
		}
	}
	stretch_begin(t);
	set_comm(t, ctx->prev_comm);
	update_end(t);
}

static __always_inline void switch_in(struct sp_thread *t, __u64 now)
{
	if (t->state == SP_THREAD_DEAD)
		return;
	count_gap(t, t->state != SP_THREAD_RUNNABLE &&
		     t->state != SP_THREAD_NEW);
	update_begin(t);
	if (!start_if_new(t, now))
		charge(t, asleep(t->state) ? t->state : SP_THREAD_RUNNABLE, now);
	t->state = SP_THREAD_RUNNING;
	switched_in(t);
	update_end(t);
}

SEC("tracepoint/sched/sched_switch")
int states_switch(struct sched_switch_args *ctx)
{
	__u32 next = (__u32)ctx->next_pid;
	struct sp_thread *t;
	__u64 now = 0;

	if (is_target(bpf_get_current_pid_tgid())) {
		now = bpf_ktime_get_ns();
		switch_out(ctx, now);
	}
	t = bpf_map_lookup_elem(&threads, &next);
	if (!t)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	switch_in(t, now);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup")
int states_wakeup(struct sched_wakeup_args *ctx)
{
	__u32 tid = (__u32)ctx->pid;
	struct sp_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (!t || !asleep(t->state))
		return 0;	/* not ours, or already awake */
	update_begin(t);
	charge(t, t->state, bpf_ktime_get_ns());
	t->state = SP_THREAD_RUNNABLE;
	update_end(t);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup_new")
int states_wakeup_new(struct sched_wakeup_args *ctx)
{
	__u32 tid = (__u32)ctx->pid;
	struct sp_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (!t || t->state != SP_THREAD_NEW)
		return 0;
	update_begin(t);
	start_if_new(t, bpf_ktime_get_ns());
	t->state = SP_THREAD_RUNNABLE;
	update_end(t);
	return 0;
}

SEC("tracepoint/task/task_newtask")
int states_newtask(struct task_newtask_args *ctx)
{
	struct sp_thread init = { .state = SP_THREAD_NEW };
	__u32 tid = (__u32)ctx->pid;

	/*
	 * The parent runs this: a thread of the target, or with --children
	 * a child process, which follow.bpf.c makes a target as it forks.
	 */
	if (!is_target(bpf_get_current_pid_tgid()) ||
	    (!(ctx->clone_flags & CLONE_THREAD) && !follow_children))
		return 0;
	set_comm(&init, ctx->comm);
	/* Over a dead thread of the same TID: a new thread, new counters. */
	if (bpf_map_update_elem(&threads, &tid, &init, BPF_ANY))
		counter_bump(SP_CNT_DROPPED_THREADS);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int states_exit(struct sched_process_exit_args *ctx)
{
	__u32 tid = (__u32)ctx->pid;
	struct sp_thread *t;
	__u64 now;

	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || t->state == SP_THREAD_DEAD)
		return 0;
	now = bpf_ktime_get_ns();
	update_begin(t);
	if (!start_if_new(t, now))
		charge(t, SP_THREAD_RUNNING, now);
	settle(t);
	t->state = SP_THREAD_DEAD;
	t->exit_ns = now;
	set_comm(t, ctx->comm);
	update_end(t);
	return 0;
}
