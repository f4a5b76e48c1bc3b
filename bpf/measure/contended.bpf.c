// SPDX-License-Identifier: GPL-2.0
/*
 * Contended mode: only waits that enter the kernel are seen, at the futex
 * system call's tracepoints, so an uncontended lock runs untouched.  The
 * tracepoint fires for every process; the first thing done is the
 * process filter.  Other processes still pay: enabled syscall tracepoints
 * send every task through the slow system-call path (make bench: +0.34 us
 * per futex call, +0.07 us per other system call, on these machines).
 *
 * At a wait's entry the program walks the user stack from the registers
 * the system call saved (unwind.bpf.h): the first pc outside libc (and
 * outside --skip functions) is the call site, the same return address
 * full mode reads at the pthread function's entry; the frames from there
 * on are the wait's stack; the outermost libc frame tells which lock
 * function blocked (libc_funcs).  Waits by one thread on one futex word
 * form one acquisition until it ends:
 *   - mutexes and glibc's own locks (lll locks) wait in a loop that
 *     re-tries the word, and a thread that got one after waiting always
 *     wakes at unlock (the word was set to 2): its next futex wake ends
 *     the acquisition, as does a wait on another word;
 *   - every other wait (condvar, rwlock, sem, plain futex) ends when the
 *     kernel wakes it or finds the word changed; a signal's interruption
 *     continues it.
 * An acquisition is counted once, when its first wait returns; its waits
 * add up to its blocked time.  A wait woken in an acquisition that goes
 * on was a futile wakeup (futile.bpf.h).  A timeout or an error ends it
 * as failed, and so does a wait cut short by the thread's death (a fatal
 * signal: the target exits or is killed).  A wait a handled signal
 * interrupts goes on after the handler: its time is added when the
 * acquisition ends, with its count, so no row shows blocked time without
 * the acquisitions it belongs to.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "errno.bpf.h"
#include "stats.bpf.h"
#include "unwind.h"
#include "record.bpf.h"
#include "unwind.bpf.h"
#include "waits.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"
#include "futile.bpf.h"

/* <linux/futex.h> */
#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_REQUEUE		3
#define FUTEX_CMP_REQUEUE	4
#define FUTEX_WAKE_OP		5
#define FUTEX_LOCK_PI		6
#define FUTEX_UNLOCK_PI		7
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_CMP_REQUEUE_PI	12
#define FUTEX_LOCK_PI2		13
#define FUTEX_CMD_MASK		0x7f

#define SIGKILL			9

/* Rows split by the mutex's holder (--per-thread); else holder 0. */
const volatile bool key_owner = false;
const volatile __u32 cond_signal_offset = 0;	/* 0: not known */

/* The open acquisition of each thread; states.bpf.c reads it too. */
contended_map_t contended SEC(".maps");

/* The tracepoints' records (events/syscalls/sys_{enter,exit}_futex/format). */
struct futex_enter_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 uaddr;
	__u64 op;
	__u64 val;
	__u64 utime;
	__u64 uaddr2;
	__u64 val3;
};

/* futex2's futex_wait(uaddr, val, mask, flags, timeout, clockid). */
struct futex_wait2_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 uaddr;
	__u64 val;
};

struct futex_exit_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

/* A wait of glibc's lll lock loop: only the holder's wake ends it. */
static __always_inline bool lll_wait(__u32 cmd)
{
	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET;
}

static __always_inline void mutex_row(struct sp_key *key, __u64 uaddr,
				      __u32 *holder)
{
	key->object = uaddr;
	key->type = mutex_type(uaddr);
	bpf_probe_read_user(holder, sizeof(*holder),
			    (void *)(uaddr + SP_MUTEX_OWNER_OFFSET));
	/* Rows by holder only with -T: else threads squared rows. */
	if (key_owner)
		key->owner_tid = *holder;
}

/*
 * Type and object by the libc function that waits.  Returns whether only
 * the holder's wake ends it (an lll lock).
 */
static __always_inline bool libc_key(struct sp_key *key, __u64 uaddr,
				     __u32 cmd, __u32 val, __u32 *holder,
				     const struct unwind_result *w)
{
	__u32 class;

	key->object = uaddr;
	key->type = SP_TYPE_FUTEX;
	if (w->lll) {
		key->type = SP_TYPE_LIBC_LOCK;
		return lll_wait(cmd);
	}
	class = w->libc_class;
	switch (class) {
	case SP_FUNC_MUTEX:
		mutex_row(key, uaddr, holder);
		break;
	case SP_FUNC_CONDVAR:
		if (cmd == FUTEX_WAIT_BITSET) {
			/* The signal words: the wait itself. */
			key->type = SP_TYPE_CONDVAR;
			if (cond_signal_offset)
				key->object = (uaddr & ~7ull) - cond_signal_offset;
			return false;
		}
		/* FUTEX_WAIT or LOCK_PI: taking the mutex back. */
		mutex_row(key, uaddr, holder);
		break;
	case SP_FUNC_CONDVAR_OTHER:
		key->type = SP_TYPE_CONDVAR;
		return false;
	case SP_FUNC_RWLOCK_R:
	case SP_FUNC_RWLOCK_W:
		key->type = class == SP_FUNC_RWLOCK_R ? SP_TYPE_RWLOCK_R
						      : SP_TYPE_RWLOCK_W;
		if (!(val & SP_RWLOCK_READERS_WAITING))
			key->object = (uaddr & ~7ull) - SP_RWLOCK_PHASE_OFFSET;
		return false;
	case SP_FUNC_SEM:
		key->type = SP_TYPE_SEM;
		return false;
	case SP_FUNC_BARRIER:
		key->type = SP_TYPE_BARRIER;
		return false;
	case SP_FUNC_JOIN:
		key->type = SP_TYPE_JOIN;
		return false;
	default:
		return false;
	}
	return lll_wait(cmd);
}

