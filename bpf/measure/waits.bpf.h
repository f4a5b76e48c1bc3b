/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each mode's in-flight wait per thread (task storage): defined by the
 * mode's program file, read by states.bpf.c to tell a lock wait from
 * another sleep.  bpftool's linker wants a map defined before the objects
 * that declare it extern (see the Makefile's link order).
 */
#ifndef SYNCPROF_WAITS_BPF_H
#define SYNCPROF_WAITS_BPF_H

/* Contended mode: t0 != 0 while a futex wait is in flight (contended.bpf.c). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_contended);
} contended_map_t;
extern contended_map_t contended SEC(".maps");

/* Full mode: depth != 0 while a call is in flight (full.bpf.c). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_inflight);
} inflight_map_t;
extern inflight_map_t inflight SEC(".maps");

#endif
