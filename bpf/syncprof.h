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
	SP_TYPE_RWLOCK_R,	/* an rwlock's reader (contended: blocked) */
	SP_TYPE_RWLOCK_W,	/* an rwlock's writer (contended: blocked) */
	SP_TYPE_SEM,
	SP_TYPE_LIBC_LOCK,	/* glibc's own locks: stdio, malloc arenas */
	SP_TYPE_FUTEX,		/* any other futex wait */
	SP_TYPE_BARRIER,	/* pthread_barrier_wait, std::barrier */
	SP_TYPE_SPINLOCK,	/* full mode only: spinlocks never sleep */
	SP_TYPE_JOIN,		/* pthread_join, std::thread::join */
	SP_TYPE_PARK,		/* a runtime's park (Rust's thread::park) */
	/* --off-cpu (bpf/offcpu.bpf.c): blocked in another system call,
	   typed by it (user/probes/offcpu.c has the table); object: the
	   system call's number */
	SP_TYPE_POLL,		/* epoll_wait, poll, select and their kin */
	SP_TYPE_IO,		/* reads, writes, receives, sends, accept */
	SP_TYPE_SLEEP,		/* nanosleep, pause, sigsuspend, ... */
	SP_TYPE_CHILD,		/* wait4, waitid, vfork */
	SP_TYPE_FLOCK,		/* flock, fcntl's F_SETLKW */
	SP_TYPE_SYSCALL,	/* any other system call (mmap's lock, ...) */
	SP_TYPE_FAULT,		/* a page fault, in no system call */
	SP_TYPE__COUNT,
};

/*
 * The attach cookie of a full-mode probe: which kind of pthread function
 * fired. Argument 1 is the object in every class.  The class decides the
 * row's type and which return values are a success (bpf/full.bpf.c).
 */
