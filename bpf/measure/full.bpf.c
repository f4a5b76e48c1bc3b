// SPDX-License-Identifier: GPL-2.0
/*
 * Full mode: an entry uprobe and a return uprobe on each pthread lock and
 * condvar-wait function of the target's libc.
 *
 * One program pair serves every function; the attach cookie says which
 * kind of lock the function takes (enum sp_probe_class: mutex, condvar,
 * rwlock reader or writer, semaphore, barrier, spinlock), so the probed
 * functions are a table in the loader, not code here.  The kind gives the
 * row's type (a mutex's is read from its kind word) and what a success
 * returns: 0 for all, also EOWNERDEAD for a robust mutex and
 * PTHREAD_BARRIER_SERIAL_THREAD (-1) for the one thread a barrier picks;
 * a semaphore fails with -1 and errno, the others with an error number.
 *
 * Entry pushes {t0, object, call site, type, sp} on the thread's stack of
 * calls in flight, in task storage; the return pops it and adds now - t0,
 * less the calibrated probe time, to the stats hash keyed by {object,
 * call site, tid, type}.  Task storage rather than a hash keyed by tid: no
 * insert and delete on every call (0.85 -> ~0.5 us of BPF work per call
 * here, make bench), and a thread that dies inside a call (cancellation)
 * takes its calls with it.
 *
 * Pairing uses the stack pointer: a return belongs to the call whose
 * entry sp is 8 bytes below it (the return address popped).  A call made
 * while another is in flight in the same thread (a signal handler that
 * locks while its thread waits in pthread_mutex_lock) has a deeper sp and
 * is pushed above it, up to SP_CALLS_MAX deep; beyond that it is counted
 * as dropped.  A call whose frame is gone when a later entry or return
 * comes by (a longjmp out of a signal handler, past the call) is popped
 * and counted as failed, with no wait (its end is not known), and in the
 * abandoned counter.  Cost: the common call touches only the top slot
 * (make bench).
 *
 * A probe inside a retry loop (SP_COOKIE_REHIT: pthread_spin_lock, whose
 * entry no uprobe can take, and the trylocks whose cmpxchg loop branches
 * back before their first emulated instruction) fires once per pass: an
 * entry at the sp and object of the call in flight is that call going
 * on, and keeps its start.  The kernel chains the return probe's
 * instances; the extra runs of the return program find no call at their
 * sp and leave.
 *
 * Stacks are walked at the return, of the calls that waited (call_waited:
 * the thread slept, or spun FULL_STACK_SPIN_NS): the caller's frames are
 * as they were at the entry, and the return's registers are the
 * caller's (rbp is callee-saved).  The calls that did not wait, nearly
 * all of a busy server's, keep their call site, counted exactly, with no
 * walk.  Rejected: the walk at every entry (make bench on memcached:
 * 2.3-3.8 us of BPF per call with 32 frames against 1.0 at depth 0).
 *
 * Futile wakeups (futile.bpf.h): a mutex call's sleeps beyond its first,
 * and a condvar wait woken to wait again on the same pair, the mutex
 * held all along.
 *
 * Contended mode's programs are in contended.bpf.c; the loader loads only
 * the programs of the mode it runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "errno.bpf.h"
#include "stats.bpf.h"
#include "record.bpf.h"
#include "unwind.bpf.h"
#include "waits.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"
#include "hold.bpf.h"
#include "lockorder.bpf.h"
#include "futile.bpf.h"


/*
 * The probes' own time inside an entry-to-return interval, per site kind.
 * Written once before the probes attach, after the programs load: the
 * calibration measures while they load (user/calibrate/calibrate.c).
 */
volatile __u64 calibration_ns[SP_SITE__COUNT] = {};

/*
 * The generation of links that runs (SP_COOKIE_GEN): the loader switches
 * it once a move's new links are all in place.
 */
volatile __u32 probe_gen = 0;

/* depth == 0: no call in flight; states.bpf.c reads it too. */
inflight_map_t inflight SEC(".maps");

/* Slot i of the calls in flight, bounded where the verifier sees it. */
static __always_inline struct sp_call *call_slot(struct sp_inflight *st,
						 __u32 i)
{
	barrier_var(i);
	return &st->calls[i & (SP_CALLS_MAX - 1)];
}

