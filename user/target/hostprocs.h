/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --all: the host's user-space processes now, from /proc (the ones of
 * every container too: one PID namespace sees its children's).  Kernel
 * threads (PF_KTHREAD) have no user space to profile and are left out.
 */
#ifndef SYNCPROF_HOSTPROCS_H
#define SYNCPROF_HOSTPROCS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The processes under proc (normally "/proc"), but self, in ascending
 * order, at most max into out; *n: how many.  Those whose mappings
 * cannot be read (the kernel's ptrace check refuses) are left out and
 * counted in *unreadable.  0, -E2BIG when there were more than max (out
 * holds the first max), or -errno.
 */
int hostprocs__list(const char *proc, pid_t self, pid_t *out, size_t max,
		    size_t *n, size_t *unreadable);

#endif