/*
 * The row of a new acquisition: call site by unwinding, type and object
 * by the libc function that waits, the type refined by the runtimes'
 * lock functions the walk crossed (unwind.bpf.h): a whole operation's
 * kind (a barrier, a join) first, then libc's classification, then the
 * innermost runtime lock function's kind (a Rust Mutex's futex wait).
 */
static __always_inline bool contended_key(struct sp_key *key, __u64 uaddr,
					  __u32 cmd, __u32 val, __u32 *holder,
					  struct unwind_result *w_out,
					  __u32 walk_flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct unwind_result w = {};
	bool close_on_wake;

	unwind_user(regs->ip, regs->sp, regs->bp, UNWIND_KEEP | walk_flags, &w);
	w_out->cut = w.cut;
	w_out->left_libc = w.left_libc;
	key->callsite = w.callsite;
	key->stack_id = w.stack_id;
	close_on_wake = libc_key(key, uaddr, cmd, val, holder, &w);
	if (key->type == SP_TYPE_LIBC_LOCK)
		return close_on_wake;
	if (w.whole_type && w.whole_type <= SP_TYPE__COUNT)
		key->type = w.whole_type - 1;
	else if (key->type == SP_TYPE_FUTEX && w.wrap_type &&
		 w.wrap_type <= SP_TYPE__COUNT)
		key->type = w.wrap_type - 1;
	return close_on_wake;
}

static __always_inline int wait_enter(__u64 uaddr, __u32 cmd, __u32 val)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	struct sp_contended *st;
	__u32 mark;

	if (!is_target(pid_tgid) || !thread_wanted((__u32)pid_tgid))
		return 0;
	first_wait(pid_tgid);
	mark = timing_mark();
	now = bpf_ktime_get_ns();
	st = bpf_task_storage_get(&contended, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return 0;
	}
	if (!st->uaddr || st->uaddr != uaddr) {
		struct sp_key key = { .tid = (__u32)pid_tgid,
				      .pid = (__u32)(pid_tgid >> 32) };
		struct unwind_result w = {};
		__u64 start = now;
		__u32 holder = 0;

		st->close_on_wake = contended_key(&key, uaddr, cmd, val,
						  &holder, &w, 0);
		if (!lock_wanted(key.type, key.object)) {
			/* Not measured; the next wait is judged again. */
			st->uaddr = 0;
			st->t0 = 0;
			return 0;
		}
		st->key = key;
		st->holder = holder;
		st->cut = w.cut;
		st->cmd = cmd;
		st->val = val;
		st->uaddr = uaddr;
		st->counted = 0;
		st->episode_ns = 0;
		st->reported_ns = 0;
		st->blamed_ns = 0;
		/* The wait starts when the walk is done. */
		now = bpf_ktime_get_ns();
		timing_add(start, now, mark, true);
	} else if (st->woken) {
		/* Woken, and the lock was gone again (futile.bpf.h). */
		futile_add(&st->key, 1);
	}
	st->woken = 0;
	st->t0 = now;
	if (why_enabled)
		why_wait_begin(st->key.type, st->key.object, now);
	return 0;
}

/* --blame: the call site and stack of a release (a wake), as a wait's. */
static __always_inline void release_site(struct unwind_result *w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	unwind_user(regs->ip, regs->sp, regs->bp,
		    UNWIND_KEEP | UNWIND_RELEASE, w);
}

static __always_inline int wake_enter(__u64 uaddr, __u64 uaddr2, __u32 cmd)
{
	struct sp_contended *st;

	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	if (blame_enabled) {
		struct unwind_result w = {};

		release_site(&w);
		blame_release(w.callsite, w.stack_id, uaddr, uaddr2, cmd,
			      cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE ||
			      cmd == FUTEX_CMP_REQUEUE_PI);
	}
	st = bpf_task_storage_get(&contended, bpf_get_current_task_btf(), 0, 0);
	if (st)
		st->uaddr = 0;	/* the holder's unlock: the acquisition ended */
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct futex_enter_args *ctx)
{
	__u32 cmd = (__u32)ctx->op & FUTEX_CMD_MASK;

	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		return wait_enter(ctx->uaddr, cmd, (__u32)ctx->val);
	case FUTEX_WAKE:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_WAKE_OP:
	case FUTEX_UNLOCK_PI:
	case FUTEX_WAKE_BITSET:
	case FUTEX_CMP_REQUEUE_PI:
		return wake_enter(ctx->uaddr, ctx->uaddr2, cmd);
	default:
		return 0;
	}
}