/* A call that never returned: failed, its wait unknown. */
static __always_inline void call_abandoned(struct sp_call *call, __u32 tid)
{
	struct sp_key key = {
		.object = call->object,
		.callsite = call->callsite,
		.stack_id = call->stack_id,
		.type = call->type,
		.tid = tid,
		.pid = (__u32)(bpf_get_current_pid_tgid() >> 32),
	};

	stats_add(&key, 0, 0, 0, 1);
	/* On the timeline too, as a failed call of no length at its start. */
	record_wait(&key, call->t0, call->t0, 0, SP_EVENT_FAILED);
	counter_bump(SP_CNT_ABANDONED);
}

/*
 * Pops the calls whose frames lie at or below sp (the stack grows down):
 * an entry or a return at sp is outside them, so they are gone.  This is
 * the kernel's own rule for return probes (arch_uretprobe_is_alive): the
 * return of a call it pops here would never come, even on a signal stack.
 * Returns the depth left.
 */
static __always_inline __u32 pop_gone(struct sp_inflight *st, __u64 sp,
				      __u32 tid)
{
	__u32 depth = st->depth;

	for (int i = 0; i < SP_CALLS_MAX; i++) {
		struct sp_call *top;

		if (!depth || depth > SP_CALLS_MAX)
			break;
		top = call_slot(st, depth - 1);
		if (top->sp > sp)
			break;
		if (top->epoch == duty_epoch)
			call_abandoned(top, tid);
		else
			counter_bump(SP_CNT_DUTY_CUT);	/* its return came while off */
		depth--;
	}
	st->depth = depth;
	return depth;
}

/* The row type of a class other than mutex and condvar. */
static __always_inline __u32 class_type(__u32 class)
{
	switch (class) {
	case SP_CLASS_RWLOCK_R:
		return SP_TYPE_RWLOCK_R;
	case SP_CLASS_RWLOCK_W:
		return SP_TYPE_RWLOCK_W;
	case SP_CLASS_SEM:
		return SP_TYPE_SEM;
	case SP_CLASS_BARRIER:
		return SP_TYPE_BARRIER;
	default:
		return SP_TYPE_SPINLOCK;
	}
}

/* Whether a call of this type that returned ret got what it asked for. */
static __always_inline bool call_succeeded(__u32 type, int ret)
{
	switch (type) {
	case SP_TYPE_MUTEX:
	case SP_TYPE_REC_MUTEX:
	case SP_TYPE_CONDVAR:
		return ret == 0 || ret == EOWNERDEAD;
	case SP_TYPE_BARRIER:
		return ret == 0 || ret == -1;	/* SERIAL_THREAD: also through */
	default:
		return ret == 0;
	}
}

/* Types whose success leaves the thread holding the lock (--hold). */
static __always_inline bool type_holds(__u32 type)
{
	return type != SP_TYPE_SEM && type != SP_TYPE_BARRIER;
}

/*
 * A site inside a retry loop (SP_COOKIE_REHIT) fired again for the call
 * in flight: same sp, same object.
 */
static __always_inline bool is_rehit(struct sp_inflight *st, __u32 depth,
				     __u64 sp, __u64 object)
{
	struct sp_call *top;

	if (!depth || depth > SP_CALLS_MAX)
		return false;
	top = call_slot(st, depth - 1);
	return top->sp == sp && top->object == object &&
	       top->epoch == duty_epoch;
}

/*
 * Whether a call waited, and so gets its stack: it slept (the thread's
 * voluntary context switches moved) or spun FULL_STACK_SPIN_NS.  The
 * others, nearly every call of a program that locks a lot, keep their
 * call site, counted exactly, and cost no walk: on memcached the walk at
 * every call's entry made full mode's BPF time per call 2-3x its time
 * without stacks (make bench, section servers).
 */
#define FULL_STACK_SPIN_NS	50000

static __always_inline bool call_waited(__u32 nvcsw_at_entry, __u64 wait)
{
	return (__u32)bpf_get_current_task_btf()->nvcsw != nvcsw_at_entry ||
	       wait >= FULL_STACK_SPIN_NS;
}

