// SPDX-License-Identifier: GPL-2.0
/* Both modes: the loader watch that names libraries dlopen'ed after attach. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"

/*
 * The dynamic loader calls _dl_debug_state (r_brk, where debuggers stop)
 * before and after each change of its library list: the loader re-reads
 * the target's maps at once, so a library dlopen'ed and used briefly is
 * still named after the target exits.
 */
static __always_inline int on_modules_changed(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!is_target(pid_tgid))
		return 0;
	module_event(SP_MODULE_EVENT_LOAD, (__u32)(pid_tgid >> 32), 0);
	return 0;
}

SEC("uprobe")
int modules_changed(struct pt_regs *ctx)
{
	return on_modules_changed();
}

/* The same, attached through a thread other than main (see probes.c). */
SEC("uprobe")
int modules_changed_thread(struct pt_regs *ctx)
{
	return on_modules_changed();
}