SEC("tracepoint/syscalls/sys_enter_futex_wait")
int futex2_wait_enter(struct futex_wait2_args *ctx)
{
	return wait_enter(ctx->uaddr, FUTEX_WAIT_BITSET, (__u32)ctx->val);
}

SEC("tracepoint/syscalls/sys_enter_futex_wake")
int futex2_wake_enter(struct futex_wait2_args *ctx)
{
	return wake_enter(ctx->uaddr, 0, FUTEX_WAKE);
}

/* The thread is dying: a fatal signal (exit_group, a kill) queued SIGKILL. */
static __always_inline bool dying(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return task->pending.signal.sig[0] & (1ull << (SIGKILL - 1));
}

/*
 * The first wait of an acquisition whose walk was cut short (a new
 * image's or library's table not read yet when it began): walked again
 * from the same registers as it ends, when the loader has most likely
 * read the table, so the wait is filed with its whole stack.  The row's
 * holder stays the one seen when the wait began.  A walk still cut then
 * keeps its raw frames for the loader (UNWIND_LATE, bpf/unwind.h).
 */
static __always_inline void contended_rekey(struct sp_contended *st)
{
	struct unwind_result first = { .cut = st->cut }, again = {};
	struct sp_key key = st->key;
	__u32 holder = 0;
	bool close_on_wake;

	st->cut = 0;
	if (st->counted || st->reported_ns)
		return;
	close_on_wake = contended_key(&key, st->uaddr, st->cmd, st->val,
				      &holder, &again, UNWIND_LATE);
	unwind_rewalked(&first, &again);
	/* Still cut: filed under its late walk's stack, if it kept one. */
	if (again.cut && (again.cut != UNWIND_CUT_STACK ||
			  key.callsite != st->key.callsite))
		return;
	key.owner_tid = st->key.owner_tid;
	st->key = key;
	st->close_on_wake = close_on_wake;
}

static __always_inline int wait_exit(__s64 ret)
{
	__u64 now, wait, count_inc = 0, failed_inc = 0;
	struct sp_release woke = {};
	struct sp_contended *st;
	bool short_wait;
	__u32 mark;

	/* Every futex return on the machine comes here: filter first. */
	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	mark = timing_mark();
	now = bpf_ktime_get_ns();
	st = bpf_task_storage_get(&contended, bpf_get_current_task_btf(), 0, 0);
	if (!st || !st->t0)
		return 0;
	wait = now > st->t0 ? now - st->t0 : 0;
	st->t0 = 0;
	st->woken = 0;
	if (st->cut)
		contended_rekey(st);
	st->episode_ns += wait;
	/*
	 * --min-wait: an acquisition whose blocked time, when it is woken or
	 * fails, is shorter is not counted; its later waits on the same word
	 * (woken, then beaten to the lock) are a wait of their own.
	 */
	short_wait = !st->counted && st->episode_ns < min_wait_ns;
	if (ret == 0 || ret == -EAGAIN) {
		/* Woken, or the word changed before it could sleep. */
		if (blame_enabled && !short_wait)
			blame_wait_end(st, now - wait, now, &woke);
		count_inc = !st->counted;
		st->counted = 1;
		st->woken = ret == 0;
		if (!st->close_on_wake)
			st->uaddr = 0;
	} else if ((ret == -EINTR || ret == -ERESTARTSYS ||
		    ret == -ERESTARTNOINTR || ret == -ERESTARTNOHAND ||
		    ret == -ERESTART_RESTARTBLOCK) && !dying()) {
		/* A signal: the wait goes on after the handler. */
		if (!st->counted)
			return 0;	/* added when the acquisition ends */
	} else {
		/* Timed out, refused or cut short: the acquisition failed. */
		failed_inc = !st->counted;
		st->counted = 1;
		st->uaddr = 0;
	}
	if (short_wait) {
		st->uaddr = 0;
		return 0;
	}
	wait = st->episode_ns - st->reported_ns;
	st->reported_ns = st->episode_ns;
	stats_add(&st->key, wait, st->episode_ns, count_inc, failed_inc);
	if (why_enabled)
		why_wait_end(&st->key, &woke, now, wait);
	if (record_on) {
		/* The timeline names the holder, --per-thread or not. */
		struct sp_key key = st->key;

		key.owner_tid = st->holder;
		record_wait(&key, now - wait, now, st->episode_ns,
			    (count_inc ? SP_EVENT_COUNTED : 0) |
			    (failed_inc ? SP_EVENT_FAILED : 0));
	}
	timing_add(now, wait_timing ? bpf_ktime_get_ns() : 0, mark, false);
	return 0;
}

/*
 * Every system call's exit record has the same layout: the loader
 * attaches this one program to futex2's futex_wait exit too, so the
 * verifier checks it once.
 */
SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct futex_exit_args *ctx)
{
	return wait_exit(ctx->ret);
}
