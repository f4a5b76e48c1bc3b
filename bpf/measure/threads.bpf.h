/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --states' threads (key: TID): updated by states.bpf.c, read by --why
 * (why.bpf.h).  Defined in why.bpf.c, linked before both readers.
 */
#ifndef SYNCPROF_THREADS_BPF_H
#define SYNCPROF_THREADS_BPF_H

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct sp_thread);
	__uint(max_entries, 1);		/* set by the loader before load */
} threads_map_t;
extern threads_map_t threads SEC(".maps");

#endif
