// SPDX-License-Identifier: GPL-2.0
/*
 * --blame's maps, and the program that tells a woken waiter which
 * release woke it (see blame.bpf.h).  Loaded only with --blame in
 * contended mode.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"

const volatile __u32 blame_enabled = 0;
const volatile __u32 caused_enabled = 0;

releasing_map_t releasing SEC(".maps");
release_by_map_t woken_by SEC(".maps");
release_by_map_t requeues SEC(".maps");
release_by_map_t releases SEC(".maps");
stats_map_t blame SEC(".maps");		/* max_entries set by the loader */
recent_map_t recent SEC(".maps");
stats_map_t caused SEC(".maps");	/* max_entries set by the loader */

/* Whether the current thread is inside the futex call that released. */
static __always_inline bool in_release(const struct sp_release *rel)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 nr = regs->orig_ax;

	return (nr == SP_NR_FUTEX || nr == SP_NR_FUTEX_WAKE) &&
	       regs->di == rel->uaddr;
}

/*
 * The scheduler wakes p.  From a target thread's futex wake that is the
 * wake of a waiter: p learns who released.  Every wakeup on the machine
 * comes here; the first test (the waker's process) ends the others.
 */
SEC("raw_tp/sched_waking")
int release_wakes(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	struct sp_release *rel, woke;
	__u64 tid;

	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	rel = bpf_task_storage_get(&releasing, bpf_get_current_task_btf(), 0, 0);
	if (!rel || !rel->ts || !in_release(rel))
		return 0;
	/*
	 * A waiter of a followed process: the waker's own, or with several
	 * processes any other followed one (a lock in shared memory, which
	 * the kernel keys by its backing object, so one process's wake ends
	 * another's wait).  Tested last: with several processes, a hash
	 * lookup, paid only by a release's wakeups.
	 */
	if (!is_target((__u64)BPF_CORE_READ(p, tgid) << 32))
		return 0;
	/*
	 * Timed now, not at the wake's entry: the waiter may have gone to
	 * sleep in between, and its exit checks the wake came after its
	 * wait began.
	 */
	woke = *rel;
	woke.ts = bpf_ktime_get_ns();
	woke.clocked = 0;
	if (why_enabled) {
		/* --why: where the releaser's clocks stood as it let go. */
		__u32 self = (__u32)bpf_get_current_pid_tgid();
		struct sp_thread *t = bpf_map_lookup_elem(&threads, &self);

		if (t) {
			why_clocks(t, woke.ts, woke.at);
			woke.clocked = 1;
		}
	}
	tid = (__u32)BPF_CORE_READ(p, pid);
	bpf_map_update_elem(&woken_by, &tid, &woke, BPF_ANY);
	return 0;
}
