/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe_multi links (Linux 6.6+) made with bpf(BPF_LINK_CREATE) directly:
 * libbpf 1.1.2 predates them.  One link holds every probe of one program
 * in one file, so it is attached and detached at once.
 */
#ifndef SYNCPROF_UPROBEMULTI_H
#define SYNCPROF_UPROBEMULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The program's expected_attach_type for a uprobe_multi link. */
#define UPROBEMULTI_ATTACH_TYPE 48	/* BPF_TRACE_UPROBE_MULTI */

/* Whether this kernel makes uprobe_multi links (probed once, cached). */
bool uprobemulti__supported(void);
/*
 * Whether a link attached for a process goes on running its program for
 * the process's other threads once the thread group's leader has exited
 * (a pthread_exit in main): since Linux 6.13 the kernel checks the
 * thread group (same_thread_group) where it used to compare the leader's
 * memory, which is gone with it.  Measured here (6.18): 900 of 900 calls
 * counted across main's exit, with the links left as they were.  Not
 * for good: when any other consumer of the same uprobes unregisters, the
 * kernel re-runs every process's filter, which still compares the
 * leader's memory, and takes the breakpoints out of this process.
 */
bool uprobemulti__outlives_leader(void);
/*
 * Attaches prog_fd (loaded with UPROBEMULTI_ATTACH_TYPE) at cnt file
 * offsets of path, each with its cookie, as entry or return probes, in
 * process pid only.  Returns the link's descriptor (closing it detaches
 * every probe) or a negative errno.
 */
int uprobemulti__attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, uint32_t cnt, bool retprobe,
			pid_t pid);

#endif
