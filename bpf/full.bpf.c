// SPDX-License-Identifier: GPL-2.0
/*
 * Full mode: an entry uprobe and a return uprobe on each pthread lock and
 * condvar-wait function of the target's libc.
 *
 * One program pair serves every function; the attach cookie says whether
 * the function takes a mutex or a condvar (enum sp_probe_class), so the
 * probed functions are a table in the loader, not code here.
 *
 * Entry stashes {t0, object, call site, type, sp} in the thread's task
 * storage; the return adds now - t0, less the calibrated probe time, to a
 * per-CPU hash keyed by {object, call site, tid, type}.  Task storage
 * rather than a hash keyed by tid: no insert and delete on every call
 * (0.85 -> ~0.5 us of BPF work per call here, make bench), and a thread
 * that dies inside a call (cancellation) takes its stash with it.
 * Pairing uses the stack pointer: a return belongs to the stash whose
 * entry sp is 8 bytes below it (the return address popped).  A call made
 * while another probed call of the same thread is in flight (deeper sp:
 * a signal handler, or a libc that calls its own public entry points) is
 * left out, so a condvar's internal re-lock never adds a mutex row.
 *
 * Contended mode's programs are in contended.bpf.c; the loader loads only
 * the programs of the mode it runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "record.bpf.h"
#include "unwind.bpf.h"
#include "waits.bpf.h"
#include "blame.bpf.h"
#include "hold.bpf.h"

#define EOWNERDEAD 130

/* The probes' own time inside an entry-to-return interval, per site kind. */
const volatile __u64 calibration_ns[SP_SITE__COUNT] = {};

/* sp == 0: no call in flight; states.bpf.c reads it too. */
inflight_map_t inflight SEC(".maps");

SEC("uprobe")
int lock_enter(struct pt_regs *ctx)
{
	struct sp_inflight *call;
	__u64 sp, start = 0;

	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	if (wait_timing)
		start = bpf_ktime_get_ns();
	call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!call) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return 0;
	}
	sp = PT_REGS_SP(ctx);
	if (call->sp && sp < call->sp)
		return 0;	/* nested inside a probed call */

	call->sp = sp;
	call->object = PT_REGS_PARM1(ctx);
	call->stack_id = 0;
	if (stack_depth || skip_enabled) {
		struct unwind_result w;

		unwind_user(PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx), &w);
		call->callsite = w.callsite;
		call->stack_id = w.stack_id;
	} else if (bpf_probe_read_user(&call->callsite, sizeof(call->callsite),
				       (void *)sp)) {
		call->callsite = 0;
	} else {
		call->callsite = real_return_address(sp, call->callsite);
	}
	if (SP_COOKIE_CLASS(bpf_get_attach_cookie(ctx)) == SP_CLASS_CONDVAR) {
		call->type = SP_TYPE_CONDVAR;
		call->mutex = PT_REGS_PARM2(ctx);
		/* The wait lets its mutex go: that hold ends here. */
		if (hold_enabled)
			hold_end(call->mutex, (__u32)bpf_get_current_pid_tgid(),
				 bpf_ktime_get_ns());
	} else {
		call->type = mutex_type(call->object);
		call->mutex = call->object;
	}
	call->t0 = bpf_ktime_get_ns();
	if (wait_timing) {
		counter_add(SP_CNT_WAIT_BPF_NS, call->t0 - start);
		counter_bump(SP_CNT_WAITS);
	}
	return 0;
}

SEC("uretprobe")
int lock_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sp_inflight *call;
	struct sp_key key = {};
	__u64 sp, t0, bias, wait, mutex;
	bool acquired;
	long ret;

	if (!is_target(pid_tgid))
		return 0;
	call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	if (!call || !call->sp)
		return 0;
	sp = PT_REGS_SP(ctx);
	if (sp < call->sp + 8)
		return 0;	/* a nested call returns; the outer goes on */
	if (sp > call->sp + 8) {
		/* Its frame is gone (longjmp): the stash is stale. */
		call->sp = 0;
		return 0;
	}
	key.object = call->object;
	key.callsite = call->callsite;
	key.stack_id = call->stack_id;
	key.type = call->type;
	key.tid = (__u32)pid_tgid;
	t0 = call->t0;
	mutex = call->mutex;
	call->sp = 0;

	ret = (int)PT_REGS_RC(ctx);
	bias = calibration_ns[SP_COOKIE_KIND(bpf_get_attach_cookie(ctx))];
	wait = now > t0 + bias ? now - t0 - bias : 0;
	acquired = ret == 0 || ret == EOWNERDEAD;
	stats_add(&key, wait, wait, acquired, !acquired);
	record_wait(&key, now - wait, now, wait,
		    acquired ? SP_EVENT_COUNTED : SP_EVENT_FAILED);
	/* A condvar wait takes its mutex back even when it times out. */
	if (hold_enabled && (acquired || key.type == SP_TYPE_CONDVAR))
		hold_begin(&key, mutex, key.tid, now);
	if (blame_enabled && acquired)
		blame_full_charge(&key, t0, wait);
	if (wait_timing)
		counter_add(SP_CNT_WAIT_BPF_NS, bpf_ktime_get_ns() - now);
	return 0;
}