static __always_inline int on_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sp_inflight *st;
	struct sp_call *call;
	__u64 sp, start = 0, cookie, object, mutex;
	__u32 depth, class, type, mark;

	cookie = bpf_get_attach_cookie(ctx);
	/* A guard's link, or the other generation's while the probes move. */
	if ((cookie & SP_COOKIE_GUARD) || SP_COOKIE_GEN_OF(cookie) != probe_gen)
		return 0;
	if (!is_target(pid_tgid) || !thread_wanted((__u32)pid_tgid))
		return 0;
	first_wait(pid_tgid);
	class = SP_COOKIE_CLASS(cookie);
	mark = timing_mark();
	if (wait_timing)
		start = bpf_ktime_get_ns();
	st = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return 0;
	}
	sp = PT_REGS_SP(ctx);
	depth = st->depth;
	if ((cookie & SP_COOKIE_REHIT) &&
	    is_rehit(st, depth, sp, PT_REGS_PARM1(ctx)))
		return 0;	/* spinning: the same call, again */
	/* Before the filters: a call they leave out still takes its mutex. */
	if (class == SP_CLASS_CONDVAR)
		futile_cond_enter(st, PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx));
	else if (class == SP_CLASS_MUTEX)
		futile_mutex_enter(st, PT_REGS_PARM1(ctx));
	if (depth)
		depth = pop_gone(st, sp, (__u32)pid_tgid);
	if (depth >= SP_CALLS_MAX) {
		counter_bump(SP_CNT_DROPPED_NESTED);
		return 0;
	}
	object = PT_REGS_PARM1(ctx);
	if (class == SP_CLASS_CONDVAR) {
		type = SP_TYPE_CONDVAR;
		mutex = PT_REGS_PARM2(ctx);
		/* The wait lets its mutex go: that hold ends here. */
		if (hold_enabled)
			hold_end(mutex, (__u32)pid_tgid, bpf_ktime_get_ns());
		if (lockorder_enabled)
			lockorder_released(mutex);
	} else if (class == SP_CLASS_MUTEX) {
		type = mutex_type(object);
		mutex = object;
	} else {
		type = class_type(class);
		mutex = object;
	}
	/* Not pushed: its return finds no call of its own and does nothing.
	 * --duty's window closed: the same (a hold it would begin is not
	 * sampled either; the holds begun in the window end as above). */
	if (!lock_wanted(type, object) || !duty_open)
		return 0;
	call = call_slot(st, depth);
	call->sp = sp;
	call->object = object;
	call->type = type;
	call->mutex = mutex;
	call->stack_id = 0;
	call->nvcsw = (__u32)bpf_get_current_task_btf()->nvcsw;
	call->cut = 0;
	call->gen = SP_COOKIE_GEN_OF(cookie);
	call->epoch = duty_epoch;
	if (skip_enabled) {
		/* The call site only: the stack waits for the return. */
		struct unwind_result w = {};

		unwind_user(PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx), 0, &w);
		call->callsite = w.callsite;
		call->cut = w.cut;
	} else if (bpf_probe_read_user(&call->callsite, sizeof(call->callsite),
				       (void *)sp)) {
		call->callsite = 0;
	} else {
		call->callsite = real_return_address(sp, call->callsite);
	}
	st->depth = depth + 1;
	call->t0 = bpf_ktime_get_ns();
	if (why_enabled)
		why_wait_begin(type, object, call->t0);
	timing_add(start, call->t0, mark, true);
	return 0;
}

