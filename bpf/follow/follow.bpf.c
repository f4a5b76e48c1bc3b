// SPDX-License-Identifier: GPL-2.0
/*
 * --children: the followed processes' new children join the targets map
 * in the kernel, at fork time, before the child runs: the futex
 * tracepoints and the uprobes (attached to the library's file, for every
 * process, and filtered here) count a child's waits from its first
 * instruction.  The loader hears of it through module_events and reads
 * the child's modules (names, unwind tables) then.
 *
 * Rejected: adding children from user space on an event: a child that
 * locks right after fork() would be missed until the loader woke (make
 * bench: ~50-200 us later here), and a short-lived one entirely.
 *
 * sched_process_fork fires for threads too (clone with CLONE_THREAD):
 * only a child that leads its own thread group is a new process.  vfork,
 * clone without CLONE_THREAD and fork all do.  An exec keeps the tgid
 * (unwind.bpf.c's target_exec tells the loader).  A process whose last
 * thread exits leaves the map (group_dead), so a reused PID is not
 * followed by mistake.  Every other thread's exit is told too: the
 * loader folds an exited thread's rows (fold.c) on the kernel's word,
 * where it had read /proc for each thread of each row at every read.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"

/* Whether children join the targets (--children), set before load. */
const volatile __u32 follow_children = 0;

SEC("raw_tp/sched_process_fork")
int follow_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid), one = 1, pid, tgid;

	if (!follow_children)
		return 0;
	pid = BPF_CORE_READ(child, pid);
	tgid = BPF_CORE_READ(child, tgid);
	if (pid != tgid || tgid == ptgid)
		return 0;	/* a thread */
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	if (bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY)) {
		counter_bump(SP_CNT_DROPPED_PROCS);
		return 0;
	}
	/* Its walks use the parent's tables until the loader reads its own. */
	bpf_map_update_elem(&forked_from, &tgid, &ptgid, BPF_ANY);
	/* Read by the loader at its first wait (a full map: at its fork). */
	if (bpf_map_update_elem(&unread_procs, &tgid, &one, BPF_ANY))
		ptgid |= SP_FORK_READ_NOW;
	module_event(SP_MODULE_EVENT_FORK, tgid, ptgid);
	return 0;
}

/* events/sched/sched_process_exit/format */
struct process_exit_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	bool group_dead;
};

SEC("tracepoint/sched/sched_process_exit")
int follow_exit(struct process_exit_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(pid_tgid >> 32);

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	/* A thread: its rows are folded by the loader, no /proc read. */
	if (!ctx->group_dead) {
		module_event(SP_MODULE_EVENT_THREAD_EXIT, tgid, (__u32)pid_tgid);
		return 0;
	}
	bpf_map_delete_elem(&targets, &tgid);
	bpf_map_delete_elem(&forked_from, &tgid);
	bpf_map_delete_elem(&unread_procs, &tgid);
	bpf_map_delete_elem(&unloading, &tgid);
	bpf_map_delete_elem(&exec_seqs, &tgid);
	bpf_map_delete_elem(&proc_layouts, &tgid);
	module_event(SP_MODULE_EVENT_EXIT, tgid, 0);
	return 0;
}
