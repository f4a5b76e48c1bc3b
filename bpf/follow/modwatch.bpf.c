// SPDX-License-Identifier: GPL-2.0
/* Both modes: the loader watch that names libraries dlopen'ed after attach. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"

/*
 * The dynamic loader calls _dl_debug_state (r_brk, where debuggers stop)
 * before and after each change of its library list: the loader re-reads
 * the target's maps at once, so a library dlopen'ed and used briefly is
 * still named after the target exits.
 *
 * The call before a change says what comes in _r_debug.r_state (glibc's
 * dl-load.c, dl-close.c).  Before a dlopen (RT_ADD) nothing is told: the
 * maps are still those of the last call, and a re-read found nothing
 * new.  Before a dlclose (RT_DELETE) the process's mapping array is made
 * stale the way an exec makes it (exec_seqs, its frame cache layout
 * dropped): until the loader installs a new one, its walks place every
 * address by its VMA's file, so code mapped where the closed library was
 * is never walked with that library's rows.  The call after the dlclose
 * is told without a wake-up (SP_LOAD_UNLOADED): the loader re-reads at
 * its next round or its next tick, not once per dlclose (a plugin host
 * loading and unloading libraries cost two maps reads and two installs a
 * cycle).
 *
 * The state is read at _r_debug's link-time address plus the loader's
 * load bias, found from the probed address (the probe's own or one past
 * it, whichever makes a page-aligned bias).  When the addresses are not
 * known, or the read fails, the call is told as before: a needless
 * re-read, never a change missed.  A dlmopen namespace keeps its own
 * r_debug; the base one says RT_CONSISTENT meanwhile, so those calls
 * are all told.
 */
volatile __u64 loader_debug_state = 0;	/* _dl_debug_state's vaddr */
volatile __u64 loader_r_debug = 0;	/* _r_debug's vaddr; 0: unknown */

#define SP_RT_CONSISTENT	0
#define SP_RT_ADD		1
#define SP_RT_DELETE		2
#define SP_R_STATE_OFFSET	24	/* struct r_debug's r_state on 64-bit */

/* _r_debug.r_state now; -1 when it cannot be read. */
static __always_inline int loader_state(struct pt_regs *ctx)
{
	__u64 ip = PT_REGS_IP(ctx), r_debug = loader_r_debug;
	__u64 func = loader_debug_state;
	int state;

	if (!r_debug)
		return -1;
	for (int back = 0; back < 2; back++) {
		__u64 bias = ip - back - func;

		if (bias & 0xfff)
			continue;
		if (bpf_probe_read_user(&state, sizeof(state),
					(void *)(bias + r_debug +
						 SP_R_STATE_OFFSET)))
			return -1;
		return state;
	}
	return -1;
}

static __always_inline int on_modules_changed(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(pid_tgid >> 32), one = 1, flags = 0;
	int state;

	if (!is_target(pid_tgid))
		return 0;
	state = loader_state(ctx);
	if (state == SP_RT_ADD)
		return 0;
	if (state == SP_RT_DELETE) {
		/* Not marked (the map full): told at its end, as before. */
		if (!bpf_map_update_elem(&unloading, &tgid, &one, BPF_ANY))
			process_tables_stale(tgid);
		return 0;
	}
	if (state == SP_RT_CONSISTENT &&
	    !bpf_map_delete_elem(&unloading, &tgid))
		flags = SP_LOAD_UNLOADED;
	module_event(SP_MODULE_EVENT_LOAD, tgid, flags);
	return 0;
}

SEC("uprobe")
int modules_changed(struct pt_regs *ctx)
{
	return on_modules_changed(ctx);
}

/* The same, attached through a thread other than main (see probes.c). */
SEC("uprobe")
int modules_changed_thread(struct pt_regs *ctx)
{
	return on_modules_changed(ctx);
}