enum sp_probe_class {
	SP_CLASS_MUTEX = 0,	/* pthread_mutex_{lock,trylock,timedlock,clocklock} */
	SP_CLASS_CONDVAR = 1,	/* pthread_cond_{wait,timedwait,clockwait} */
	SP_CLASS_UNLOCK = 2,	/* pthread_mutex_unlock, pthread_spin_unlock
				   (--hold, --blame) */
	SP_CLASS_SIGNAL = 3,	/* pthread_cond_{signal,broadcast}, sem_post
				   (--blame) */
	SP_CLASS_RWLOCK_R = 4,	/* pthread_rwlock_{,timed,clock,try}rdlock */
	SP_CLASS_RWLOCK_W = 5,	/* pthread_rwlock_{,timed,clock,try}wrlock */
	SP_CLASS_SEM = 6,	/* sem_{wait,timedwait,clockwait,trywait}:
				   0 or -1 and errno */
	SP_CLASS_BARRIER = 7,	/* pthread_barrier_wait: 0, or
				   PTHREAD_BARRIER_SERIAL_THREAD (-1) */
	SP_CLASS_SPIN = 8,	/* pthread_spin_{lock,trylock} */
	SP_CLASS_RWUNLOCK = 9,	/* pthread_rwlock_unlock (--hold, --blame):
				   a writer's or a reader's */
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
/*
 * The site lies inside a retry loop, so one call can hit it several times
 * (pthread_spin_lock: its first instruction has a LOCK prefix, which a
 * uprobe cannot take, and its spin jumps back to it): an entry at the sp
 * and object of the call in flight continues that call.
 */
#define SP_COOKIE_REHIT		(1ull << 9)
/* A try function (trylock, tryrdlock, ...): it never waits, so it never
 * orders itself after the locks its thread holds (--lock-order). */
#define SP_COOKIE_TRY		(1ull << 10)
/*
 * The generation of the links a site belongs to (full mode): when the
 * probes move to another thread, the new links are attached with the
 * other generation and run nothing until the loader switches the
 * programs' probe_gen; a call is ended only by a return of the
 * generation that began it.  So the old and new links, both in place a
 * moment, count each call once.
 */
#define SP_COOKIE_GEN		(1ull << 11)
#define SP_COOKIE_GEN_OF(cookie)	((__u32)(((cookie) >> 11) & 1))
/*
 * A guard's link (full mode, once main has exited): attached through a
 * live thread only so that the kernel keeps the breakpoints in for the
 * links that count; its programs return at once.
 */
#define SP_COOKIE_GUARD		(1ull << 12)

/* Indexes into the per-CPU counters map. */
enum sp_counter {
	SP_CNT_DROPPED_STATS = 0,	/* stats map full: a new row was lost */
	SP_CNT_DROPPED_INFLIGHT,	/* no task storage for a call: it was lost */
	SP_CNT_UNWIND_STOPPED,	/* an unsupported unwind rule or no rule
				   inside libc, or no tables for the
				   process yet; the wait is kept with the
				   innermost known call site */
	SP_CNT_UNWIND_DEEP,	/* still in libc after SP_UNWIND_MAX_FRAMES
				   frames */
	SP_CNT_STACK_STOPPED,	/* a stack walk ended before the thread's
				   outermost frame (see the next two) */
	SP_CNT_STACK_ANON,	/* of which at code in no file: JIT,
				   anonymous memory */
	SP_CNT_STACK_STALE,	/* of which in an image the tables do not
				   describe yet (just after exec) */
	SP_CNT_STACK_LOST,	/* the stacks map was full: a wait kept its
				   stack id, its frames were lost */
	SP_CNT_FRAME_MISS,	/* frames looked up in the tables, not the
				   frame cache */
	SP_CNT_WAITS,		/* with wait_timing: waits (or calls) timed */
	SP_CNT_WAIT_BPF_NS,	/* with wait_timing: time spent in the
				   programs for them, entry and exit */
	SP_CNT_DROPPED_RING,	/* --record: the ring buffer was full; the
				   wait is in the stats, not the timeline */
	SP_CNT_DROPPED_THREADS,	/* --states: the threads map was full */
	SP_CNT_SCHED_GAPS,	/* --states: an event of one of the target's
				   threads that never came (a switch-out
				   after a switch-out, ...) */
	SP_CNT_DROPPED_NESTED,	/* full: SP_CALLS_MAX calls already in
				   flight in the thread: one was lost */
	SP_CNT_ABANDONED,	/* full: calls whose frame went away without
				   returning (longjmp): counted as failed */
	SP_CNT_DROPPED_PROCS,	/* --children: the targets map was full,
				   a new process was not followed */
	SP_CNT_LOST_PROC_EVENTS, /* the loader's event ring was full: a
				   fork, exec, exit or library load it
				   never heard of */
	SP_CNT_DROPPED_ORDER,	/* --lock-order: the order map was full, a
				   new pair of locks was not kept */
	SP_CNT_HELD_OVERFLOW,	/* --lock-order: a thread held more than
				   SP_HELD_MAX locks; the newest was not
				   tracked */
	SP_CNT_OFFCPU_GAPS,	/* --off-cpu: a blocked thread ran again
				   without its switch-in event: that
				   sleep's end was estimated */
	SP_CNT_TIMING_PREEMPTED, /* with wait_timing: runs left out of
				   SP_CNT_WAIT_BPF_NS, preempted */
	SP_CNT_WHY_CUT,		/* --why: a chain ended early (the holder's
				   own wait not seen, a cycle, too deep) */
	SP_CNT_WHY_DROPPED,	/* --why: the why map was full, or a chain
				   had more roots than a record keeps */
	SP_CNT_LATE_KEPT,	/* a walk still cut by a table not read when
				   its wait ended: its raw frames kept for
				   the loader to finish (bpf/unwind.h) */
	SP_CNT_LATE_LOST,	/* ...and not kept: the late-walk ring was
				   full (its stack stays cut, counted) */
	SP_CNT_DUTY_CUT,	/* --duty: calls and holds in progress when
				   the probes went off, not counted */
	SP_CNT_BLAME_FULL,	/* --blame's map full: a wait's charge to the
				   release that ended it was not kept (the
				   wait itself is counted) */
	SP_CNT_CAUSED_FULL,	/* the caused map full: a part of a wait
				   charged to a hold was not kept (for the
				   findings; the wait itself is counted) */
	SP_CNT_RELEASE_STOPPED,	/* --blame: a release's walk stopped inside
				   libc (as SP_CNT_UNWIND_STOPPED, but no
				   wait is left there: its charge is) */
	SP_CNT__COUNT,
};

/* What the module_events ring buffer says (struct sp_module_event_rec). */
enum sp_module_event {
	SP_MODULE_EVENT_LOAD = 1,	/* the dynamic loader changed its list */
	SP_MODULE_EVENT_EXEC = 2,	/* the target exec'ed a new image */
	SP_MODULE_EVENT_ANCHOR_EXIT = 3, /* full mode: the thread the probes
					    are attached through exited
					    (see probes.c) */
	SP_MODULE_EVENT_FORK = 4,	/* --children: a followed process made
					   a new one (tgid: the child) */
	SP_MODULE_EVENT_EXIT = 5,	/* a followed process ended */
	SP_MODULE_EVENT_WAIT = 6,	/* the first wait of a process forked
					   and not read yet (unread_procs) */
	SP_MODULE_EVENT_THREAD_EXIT = 7, /* several processes: a thread of a
					    followed process ended, not its
					    last (parent: the thread's TID) */
};

/* SP_MODULE_EVENT_FORK's parent: the child is to be read now, not at its
   first wait (unread_procs was full). */
#define SP_FORK_READ_NOW	(1u << 31)

/* SP_MODULE_EVENT_LOAD's parent: the change ended a dlclose (libraries
   removed only; the process's tables were marked stale at its start, so
   the loader may re-read its maps later, bpf/follow/modwatch.bpf.c). */
#define SP_LOAD_UNLOADED	1u

struct sp_module_event_rec {
	__u32 type;		/* enum sp_module_event */
	__u32 tgid;		/* the process it happened in */
	__u32 parent;		/* SP_MODULE_EVENT_FORK: the parent's tgid;
				   SP_MODULE_EVENT_THREAD_EXIT: the TID */
	__u32 pad;
	char comm[16];		/* the process's name then (FORK: the
				   parent's, which the child has; EXEC:
				   the new program's) */
};

/* glibc's mutex kind word: offset of __kind, and the mask of its type. */
#define SP_MUTEX_KIND_OFFSET	16
#define SP_MUTEX_KIND_MASK	3
#define SP_MUTEX_KIND_RECURSIVE	1

/* One row of the stats map, before aggregation. */
struct sp_key {
	__u64 object;		/* address of the lock object */
	__u64 callsite;		/* return address into the caller */
	__u64 stack_id;		/* the interned stack; 0: none kept */
	__u32 tid;
	__u32 type;		/* enum sp_lock_type */
	__u32 owner_tid;	/* contended mutexes: the holder; else 0 */
	__u32 pid;		/* the thread's process (tgid); 0 in
				   recordings made before processes */
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
	__u64 failed_ns;	/* the part of wait_ns that failed */
	__u64 futile;		/* futile wakeups (bpf/futile.bpf.h) */
};

/*
 * A row's log2 histogram of single waits (full mode: calls; contended
 * mode: acquisitions, each with its blocked time), in a map beside the
 * stats map.  Slot 0 counts waits of 0 ns; slot k, 1 <= k < SP_HIST_SLOTS,
 * counts waits in [2^(k-1), 2^k) ns; the last slot also holds everything
 * longer (2^46 ns: 19.5 hours).
 */
#define SP_HIST_SLOTS	48

struct sp_hist {
	__u64 slot[SP_HIST_SLOTS];
};

/* A probed call between its entry and its return. */
struct sp_call {
	__u64 t0;
	__u64 object;
	__u64 callsite;
	__u64 stack_id;
	__u64 sp;		/* stack pointer at entry: pairs the return */
	__u64 mutex;		/* a condvar wait's mutex (--hold) */
	__u32 type;
	__u32 nvcsw;		/* the thread's voluntary context switches
				   at entry (low bits): a call that slept
				   gets its stack at its return */
	__u32 cut;		/* the entry's walk was cut short for a table
				   not read yet: walked again at the return */
	__u32 gen;		/* SP_COOKIE_GEN_OF its entry's cookie */
	__u32 epoch;		/* --duty: the on-slice it entered in */
	__u32 pad;
};

/* Probed calls in flight in one thread, nested by signal handlers. */
#define SP_CALLS_MAX	4

/* A thread's calls in flight, in task storage; the innermost last. */
struct sp_inflight {
	struct sp_call calls[SP_CALLS_MAX];
	__u32 depth;
	__u32 pad;
	/*
	 * The thread's last condvar wait that returned 0, while the thread
	 * has not taken its mutex again since (bpf/futile.bpf.h): its row,
	 * condvar and mutex.  woken_cond 0: none.
	 */
	struct sp_key woken_key;
	__u64 woken_cond;
	__u64 woken_mutex;
};

/*
 * --lock-order (full mode): a pair of locks one thread held and took, in
 * that order.  Keyed by both objects and the sites that took them, so the
 * loader can class a lock by its object (a global) or by the site that
 * takes it (heap locks, many and short-lived), as lockdep does.
 */
struct sp_order_key {
	__u64 held;		/* the lock already held */
	__u64 held_site;	/* where it was taken */
	__u64 acquired;		/* the lock taken while holding it */
	__u64 acquired_site;
	__u32 pid;
	__u32 pad;
};

struct sp_order_edge {
	__u64 count;		/* times taken in this order */
	__u64 held_stack_id;	/* the first time: the held lock's stack */
	__u64 acquired_stack_id; /* ... and the new lock's */
	__u32 tid;		/* ... and the thread */
	__u32 held_type;	/* enum sp_lock_type */
	__u32 acquired_type;
	__u32 pad;
};

/* Locks one thread can hold at once and still be ordered. */
#define SP_HELD_MAX	16

/*
 * --record: one wait, from the program that ends it to the loader's
 * writer through the record_ring ring buffer (bpf/record.bpf.c).
 */
enum sp_event_flags {
	SP_EVENT_COUNTED = 1,	/* added one to the row's count */
	SP_EVENT_FAILED = 2,	/* added one to the row's failed */
	SP_EVENT_LOST_ONLY = 4,	/* no wait: only `lost` waits lost before
				   `lost_ns` (written by the loader) */
};

struct sp_wait_event {
	struct sp_key key;	/* the stats row it was added to */
	__u64 start_ns;		/* CLOCK_MONOTONIC; end - start = the wait */
	__u64 end_ns;
	__u64 max_ns;		/* what it offered the row's max: the wait,
				   or the whole acquisition so far */
	__u64 lost_ns;		/* lost > 0: start of the first lost wait */
	__u32 flags;		/* enum sp_event_flags */
	__u32 window;		/* the report window it was counted in */
	__u32 lost;		/* this thread's waits lost since its last
				   recorded one (the ring was full) */
	__u32 pad;
};

/* A thread's waits lost to a full ring, not yet told (record_lost map). */
struct sp_lost {
	__u64 count;
	__u64 first_ns;		/* start of the first of them */
};

/*
 * Contended mode.  The loader classifies libc's exported functions by the
 * lock they implement; the BPF program looks up the outermost libc frame
 * of a blocking wait in this table (sorted, disjoint, file-relative).
 */
enum sp_func_class {
	SP_FUNC_OTHER = 0,	/* anything else: a plain futex wait */
	SP_FUNC_MUTEX,		/* pthread_mutex_{lock,timedlock,clocklock} */
	SP_FUNC_CONDVAR,	/* pthread_cond_{wait,timedwait,clockwait} */
	SP_FUNC_CONDVAR_OTHER,	/* pthread_cond_{signal,broadcast,destroy} */
	SP_FUNC_RWLOCK_R,	/* pthread_rwlock_*rdlock */
	SP_FUNC_RWLOCK_W,	/* pthread_rwlock_*wrlock */
	SP_FUNC_SEM,		/* sem_{wait,timedwait,clockwait} */
	SP_FUNC_BARRIER,	/* pthread_barrier_wait */
	SP_FUNC_JOIN,		/* pthread_join, pthread_*join_np, thrd_join */
};

struct sp_func_range {
	__u64 start;
	__u64 end;
	__u32 class;		/* enum sp_func_class */
	__u32 pad;
};

/* Frames stepped through inside libc before giving up. */
#define SP_UNWIND_MAX_FRAMES	12

/* glibc's rwlock: readers wait on __readers@0 with PTHREAD_RWLOCK_RWAITING
 * set in the expected value; every other wait is on __wrphase_futex@8 or
 * __writers_futex@12 with a value below it. */
#define SP_RWLOCK_READERS_WAITING	4
#define SP_RWLOCK_PHASE_OFFSET		8
/* __cur_writer@24 (x86_64 __pthread_rwlock_arch_t): the TID of the
 * writer holding it, 0 while readers hold it or nobody does. */
#define SP_RWLOCK_WRITER_OFFSET		24

/* glibc's mutex: the holder's TID. */
#define SP_MUTEX_OWNER_OFFSET	8

/*
 * A thread's open contended acquisition, in task storage: the word it
 * waits on and where the wait is counted.  A wait on the same word by the
 * same thread continues the acquisition until it is closed (see
 * bpf/contended.bpf.c).
 */
struct sp_contended {
	struct sp_key key;	/* the row of the wait in flight or last */
	__u64 uaddr;		/* futex word of the open acquisition */
	__u64 t0;		/* wait in flight: entry time, else 0 */
	__u64 episode_ns;	/* blocked so far in this acquisition */
	__u64 reported_ns;	/* of which added to the stats map */
	__u64 blamed_ns;	/* of which charged to releases (--blame) */
	__u32 counted;		/* the acquisition has been counted */
	__u32 close_on_wake;	/* lll lock: only the holder's wake ends it */
	__u32 holder;		/* a mutex's holder at the first wait (the
				   key has it only with --per-thread) */
	__u32 cut;		/* the first wait's walk was cut short for a
				   table not read yet (enum unwind_cut): done
				   again when it ends */
	__u32 cmd;		/* the first wait's futex command and value */
	__u32 val;
	__u32 woken;		/* the last wait returned 0 (woken): a wait
				   on the same word next was futile */
	__u32 pad;
};

/*
 * --states: what a thread of the target is doing, by the scheduler's
 * tracepoints (bpf/states.bpf.c).
 */
enum sp_thread_state {
	SP_THREAD_NEW = 0,	/* created, not yet woken: nothing counted */
	SP_THREAD_RUNNING,	/* on a CPU */
	SP_THREAD_RUNNABLE,	/* on a run queue, waiting for a CPU */
	SP_THREAD_SLEEP,	/* blocked, not in a lock wait */
	SP_THREAD_LOCK,		/* blocked in a lock wait of type lock_type */
	SP_THREAD_DEAD,		/* exited at exit_ns */
	SP_THREAD__COUNT,
};

/* Where a sleep's lock type comes from: the in-flight wait of a mode. */
enum sp_lock_source {
	SP_LOCKS_NONE = 0,
	SP_LOCKS_CONTENDED,	/* a futex wait contended mode classified */
	SP_LOCKS_FULL,		/* inside a probed pthread call (full mode) */
};

/*
 * One thread in the threads map (key: its TID).  Every nanosecond from
 * born_ns to since_ns is in exactly one of the counters; the time since
 * since_ns belongs to `state`.  seq is odd while a program updates the
 * entry: a reader retries until it copies the same even seq twice.
 * out_*: at the thread's last switch-out, the kernel's CPU time for it
 * (se.sum_exec_runtime) and its time waiting for a CPU
 * (sched_info.run_delay), the running and runnable counters, the state
 * it went into and that state's counter: they settle running, runnable
 * and the sleep between two switch-outs on the kernel's own accounting
 * when an event went missing.  stolen_ns: the part of its time on a
 * CPU that the hypervisor gave that virtual CPU to someone else (steal
 * time), not counted as running; in_rq and in_steal_ns: the run queue
 * the thread was switched in on (a kernel address; 0: not known,
 * nothing counted as stolen) and the steal it had accounted then;
 * out_steal_ns: that queue's steal over the running since the last
 * switch-out, which settles it.
 */
struct sp_thread {
	__u64 seq;
	__u64 born_ns;		/* CLOCK_MONOTONIC: woken first, or seeded */
	__u64 since_ns;		/* when `state` began */
	__u64 exit_ns;		/* 0 while alive */
	__u64 running_ns;
	__u64 runnable_ns;
	__u64 sleep_ns;
	__u64 lock_ns[SP_TYPE__COUNT];	/* by type; SP_TYPE_FUTEX: a futex
					   wait of no known lock */
	__u64 stolen_ns;
	__u64 in_rq;
	__u64 in_steal_ns;
	__u64 out_steal_ns;
	__u64 out_exec_ns;
	__u64 out_run_delay_ns;
	__u64 out_running_ns;
	__u64 out_runnable_ns;
	__u64 out_asleep_ns;	/* out_state's counter, when it is a sleep */
	__u32 out_state;	/* enum sp_thread_state */
	__u32 out_lock_type;
	__u32 state;		/* enum sp_thread_state */
	__u32 lock_type;	/* state SP_THREAD_LOCK: enum sp_lock_type */
	char comm[16];
};

/*
 * --off-cpu: the loader's table of system calls (offcpu_calls map, by
 * number, SP_OFFCPU_CALLS_MAX of them): the sp_lock_type of a sleep in
 * it, plus one (0: SP_TYPE_SYSCALL), or SP_OFFCPU_SKIP for calls whose
 * sleeps are not off-CPU waits (the futex family: the lock waits of the
 * modes; exit).  Objects of SP_TYPE_FAULT rows.
 */
#define SP_OFFCPU_CALLS_MAX	1024
#define SP_OFFCPU_SKIP		0xff
#define SP_OFFCPU_FAULT_OBJECT	(~0ull)

/* A thread's sleep in flight (offcpu_open map, by TID). */
struct sp_offcpu {
	struct sp_key key;
	__u64 t0;		/* switched out, CLOCK_MONOTONIC */
	__u64 exec_ns;		/* the thread's CPU time then */
};

/*
 * --why (bpf/why.bpf.h): each row's wait split by what its holder did
 * (kind SP_WHY_HOLDER, site 0), and charged to the roots of its chains
 * (kind SP_WHY_ROOT: the last holder's release site and process), by
 * state.  A root's SP_WHY_LOCK: the chain ended on a holder in a lock
 * wait whose own wait was not followed; SP_WHY_UNKNOWN: no owner known
 * (condvars, semaphores, ...): the releaser's site.
 */
#define SP_WHY_ROOTS	8	/* roots a thread's record keeps (power of 2) */
#define SP_WHY_DEPTH	4	/* holders a chain follows */

enum sp_why_state {
	SP_WHY_RUNNING = 0,
	SP_WHY_RUNNABLE,
	SP_WHY_LOCK,
	SP_WHY_SLEEP,
	SP_WHY_STOLEN,		/* on a CPU the hypervisor ran something
				   else on (steal time) */
	SP_WHY_UNKNOWN,
	SP_WHY_WOKEN,		/* holder only: from the release to the
				   waiter's return, the waiter's own wait
				   for a CPU */
	SP_WHY__COUNT,
};

enum sp_why_kind {
	SP_WHY_HOLDER = 0,
	SP_WHY_ROOT,
};

struct sp_why_key {
	struct sp_key row;	/* the waiter's stats row */
	__u64 site;		/* SP_WHY_ROOT: the release's return address */
	__u32 pid;		/* its process */
	__u32 kind;		/* enum sp_why_kind */
};

struct sp_why_value {
	__u64 ns[SP_WHY__COUNT];	/* by enum sp_why_state */
	__u64 waits[SP_WHY__COUNT];	/* roots: waits charged in part to
					   each state */
};

/* --why, in the programs only: one root of a thread's last wait. */
struct sp_why_root {
	__u64 site;
	__u64 ns;
	__u32 pid;
	__u32 state;		/* enum sp_why_state */
};

/* A thread's last wait, as roots (why_last, by TID). */
struct sp_why_last {
	__u64 start_ns;
	__u64 end_ns;
	__u64 total;		/* the sum of roots[].ns */
	__u32 n;
	__u32 depth;		/* holders in its chain */
	__u32 tids[SP_WHY_DEPTH];	/* those holders */
	struct sp_why_root roots[SP_WHY_ROOTS];
};

#endif /* SYNCPROF_ABI_H */
