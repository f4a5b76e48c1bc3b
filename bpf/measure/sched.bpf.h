/* SPDX-License-Identifier: GPL-2.0 */
/* The scheduler's sched_switch record (events/sched/sched_switch/format),
 * read by --states and --off-cpu. */
#ifndef SYNCPROF_SCHED_BPF_H
#define SYNCPROF_SCHED_BPF_H

struct sched_switch_args {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

#endif
