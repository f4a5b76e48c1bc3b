// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostcheck.h"
#include "log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* By the effective IDs and capabilities (access() drops them). */
static bool exists_under(const char *root, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return faccessat(AT_FDCWD, path, F_OK, AT_EACCESS) == 0;
}

int hostcheck__kernel(const char *sysfs_root)
{
	if (!exists_under(sysfs_root, "kernel/btf/vmlinux")) {
		pr_err("this kernel has no BTF (%s/kernel/btf/vmlinux is missing); "
		       "syncprof needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       sysfs_root);
		return -ENOTSUP;
	}
	if (!exists_under(sysfs_root, "bus/event_source/devices/uprobe/type")) {
		pr_err("this kernel has no uprobes (%s/bus/event_source/devices/uprobe "
		       "is missing); syncprof needs CONFIG_UPROBE_EVENTS=y",
		       sysfs_root);
		return -ENOTSUP;
	}
	return 0;
}

static bool cap_in(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

int hostcheck__privileges(void)
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (syscall(SYS_capget, &header, data))
		return -errno;
	if (cap_in(data, CAP_SYS_ADMIN) ||
	    (cap_in(data, CAP_BPF) && cap_in(data, CAP_PERFMON) &&
	     cap_in(data, CAP_SYS_PTRACE)))
		return 0;
	pr_err("permission denied: syncprof needs root, or the capabilities "
	       "CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH "
	       "(try sudo)");
	return -EPERM;
}

bool hostcheck__syscall_tracepoint(const char *sysfs_root, const char *name)
{
	static const char *const roots[] = {
		"kernel/debug/tracing", "kernel/tracing",
	};
	char rel[256];

	for (size_t i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "%s/events/syscalls/%s", roots[i], name);
		if (exists_under(sysfs_root, rel))
			return true;
	}
	return false;
}

int hostcheck__tracepoints(const char *sysfs_root, char *why, size_t len)
{
	char tracing[2048];
	struct statfs fs;
	struct stat st;

	if (hostcheck__syscall_tracepoint(sysfs_root, "sys_enter_futex"))
		return 0;
	snprintf(tracing, sizeof(tracing), "%s/kernel/tracing", sysfs_root);
	/* Mounted, but closed to this user: tracefs is mode 0700. */
	if (!statfs(tracing, &fs) && fs.f_type == TRACEFS_MAGIC &&
	    !exists_under(tracing, "events")) {
		snprintf(why, len, "tracefs is mounted at %s but this user "
			 "cannot read it (mode %03o, owner uid %u): give syncprof "
			 "CAP_DAC_READ_SEARCH too, or run it as root", tracing,
			 stat(tracing, &st) ? 0 : (unsigned int)(st.st_mode & 07777),
			 stat(tracing, &st) ? 0 : (unsigned int)st.st_uid);
		return -EACCES;
	}
	if (!exists_under(tracing, "events")) {
		if (mount("nodev", tracing, "tracefs", 0, NULL)) {
			int err = -errno;

			snprintf(why, len, "tracefs is not mounted, and mounting "
				 "it at %s takes CAP_SYS_ADMIN (%s): mount it "
				 "first, or run syncprof as root", tracing,
				 strerror(-err));
			return err;
		}
		pr_info("mounted tracefs at %s", tracing);
	}
	if (!hostcheck__syscall_tracepoint(sysfs_root, "sys_enter_futex")) {
		snprintf(why, len, "this kernel has no syscalls:sys_enter_futex "
			 "tracepoint (CONFIG_FTRACE_SYSCALLS)");
		return -ENOTSUP;
	}
	return 0;
}
