/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steal time: how long the hypervisor ran something else while a virtual
 * CPU of this guest had a task on it.  The guest's scheduler counts that
 * time in neither the task's CPU time (se.sum_exec_runtime, from the run
 * queue's clock_task, which leaves steal out) nor its wait for a CPU
 * (sched_info.run_delay: the task was current), so a wall-clock interval
 * between a switch-in and a switch-out holds both the task's running and
 * the CPU's steal.  --states reads the steal at both ends and counts the
 * difference as stolen, not running.
 *
 * The steal read is the run queue's own: rq->prev_steal_time_rq, the
 * paravirtual steal clock as of the run queue's last clock update, which
 * is what the scheduler has taken out of clock_task, so running less
 * stolen is the CPU time the kernel counts.  __schedule() updates the
 * clock just before sched_switch: at a switch the value is current.  The
 * run queue is reached from the current task (se.cfs_rq->rq) and kept as
 * an address, so --why can read another CPU's later (run queues are never
 * freed).  CO-RE: a kernel without group scheduling (no se.cfs_rq) or
 * without paravirtual time accounting (no prev_steal_time_rq) counts
 * nothing as stolen and loads the same programs; one that has it but no
 * steal clock reads 0 throughout.
 *
 * Rejected: the per-CPU struct kvm_steal_time as a typed ksym (the
 * kernel's BTF has it, but the verifier resolves a per-CPU variable's
 * address through kallsyms, which lists data only with
 * CONFIG_KALLSYMS_ALL: the load fails with ENOENT on kernels without it,
 * a weak ksym included), and /proc/stat's steal column (per CPU, in ticks
 * of 10 ms, from user space: it cannot be charged to a thread's stretch).
 */
#ifndef SYNCPROF_STEAL_BPF_H
#define SYNCPROF_STEAL_BPF_H

/* The current CPU's run queue, as an address; 0 where steal is not kept. */
static __always_inline __u64 steal_rq(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rq *rq = 0;

	if (!bpf_core_field_exists(task->se.cfs_rq) ||
	    !bpf_core_field_exists(rq->prev_steal_time_rq))
		return 0;
	rq = BPF_CORE_READ(task, se.cfs_rq, rq);
	return (__u64)rq;
}

/* The steal a run queue has accounted (ns); 0 for no run queue. */
static __always_inline __u64 steal_of(__u64 rq_addr)
{
	struct rq *rq = (struct rq *)rq_addr;

	if (!rq || !bpf_core_field_exists(rq->prev_steal_time_rq))
		return 0;
	return BPF_CORE_READ(rq, prev_steal_time_rq);
}

#endif
