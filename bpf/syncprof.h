/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one ABI between syncprof's BPF programs and its loader: every struct
 * and enum that crosses the kernel/user boundary lives here, with
 * fixed-width types only.
 */
#ifndef SYNCPROF_ABI_H
#define SYNCPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a report row calls the lock. */
enum sp_lock_type {
	SP_TYPE_MUTEX = 0,
	SP_TYPE_REC_MUTEX,
	SP_TYPE_CONDVAR,
	SP_TYPE__COUNT,
};

/*
 * The attach cookie of a full-mode probe: which kind of pthread function
 * fired. Argument 1 is the object in both classes.
 */
enum sp_probe_class {
	SP_CLASS_MUTEX = 0,	/* pthread_mutex_{lock,trylock,timedlock,clocklock} */
	SP_CLASS_CONDVAR = 1,	/* pthread_cond_{wait,timedwait,clockwait} */
};

/*
 * The cookie's next byte: how the kernel runs the probed instruction,
 * which decides the probe's own cost and so the calibration to subtract.
 */
enum sp_site_kind {
	SP_SITE_EMULATED = 0,	/* push, jmp/jcc/call rel, nop */
	SP_SITE_STEPPED = 1,	/* executed out of line, single-stepped */
	SP_SITE__COUNT,
};

#define SP_COOKIE(class, kind)	((__u64)(class) | (__u64)(kind) << 8)
#define SP_COOKIE_CLASS(cookie)	((cookie) & 0xff)
#define SP_COOKIE_KIND(cookie)	(((cookie) >> 8) & 1)

/* Indexes into the per-CPU counters map. */
enum sp_counter {
	SP_CNT_DROPPED_STATS = 0,	/* stats map full: a new row was lost */
	SP_CNT_DROPPED_INFLIGHT,	/* no task storage for a call: it was lost */
	SP_CNT__COUNT,
};

/* glibc's mutex kind word: offset of __kind, and the mask of its type. */
#define SP_MUTEX_KIND_OFFSET	16
#define SP_MUTEX_KIND_MASK	3
#define SP_MUTEX_KIND_RECURSIVE	1

/* One row of the stats map, before aggregation. */
struct sp_key {
	__u64 object;		/* address of the mutex or condvar */
	__u64 callsite;		/* return address into the caller */
	__u32 tid;
	__u32 type;		/* enum sp_lock_type */
};

struct sp_value {
	__u64 count;		/* successful acquisitions (or wakeups) */
	__u64 wait_ns;		/* time spent in the call, failed ones too */
	__u64 max_ns;		/* longest call since attach */
	__u64 failed;		/* failed trylocks, timeouts, errors */
	__u64 window_max_ns;	/* longest call in report window `window` */
	__u64 window;		/* the window window_max_ns belongs to */
	__u64 prev_window_max_ns; /* the same for the window before it */
	__u64 prev_window;
};

/* State between a probed call's entry and its return, per thread. */
struct sp_inflight {
	__u64 t0;
	__u64 object;
	__u64 callsite;
	__u64 sp;		/* stack pointer at entry: pairs the return */
	__u32 type;
	__u32 pad;
};

#endif /* SYNCPROF_ABI_H */