static __always_inline int on_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sp_inflight *st;
	struct sp_call *call;
	struct sp_key key = {};
	__u64 sp, t0, bias, wait, mutex, cookie;
	bool acquired;
	__u32 depth, nvcsw, cut, mark = timing_mark();
	long ret;

	if (!is_target(pid_tgid) ||
	    (bpf_get_attach_cookie(ctx) & SP_COOKIE_GUARD))
		return 0;
	st = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	if (!st || !st->depth)
		return 0;
	/* The frames of the calls this return lies above are gone. */
	sp = PT_REGS_SP(ctx);
	depth = pop_gone(st, sp - 16, (__u32)pid_tgid);
	if (!depth || depth > SP_CALLS_MAX)
		return 0;
	call = call_slot(st, depth - 1);
	if (sp != call->sp + 8)
		return 0;	/* a call whose entry was not seen returns */
	/* Both generations' returns run while the probes move: one ends it. */
	cookie = bpf_get_attach_cookie(ctx);
	if (SP_COOKIE_GEN_OF(cookie) != call->gen)
		return 0;
	if (call->epoch != duty_epoch) {
		/* --duty: entered before the probes went off; its wait
		 * spans the time off, not measured (dropped, counted). */
		st->depth = depth - 1;
		counter_bump(SP_CNT_DUTY_CUT);
		return 0;
	}
	key.object = call->object;
	key.callsite = call->callsite;
	key.stack_id = call->stack_id;
	key.type = call->type;
	key.tid = (__u32)pid_tgid;
	key.pid = (__u32)(pid_tgid >> 32);
	t0 = call->t0;
	mutex = call->mutex;
	nvcsw = call->nvcsw;
	cut = call->cut;
	st->depth = depth - 1;

	ret = (int)PT_REGS_RC(ctx);
	bias = calibration_ns[SP_COOKIE_KIND(cookie)];
	wait = now > t0 + bias ? now - t0 - bias : 0;
	acquired = call_succeeded(key.type, (int)ret);
	/* A condvar wait takes its mutex back even when it times out. */
	if (lockorder_enabled && (acquired || key.type == SP_TYPE_CONDVAR) &&
	    type_holds(key.type))
		lockorder_taken(mutex, key.callsite, key.stack_id,
				key.type == SP_TYPE_CONDVAR ? mutex_type(mutex)
							    : key.type,
				cookie & SP_COOKIE_TRY);
	/* --min-wait: a shorter call is not counted, nor what it released. */
	if (wait < min_wait_ns) {
		if (hold_enabled && (acquired || key.type == SP_TYPE_CONDVAR) &&
		    type_holds(key.type))
			hold_begin(&key, mutex, key.tid, now);
		return 0;
	}
	if ((stack_depth && call_waited(nvcsw, wait)) || cut) {
		struct unwind_result w = {};
		bool keep = stack_depth && call_waited(nvcsw, wait);

		/*
		 * The caller's frames are as they were at the entry.  An
		 * entry whose --skip walk was cut short (a new image's or
		 * library's table not read yet) gets its call site here.
		 */
		unwind_user(PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx),
			    (keep ? UNWIND_KEEP | UNWIND_LATE : 0) |
			    UNWIND_AT_RETURN, &w);
		if (keep)
			key.stack_id = w.stack_id;
		if (cut && !w.cut) {
			struct unwind_result first = { .cut = cut };

			unwind_rewalked(&first, &w);
			key.callsite = w.callsite;
		}
	}
	stats_add(&key, wait, wait, acquired, !acquired);
	/* --why: the calls that blocked, and the rest (why.bpf.h). */
	if (why_enabled && call_waited(nvcsw, wait))
		why_call_end(&key, t0, now, wait);
	else if (why_enabled)
		why_call_unblocked(&key, wait);
	futile_lock_slept(&key, (__u32)bpf_get_current_task_btf()->nvcsw - nvcsw);
	if (key.type == SP_TYPE_CONDVAR && ret == 0)
		futile_cond_woken(st, &key, key.object, mutex);
	record_wait(&key, now - wait, now, wait,
		    acquired ? SP_EVENT_COUNTED : SP_EVENT_FAILED);
	/* A condvar wait takes its mutex back even when it times out. */
	if (hold_enabled && (acquired || key.type == SP_TYPE_CONDVAR) &&
	    type_holds(key.type))
		hold_begin(&key, mutex, key.tid, now);
	if (blame_enabled && acquired)
		blame_full_charge(&key, t0, wait);
	timing_add(now, wait_timing ? bpf_ktime_get_ns() : 0, mark, false);
	return 0;
}

SEC("uprobe")
int lock_enter(struct pt_regs *ctx)
{
	return on_enter(ctx);
}

SEC("uretprobe")
int lock_return(struct pt_regs *ctx)
{
	return on_return(ctx);
}

/*
 * The same two, for perf-event uprobes attached through a thread other
 * than main once main has exited (see probes.c): a program is loaded for
 * uprobe_multi links or for perf events, not both.
 */
SEC("uprobe")
int lock_enter_thread(struct pt_regs *ctx)
{
	return on_enter(ctx);
}

SEC("uretprobe")
int lock_return_thread(struct pt_regs *ctx)
{
	return on_return(ctx);
}

/* The thread the probes are attached through; the loader sets it. */
volatile __u32 anchor_tid = 0;
/* The threads the guards' links are attached through (SP_COOKIE_GUARD). */
volatile __u32 guard_tids[2] = {};

/* Tells the loader at once when one of those threads exits. */
SEC("raw_tp/sched_process_exit")
int thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	if (!is_target(pid_tgid) ||
	    (tid != anchor_tid && tid != guard_tids[0] && tid != guard_tids[1]))
		return 0;
	module_event(SP_MODULE_EVENT_ANCHOR_EXIT, (__u32)(pid_tgid >> 32), 0);
	return 0;
}
