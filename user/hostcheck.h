/* SPDX-License-Identifier: GPL-2.0 */
/* Can this kernel, and this user, run syncprof? Each check says why not. */
#ifndef SYNCPROF_HOSTCHECK_H
#define SYNCPROF_HOSTCHECK_H

/* Kernel features under sysfs_root ("/sys"): BTF and uprobe events. */
int hostcheck__kernel(const char *sysfs_root);
/* Root, or CAP_BPF + CAP_PERFMON (+ CAP_SYS_PTRACE) in the effective set. */
int hostcheck__privileges(void);

#endif
