/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's experiment, shared by bpf/experiment/whatif.bpf.c and
 * user/whatif/: the bounds of the delay it injects, and its counters.
 */
#ifndef SYNCPROF_WHATIFBPF_H
#define SYNCPROF_WHATIFBPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The longest delay one release may get, whatever user space asks. */
#define WHATIF_MAX_DELAY_NS	10000000ull
/* bpf_loop's iterations of the delay's clock reads: far above 10 ms. */
#define WHATIF_SPIN_LOOPS	(1u << 22)

/* What the programs count; user space reads them between windows. */
struct whatif_counts {
	__u64 progress;		/* calls of the progress function */
	__u64 acquisitions;	/* lock calls (the default progress) */
	__u64 injected;		/* releases delayed */
	__u64 injected_ns;	/* time spent delaying them */
	__u64 over_budget;	/* releases not delayed: budget spent */
	__u64 holds;		/* holds of the object timed (hold phase) */
	__u64 hold_ns;
	__u64 hold_off_ns;	/* the part of hold_ns off a CPU */
	__u64 holders;		/* threads that held it (hold phase) */
	__u64 reach_lost;	/* progress threads or wakes not kept: the
				   maps were full */
};

/* A thread that held an object in a hold phase. */
struct whatif_holder {
	__u64 object;
	__u32 tid;
	__u32 pad;
};

/* A wakeup between two threads of the experiment's processes. */
struct whatif_wake {
	__u32 waker;
	__u32 wakee;
};

/* The maps that keep the hold phase's threads and wakes. */
#define WHATIF_MAX_PROCESSES	1024
#define WHATIF_MAX_PROGRESS	4096
#define WHATIF_MAX_WAKES	16384

#endif
