// SPDX-License-Identifier: GPL-2.0
/*
 * --off-cpu: every other blocking wait of the target's threads, from the
 * scheduler's sched_switch tracepoint alone.
 *
 *   switch-out  the current task is the target's and goes to sleep
 *               (prev_state S or D, not a preemption, not stopped): the
 *               system call it sleeps in is orig_ax of the registers it
 *               saved on entry; the loader's table (offcpu_calls) types
 *               it.  The futex family is skipped (the modes' own lock
 *               waits), and so is a sleep inside a call full mode has in
 *               flight (its uprobes', its pthread call's), so no wait is
 *               counted twice.  The user stack is walked from the same
 *               registers with the futex path's unwinder: the call site
 *               is the first frame outside libc, as for a lock.
 *   switch-in   the thread's open sleep (offcpu_open, by TID: the
 *               classic tracepoint gives the next task's TID only) ends;
 *               switch-out to switch-in is the wait, one count per sleep.
 *
 * Chosen over the system calls' own tracepoints (enter and exit of each
 * blocking call): those run a program on every read, poll and sleep of
 * every process of the machine, blocking or not, where a switch-out is
 * already the expensive path (~900 ns here, states.bpf.c) and only the
 * target's sleeps do more than a compare.  Rejected: raw_syscalls (every
 * system call of the machine), kprobes and fentry on the sleeping
 * functions (not on these kernels).  The cost of the choice: a call that
 * sleeps twice before it returns (woken for an event another thread took)
 * counts two waits; its time is right.
 *
 * A switch-in the program did not see (the kernel skipped the run: another
 * BPF program was running on that CPU) shows at the thread's next
 * switch-out as a sleep still open: its end is estimated from the CPU
 * time the thread used since it went to sleep (what it ran after waking
 * is taken off), counted in SP_CNT_OFFCPU_GAPS.
 *
 * Not in a system call: a page fault that waits for I/O or a lock.  On
 * x86-64 orig_ax holds the fault's error code then, so a system call is
 * told by the two bytes before the saved pc: `syscall` (0f 05).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "record.bpf.h"
#include "unwind.bpf.h"
#include "waits.bpf.h"
#include "sched.bpf.h"

/* prev_state: S (1) and D (2); above them stopped, traced, dead, ... */
#define OFFCPU_SLEEP_MASK	0x3
#define OFFCPU_STATE_MASK	0xff

/* Whose in-flight lock calls own their sleeps (enum sp_lock_source). */
const volatile __u32 offcpu_lock_source = SP_LOCKS_NONE;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, SP_OFFCPU_CALLS_MAX);
} offcpu_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct sp_offcpu);
	__uint(max_entries, 1);		/* set by the loader before load */
} offcpu_open SEC(".maps");

/* The call site's type, or -1: not an off-CPU wait of ours. */
static __always_inline int sleep_type(struct pt_regs *regs, __u64 *object)
{
	__u8 insn[2] = {};
	__u32 nr;
	__u8 *t;

	if (bpf_probe_read_user(insn, sizeof(insn), (void *)(regs->ip - 2)) ||
	    insn[0] != 0x0f || insn[1] != 0x05) {
		*object = SP_OFFCPU_FAULT_OBJECT;
		return SP_TYPE_FAULT;
	}
	nr = (__u32)regs->orig_ax;
	*object = nr;
	t = bpf_map_lookup_elem(&offcpu_calls, &nr);
	if (!t || !*t)
		return SP_TYPE_SYSCALL;
	if (*t == SP_OFFCPU_SKIP)
		return -1;
	return *t - 1;
}

/* A lock call full mode has in flight owns its sleeps. */
static __always_inline bool in_lock_call(struct task_struct *task)
{
	struct sp_inflight *fl;

	if (offcpu_lock_source != SP_LOCKS_FULL)
		return false;
	fl = bpf_task_storage_get(&inflight, task, 0, 0);
	return fl && fl->depth;
}

static __always_inline void wait_end(__u32 tid, struct sp_offcpu *w,
				     __u64 wait, __u64 now)
{
	struct sp_key key = w->key;

	bpf_map_delete_elem(&offcpu_open, &tid);
	if (wait < min_wait_ns)
		return;
	stats_add(&key, wait, wait, 1, 0);
	record_wait(&key, now - wait, now, wait, SP_EVENT_COUNTED);
}

static __always_inline void switch_out(__u64 pid_tgid, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 exec = task->se.sum_exec_runtime;
	__u32 tid = (__u32)pid_tgid;
	struct sp_offcpu w = {}, *open;
	struct unwind_result u;
	int type;

	open = bpf_map_lookup_elem(&offcpu_open, &tid);
	if (open) {
		/* Its switch-in never came: ended when it began to run. */
		__u64 ran = exec > open->exec_ns ? exec - open->exec_ns : 0;
		__u64 off = now > open->t0 ? now - open->t0 : 0;

		counter_bump(SP_CNT_OFFCPU_GAPS);
		wait_end(tid, open, off > ran ? off - ran : 0, now - ran);
	}
	if (!thread_wanted(tid) || in_lock_call(task))
		return;
	type = sleep_type(regs, &w.key.object);
	if (type < 0 || !lock_wanted((__u32)type, w.key.object))
		return;
	unwind_user(regs->ip, regs->sp, regs->bp, UNWIND_KEEP, &u);
	w.key.callsite = u.callsite;
	w.key.stack_id = u.stack_id;
	w.key.tid = tid;
	w.key.pid = (__u32)(pid_tgid >> 32);
	w.key.type = (__u32)type;
	/*
	 * Under a runtime's typed lock function (PostgreSQL's ProcSleep: a
	 * heavyweight lock's wait, asleep in the latch's epoll_wait): a wait
	 * for that lock, class lock, not an idle poll.  The object stays the
	 * system call, which names it.
	 */
	if (u.whole_type && u.whole_type <= SP_TYPE__COUNT)
		w.key.type = u.whole_type - 1u;
	else if (u.wrap_type && u.wrap_type <= SP_TYPE__COUNT)
		w.key.type = u.wrap_type - 1u;
	w.exec_ns = exec;
	w.t0 = bpf_ktime_get_ns();
	if (wait_timing) {
		counter_add(SP_CNT_WAIT_BPF_NS, w.t0 - now);
		counter_bump(SP_CNT_WAITS);
	}
	if (bpf_map_update_elem(&offcpu_open, &tid, &w, BPF_ANY))
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
}

static __always_inline void switch_in(__u32 tid, __u64 now)
{
	struct sp_offcpu *w = bpf_map_lookup_elem(&offcpu_open, &tid);

	if (!w)
		return;
	wait_end(tid, w, now > w->t0 ? now - w->t0 : 0, now);
	if (wait_timing)
		counter_add(SP_CNT_WAIT_BPF_NS, bpf_ktime_get_ns() - now);
}

SEC("tracepoint/sched/sched_switch")
int offcpu_switch(struct sched_switch_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u64 state = (__u64)ctx->prev_state & OFFCPU_STATE_MASK;

	/* A preemption (TASK_REPORT_MAX above the mask) reads as 0 here. */
	if ((state & OFFCPU_SLEEP_MASK) && !(state & ~OFFCPU_SLEEP_MASK) &&
	    is_target(pid_tgid))
		switch_out(pid_tgid, now);
	if (ctx->next_pid)
		switch_in((__u32)ctx->next_pid, now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
