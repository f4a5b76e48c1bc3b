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
	/* Hold phase: handoffs, a release of the object to its next
	   acquisition by a thread that was already waiting at the release
	   (one of them woken after it: handoffs_woken); waiter_lost: a
	   waiter not kept (map full) */
	__u64 handoffs;
	__u64 handoff_ns;
	__u64 handoffs_woken;
	__u64 waiter_lost;
};

/*
 * The wake-ups of the object's waiters (hold phase), by how long the CPU
 * they ran on had been idle when they were woken: bins of
 * WHATIF_WAKE_STEP_NS up to WHATIF_WAKE_FINE_NS, then doubling, and a
 * last bin for a CPU that was not idle (the waiter queued behind
 * another task).
 */
#define WHATIF_WAKE_STEP_NS	25000ull
#define WHATIF_WAKE_FINE_NS	1000000ull
#define WHATIF_WAKE_FINE	40	/* WHATIF_WAKE_FINE_NS / STEP */
#define WHATIF_WAKE_COARSE	7	/* 1-2 ms ... 64 ms and more */
#define WHATIF_WAKE_BUSY	(WHATIF_WAKE_FINE + WHATIF_WAKE_COARSE)
#define WHATIF_WAKE_BINS	(WHATIF_WAKE_BUSY + 1)

/* Sums over one bin's wake-ups. */
struct whatif_wakebin {
	__u64 count;
	__u64 idle_ns;		/* the CPU idle before the wake-up */
	__u64 lat_ns;		/* woken -> on the CPU */
	__u64 handoff_ns;	/* handoffs only: release -> acquired */
};

/* A thread inside a lock call on the object. */
struct whatif_taking {
	__u64 since;		/* the call */
	__u64 woken;		/* its last wake-up; 0: none */
	__u64 ran;		/* on a CPU after it; 0: not yet */
	__u64 idle;		/* its CPU's idle before it */
	__u32 bin;		/* that wake-up's bin */
	__u32 pad;
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
