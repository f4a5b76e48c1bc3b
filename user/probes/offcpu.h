/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu: the skeleton's sched_switch program
 * (bpf/measure/offcpu.bpf.c), its table of system calls, and its link.
 */
#ifndef SYNCPROF_OFFCPU_H
#define SYNCPROF_OFFCPU_H

#include <stdbool.h>

struct syncprof_bpf;
struct offcpu;

/*
 * Before load: the program loads only when on; full: full mode's
 * in-flight calls own their sleeps.  Mounts tracefs when it must.
 */
int offcpu__configure(struct syncprof_bpf *skel, bool on, bool full);
/* After load: fills the system call table; *out NULL when off. */
int offcpu__new(struct syncprof_bpf *skel, bool on, struct offcpu **out);
/* Attaches to sched:sched_switch (NULL: nothing to do). */
int offcpu__attach(struct offcpu *o);
void offcpu__free(struct offcpu *o);

#endif
