// SPDX-License-Identifier: GPL-2.0
/*
 * Full mode's unlock probes: one entry program on pthread_mutex_unlock,
 * pthread_rwlock_unlock, pthread_spin_unlock, pthread_cond_signal,
 * pthread_cond_broadcast and sem_post (the attach cookie says which),
 * loaded only with --hold, --blame or --lock-order.  An unlock ends its lock's
 * hold (hold.bpf.h); with --blame, every one of them records the release
 * of its object (blame.bpf.h).  Its own cost lands on every unlock call:
 * measured by make bench.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"
#include "hold.bpf.h"
#include "lockorder.bpf.h"

const volatile __u32 hold_enabled = 0;

holds_map_t holds SEC(".maps");		/* max_entries set by the loader */
stats_map_t hold_stats SEC(".maps");	/* max_entries set by the loader */

static __always_inline int on_unlock(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now, object, sp;
	struct sp_release rel = {};
	__u32 class;

	if (!is_target(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	object = PT_REGS_PARM1(ctx);
	class = SP_COOKIE_CLASS(bpf_get_attach_cookie(ctx));
	if (hold_enabled && class == SP_CLASS_UNLOCK)
		hold_end(object, (__u32)pid_tgid, now);
	else if (hold_enabled && class == SP_CLASS_RWUNLOCK)
		hold_end_rw(object, (__u32)pid_tgid, now);
	if (lockorder_enabled &&
	    (class == SP_CLASS_UNLOCK || class == SP_CLASS_RWUNLOCK))
		lockorder_released(object);
	if (!blame_enabled)
		return 0;
	sp = PT_REGS_SP(ctx);
	if (bpf_probe_read_user(&rel.site, sizeof(rel.site), (void *)sp))
		rel.site = 0;
	else
		rel.site = real_return_address(sp, rel.site);
	rel.uaddr = object;
	rel.ts = now;
	rel.tid = (__u32)pid_tgid;
	rel.pid = (__u32)(pid_tgid >> 32);
	if (why_enabled) {
		/* --why: where the releaser's clocks stood as it let go. */
		__u32 self = (__u32)pid_tgid;
		struct sp_thread *t = bpf_map_lookup_elem(&threads, &self);

		if (t) {
			why_clocks(t, now, rel.at);
			rel.clocked = 1;
		}
	}
	bpf_map_update_elem(&releases, &object, &rel, BPF_ANY);
	return 0;
}

SEC("uprobe")
int unlock_enter(struct pt_regs *ctx)
{
	return on_unlock(ctx);
}

/* For perf-event uprobes once main has exited (see full.bpf.c). */
SEC("uprobe")
int unlock_enter_thread(struct pt_regs *ctx)
{
	return on_unlock(ctx);
}
