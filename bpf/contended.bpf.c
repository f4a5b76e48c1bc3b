// SPDX-License-Identifier: GPL-2.0
/*
 * Contended mode: only waits that enter the kernel are seen, at the futex
 * system call's tracepoints, so an uncontended lock runs untouched.  The
 * tracepoint fires for every process; the first thing done is the
 * process filter.  Other processes still pay: enabled syscall tracepoints
 * send every task through the slow system-call path (make bench: +0.34 us
 * per futex call, +0.07 us per other system call, on these machines).
 *
 * At a wait's entry the program steps out of libc with the loader's
 * unwind rows (bpf/unwind.h), from the user registers the syscall saved:
 * the first pc outside libc is the call site, the same return address
 * full mode reads at the pthread function's entry, and the outermost libc
 * pc tells which lock function blocked (libc_funcs).  Waits by one thread
 * on one futex word form one acquisition until it ends:
 *   - mutexes and glibc's own locks (lll locks) wait in a loop that
 *     re-tries the word, and a thread that got one after waiting always
 *     wakes at unlock (the word was set to 2): its next futex wake ends
 *     the acquisition, as does a wait on another word;
 *   - every other wait (condvar, rwlock, sem, plain futex) ends when the
 *     kernel wakes it or finds the word changed; a signal's interruption
 *     continues it.
 * An acquisition is counted once, when its first wait returns; its waits
 * add up to its blocked time.  A timeout or an error ends it as failed.
 *
 * Searches run under bpf_loop: a binary search of ~25,000 rows nested in
 * a walk of up to 12 frames as plain bounded loops would make the
 * verifier explore every path of every iteration.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "unwind.h"
#include "record.bpf.h"
#include "waits.bpf.h"

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

#define EINTR			4
#define EAGAIN			11
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

/* Where libc's code is in the target, and what the loader found in it. */
const volatile __u64 libc_bias = 0;
const volatile __u64 libc_text_start = 0;
const volatile __u64 libc_text_end = 0;
const volatile __u32 unwind_nrows = 0;
const volatile __u32 func_nrows = 0;
const volatile __u64 lll_private_start = 0;	/* file-relative */
const volatile __u64 lll_private_end = 0;
const volatile __u32 cond_signal_offset = 0;	/* 0: not known */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sp_unwind_row);
	__uint(max_entries, 1);		/* set by the loader before load */
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sp_func_range);
	__uint(max_entries, 1);		/* set by the loader before load */
} libc_funcs SEC(".maps");

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

struct row_search {
	__u64 addr;
	__u32 lo;
	__u32 hi;
	bool found;
	struct sp_unwind_row row;
};

static long row_search_step(__u32 i, void *data)
{
	struct row_search *s = data;
	struct sp_unwind_row *row;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	row = bpf_map_lookup_elem(&unwind_rows, &mid);
	if (!row)
		return 1;
	if (s->addr < row->start) {
		s->hi = mid;
	} else if (s->addr >= row->end) {
		s->lo = mid + 1;
	} else {
		s->row = *row;
		s->found = true;
		return 1;
	}
	return 0;
}

struct func_search {
	__u64 addr;
	__u32 class;
};

static long func_search_step(__u32 i, void *data)
{
	struct func_search *s = data;
	struct sp_func_range *f = bpf_map_lookup_elem(&libc_funcs, &i);

	if (!f || s->addr < f->start)
		return 1;	/* sorted: nothing further can hold it */
	if (s->addr < f->end) {
		s->class = f->class;
		return 1;
	}
	return 0;
}

/* One step of the walk out of libc: the state between frames. */
struct libc_walk {
	__u64 pc;
	__u64 sp;
	__u64 bp;
	bool bp_known;
	bool done;		/* pc left libc: it is the call site */
	bool stopped;		/* no usable rule: pc is the best we have */
	__u64 outer_rel;	/* the outermost libc frame's lookup address */
};

static long libc_walk_step(__u32 i, void *data)
{
	struct libc_walk *w = data;
	struct row_search s = {};
	__u64 cfa, ra, bp;

	if (w->pc < libc_text_start || w->pc >= libc_text_end) {
		w->done = true;
		return 1;
	}
	/* A return address is looked up in the call before it. */
	s.addr = w->pc - libc_bias - (i ? 1 : 0);
	s.hi = unwind_nrows;
	w->outer_rel = s.addr;
	bpf_loop(20, row_search_step, &s, 0);
	if (!s.found || (s.row.flags & SP_UNWIND_F_UNSUPPORTED)) {
		w->stopped = true;
		return 1;
	}
	if (s.row.cfa_reg == SP_UNWIND_CFA_RSP) {
		cfa = w->sp + (__s64)s.row.cfa_offset;
	} else if (s.row.cfa_reg == SP_UNWIND_CFA_RBP && w->bp_known) {
		cfa = w->bp + (__s64)s.row.cfa_offset;
	} else {
		w->stopped = true;
		return 1;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		w->stopped = true;
		return 1;
	}
	ra = real_return_address(cfa - 8, ra);
	if (s.row.rbp_rule == SP_UNWIND_RBP_AT_CFA) {
		w->bp_known = !bpf_probe_read_user(&bp, sizeof(bp),
				(void *)(cfa + (__s64)s.row.rbp_offset));
		w->bp = bp;
	} else if (s.row.rbp_rule == SP_UNWIND_RBP_UNDEFINED) {
		w->bp_known = false;
	}
	w->sp = cfa;
	w->pc = ra;
	return 0;
}

