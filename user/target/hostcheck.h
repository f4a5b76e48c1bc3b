/* SPDX-License-Identifier: GPL-2.0 */
/* Can this kernel, and this user, run syncprof? Each check says why not. */
#ifndef SYNCPROF_HOSTCHECK_H
#define SYNCPROF_HOSTCHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Kernel features under sysfs_root ("/sys"): BTF and uprobe events. */
int hostcheck__kernel(const char *sysfs_root);
/*
 * Root, or CAP_BPF + CAP_PERFMON (+ CAP_SYS_PTRACE) in the effective set:
 * what full mode needs.  Contended mode also reads tracefs, mode 0700
 * (CAP_DAC_READ_SEARCH): hostcheck__tracepoints says so.
 */
int hostcheck__privileges(void);

/*
 * Whether the tracepoint syscalls:NAME exists under sysfs_root, in tracefs
 * as libbpf looks for it (debugfs's tracing first).
 */
bool hostcheck__syscall_tracepoint(const char *sysfs_root, const char *name);
/*
 * The futex tracepoints under sysfs_root: mounts tracefs at
 * sysfs_root/kernel/tracing when neither it nor debugfs's tracing is
 * there (as perf and bpftrace do), then checks for sys_enter_futex.
 * 0, or -errno and in why what is missing (tracefs closed to this user,
 * not mounted, no syscall tracepoints) for the caller to say.
 */
int hostcheck__tracepoints(const char *sysfs_root, char *why, size_t len);

#endif