static __always_inline __u32 libc_class_at(__u64 rel)
{
	struct func_search s = { .addr = rel, .class = SP_FUNC_OTHER };

	bpf_loop(func_nrows, func_search_step, &s, 0);
	return s.class;
}

/* A wait of glibc's lll lock loop: only the holder's wake ends it. */
static __always_inline bool lll_wait(__u32 cmd)
{
	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET;
}

static __always_inline void mutex_row(struct sp_key *key, __u64 uaddr)
{
	__u32 owner = 0;

	key->object = uaddr;
	key->type = mutex_type(uaddr);
	bpf_probe_read_user(&owner, sizeof(owner),
			    (void *)(uaddr + SP_MUTEX_OWNER_OFFSET));
	key->owner_tid = owner;
}

/*
 * The row of a new acquisition: call site by unwinding, type and object
 * by the libc function that waits.  Returns whether only the holder's
 * wake ends it (an lll lock).
 */
static __always_inline bool contended_key(struct sp_key *key, __u64 uaddr,
					  __u32 cmd, __u32 val)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct libc_walk w = {};
	__u64 first_rel;
	__u32 class;

	w.pc = regs->ip;
	w.sp = regs->sp;
	w.bp = regs->bp;
	w.bp_known = true;
	first_rel = w.pc - libc_bias;
	bpf_loop(SP_UNWIND_MAX_FRAMES, libc_walk_step, &w, 0);
	if (w.stopped)
		counter_bump(SP_CNT_UNWIND_STOPPED);
	else if (!w.done)
		counter_bump(SP_CNT_UNWIND_DEEP);
	key->callsite = w.pc;
	key->object = uaddr;
	key->type = SP_TYPE_FUTEX;

	if (regs->ip >= libc_text_start && regs->ip < libc_text_end &&
	    first_rel >= lll_private_start && first_rel < lll_private_end) {
		key->type = SP_TYPE_LIBC_LOCK;
		return lll_wait(cmd);
	}
	class = w.outer_rel ? libc_class_at(w.outer_rel) : SP_FUNC_OTHER;
	switch (class) {
	case SP_FUNC_MUTEX:
		mutex_row(key, uaddr);
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
		mutex_row(key, uaddr);
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
	default:
		return false;
	}
	return lll_wait(cmd);
}

static __always_inline int wait_enter(__u64 uaddr, __u32 cmd, __u32 val)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	struct sp_contended *st;

	if (!is_target(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	st = bpf_task_storage_get(&contended, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		counter_bump(SP_CNT_DROPPED_INFLIGHT);
		return 0;
	}
	if (!st->uaddr || st->uaddr != uaddr) {
		struct sp_key key = { .tid = (__u32)pid_tgid };

		st->close_on_wake = contended_key(&key, uaddr, cmd, val);
		st->key = key;
		st->uaddr = uaddr;
		st->counted = 0;
		st->episode_ns = 0;
	}
	st->t0 = now;
	return 0;
}

static __always_inline int wake_enter(void)
{
	struct sp_contended *st;

	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
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
		return wake_enter();
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
int futex2_wake_enter(void *ctx)
{
	return wake_enter();
}

static __always_inline int wait_exit(__s64 ret)
{
	__u64 now, wait, count_inc = 0, failed_inc = 0;
	struct sp_contended *st;

	/* Every futex return on the machine comes here: filter first. */
	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	now = bpf_ktime_get_ns();
	st = bpf_task_storage_get(&contended, bpf_get_current_task_btf(), 0, 0);
	if (!st || !st->t0)
		return 0;
	wait = now > st->t0 ? now - st->t0 : 0;
	st->t0 = 0;
	st->episode_ns += wait;
	if (ret == 0 || ret == -EAGAIN) {
		/* Woken, or the word changed before it could sleep. */
		count_inc = !st->counted;
		st->counted = 1;
		if (!st->close_on_wake)
			st->uaddr = 0;
	} else if (ret == -EINTR || ret == -ERESTARTSYS ||
		   ret == -ERESTARTNOINTR || ret == -ERESTARTNOHAND ||
		   ret == -ERESTART_RESTARTBLOCK) {
		/* A signal: the wait goes on after the handler. */
	} else {
		/* Timed out or refused: the acquisition failed. */
		failed_inc = !st->counted;
		st->counted = 1;
		st->uaddr = 0;
	}
	stats_add(&st->key, wait, st->episode_ns, count_inc, failed_inc);
	record_wait(&st->key, now - wait, now, st->episode_ns,
		    (count_inc ? SP_EVENT_COUNTED : 0) |
		    (failed_inc ? SP_EVENT_FAILED : 0));
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct futex_exit_args *ctx)
{
	return wait_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_futex_wait")
int futex2_wait_exit(struct futex_exit_args *ctx)
{
	return wait_exit(ctx->ret);
}
