// SPDX-License-Identifier: GPL-2.0
/*
 * --why's maps (see why.bpf.h), and --states' threads, which both read:
 * defined here, among the files linked first, because contended.bpf.c
 * reads it before states.bpf.c (linked last) updates it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"

const volatile __u32 why_enabled = 0;
const struct sp_why_last why_last_zero = {};

threads_map_t threads SEC(".maps");
why_waits_map_t why_waits SEC(".maps");
why_last_map_t why_last SEC(".maps");
why_map_t why SEC(".maps");

/* Adds ns at (site, pid, state) to the record, or says it did not fit. */
__noinline int why_root_add(struct sp_why_last *mine, __u64 site, __u32 pid,
			    __u32 state, __u64 ns)
{
	if (!mine)
		return 0;
	__u32 n = mine->n, at;

	if (!ns)
		return true;
	for (int i = 0; i < SP_WHY_ROOTS; i++) {
		struct sp_why_root *r = &mine->roots[i];

		if (i >= n)
			break;
		if (r->site == site && r->pid == pid && r->state == state) {
			r->ns += ns;
			mine->total += ns;
			return true;
		}
	}
	if (n >= SP_WHY_ROOTS)
		return false;
	/* Masked where the compiler cannot drop it: the verifier's bound. */
	at = n;
	asm volatile("" : "+r"(at));
	at &= SP_WHY_ROOTS - 1;
	mine->roots[at] = (struct sp_why_root){ site, ns, pid, state };
	mine->n = n + 1;
	mine->total += ns;
	return true;
}

static const struct sp_why_value why_value_zero = {};

/* The row's entry for (site, pid, kind); NULL (counted) when full. */
static __always_inline struct sp_why_value *
why_value(const struct sp_key *row, __u64 site, __u32 pid, __u32 kind)
{
	struct sp_why_key key = { .row = *row, .site = site, .pid = pid,
				  .kind = kind };
	struct sp_why_value *v;
	bool inserted;

	v = map_lookup_or_init(&why, &key, &why_value_zero, &inserted);
	if (!v)
		counter_bump(SP_CNT_WHY_DROPPED);
	return v;
}

static __always_inline void why_add(struct sp_why_value *v, __u32 kind,
				    __u32 state, __u64 ns)
{
	if (!v || !ns || state >= SP_WHY__COUNT)
		return;
	__sync_fetch_and_add(&v->ns[state], ns);
	if (kind == SP_WHY_ROOT)
		__sync_fetch_and_add(&v->waits[state], 1);
}

/*
 * Full mode: a lock call that never blocked added wait ns to its row:
 * the lock function's own time, with no holder seen.  Charged as
 * unknown, at no release, so a row's parts still add up to its wait;
 * the thread's record (its last wait, for chains) is left as it was.
 */
__noinline int why_call_unblocked(const struct sp_key *row, __u64 wait)
{
	if (!row || !wait)
		return 0;
	why_add(why_value(row, 0, 0, SP_WHY_HOLDER), SP_WHY_HOLDER,
		SP_WHY_UNKNOWN, wait);
	why_add(why_value(row, 0, 0, SP_WHY_ROOT), SP_WHY_ROOT,
		SP_WHY_UNKNOWN, wait);
	return 0;
}

/*
 * A root of the wait: kept in the record (charged to the row at the
 * end, and passed on to this thread's waiters), or, when the record is
 * full, charged to the row at once and not passed on (counted).
 */
static __always_inline void why_root(struct sp_why_last *mine,
				     const struct sp_key *row, __u64 site,
				     __u32 pid, __u32 state, __u64 ns,
				     bool *dropped)
{
	if (why_root_add(mine, site, pid, state, ns))
		return;
	*dropped = true;
	why_add(why_value(row, site, pid, SP_WHY_ROOT), SP_WHY_ROOT, state, ns);
}

/* Whether tid is in the chain of the record (a cycle). */
static __always_inline bool why_in_chain(const struct sp_why_last *rec,
					 __u32 tid)
{
	for (int i = 0; i < SP_WHY_DEPTH; i++)
		if (i < rec->depth && rec->tids[i] == tid)
			return true;
	return false;
}

/*
 * The holder's lock-wait share `lock` of a wait [t0, now] goes on to the
 * roots of the holder's last wait, if it can be followed.
 */
static __always_inline bool why_follow(struct sp_why_last *mine,
				       const struct sp_key *row,
				       const struct sp_why_last *theirs,
				       __u32 self, __u64 t0, __u64 now,
				       __u64 lock, bool *dropped)
{
	__u64 left = lock;

	if (!theirs || theirs->end_ns < t0 || theirs->end_ns > now ||
	    !theirs->total || !theirs->n || theirs->depth >= SP_WHY_DEPTH ||
	    why_in_chain(theirs, self))
		return false;
	for (int i = 0; i < SP_WHY_ROOTS; i++) {
		const struct sp_why_root *r = &theirs->roots[i];
		__u64 share;

		if (i >= theirs->n)
			break;
		/* In 1/1024ths: products stay far from 2^64. */
		share = r->ns >= theirs->total ? left
			: lock * ((r->ns << 10) / theirs->total) >> 10;
		if (share > left || i + 1 == theirs->n)
			share = left;
		left -= share;
		why_root(mine, row, r->site, r->pid, r->state, share, dropped);
	}
	for (int i = 0; i < SP_WHY_DEPTH - 1; i++)
		if (i < theirs->depth)
			mine->tids[i + 1] = theirs->tids[i];
	mine->depth = theirs->depth + 1;
	return true;
}

/*
 * The wait begun last added wait ns to its row at now; rel: the release
 * that woke it (site 0: none seen).  Splits the wait by the
 * holder's clocks over its last futex wait (the rest, interrupted
 * earlier or not followed, is `unknown`), charges the row's roots, and
 * leaves them as this thread's record for its own waiters.
 */
__noinline int why_wait_end(const struct sp_key *row,
			    const struct sp_release *rel, __u64 now,
			    __u64 wait)
{
	__u32 self = (__u32)bpf_get_current_pid_tgid(), holder;
	struct sp_why_last *mine, *theirs = NULL;
	__u64 h[SP_WHY__COUNT] = {}, cur[SP_WHY_CLOCKS], left = wait;
	__u64 site = rel->site;
	__u32 pid = rel->pid;
	struct sp_why_value *v;
	struct sp_why_wait *w;
	struct sp_thread *t;
	bool inserted, dropped = false;

	if (!row || !rel)
		return 0;
	w = bpf_task_storage_get(&why_waits, bpf_get_current_task_btf(), 0, 0);
	if (!w || !w->t0)
		return 0;
	holder = w->holder;
	if (w->known && rel->clocked && rel->tid == holder &&
	    rel->ts >= w->t0 && rel->ts <= now) {
		/* The holder's clocks as it let go; then the waiter's. */
		for (int i = 0; i < SP_WHY_CLOCKS; i++)
			cur[i] = rel->at[i];
		h[SP_WHY_WOKEN] = now - rel->ts < left ? now - rel->ts : left;
		left -= h[SP_WHY_WOKEN];
		t = NULL;
	} else if (w->known && (t = bpf_map_lookup_elem(&threads, &holder))) {
		why_clocks(t, now, cur);
	} else {
		w->known = 0;
	}
	if (w->known) {
		for (int i = 0; i < SP_WHY_CLOCKS; i++) {
			__u64 d = cur[i] > w->at[i] ? cur[i] - w->at[i] : 0;

			d = d < left ? d : left;
			h[i] = d;
			left -= d;
		}
	}
	h[SP_WHY_UNKNOWN] = left;
	/* One entry per row for the holder, one per root site: one lookup. */
	v = why_value(row, 0, 0, SP_WHY_HOLDER);
	for (int i = 0; i < SP_WHY__COUNT; i++)
		why_add(v, SP_WHY_HOLDER, i, h[i]);

	mine = map_lookup_or_init(&why_last, &self, &why_last_zero, &inserted);
	if (!mine) {
		counter_bump(SP_CNT_WHY_DROPPED);
		return 0;
	}
	__builtin_memset(mine, 0, sizeof(*mine));
	mine->start_ns = w->t0;
	mine->end_ns = now;
	mine->depth = 1;
	mine->tids[0] = holder;
	if (w->known && h[SP_WHY_LOCK])
		theirs = bpf_map_lookup_elem(&why_last, &holder);
	if (h[SP_WHY_LOCK] &&
	    !why_follow(mine, row, theirs, self, w->t0, now,
			h[SP_WHY_LOCK], &dropped)) {
		counter_bump(SP_CNT_WHY_CUT);
		why_root(mine, row, site, pid, SP_WHY_LOCK,
			 h[SP_WHY_LOCK], &dropped);
	}
	why_root(mine, row, site, pid, SP_WHY_RUNNING,
		 h[SP_WHY_RUNNING], &dropped);
	why_root(mine, row, site, pid, SP_WHY_RUNNABLE,
		 h[SP_WHY_RUNNABLE], &dropped);
	why_root(mine, row, site, pid, SP_WHY_SLEEP, h[SP_WHY_SLEEP],
		 &dropped);
	why_root(mine, row, site, pid, SP_WHY_STOLEN, h[SP_WHY_STOLEN],
		 &dropped);
	why_root(mine, row, site, pid, SP_WHY_UNKNOWN,
		 h[SP_WHY_UNKNOWN], &dropped);
	/* After the release: the waiter's own wait, at the release. */
	why_root(mine, row, site, pid, SP_WHY_WOKEN, h[SP_WHY_WOKEN],
		 &dropped);
	if (dropped)
		counter_bump(SP_CNT_WHY_DROPPED);
	v = NULL;
	for (int i = 0; i < SP_WHY_ROOTS; i++) {
		struct sp_why_root *r = &mine->roots[i];

		if (i >= mine->n)
			break;
		/* Roots of one site follow each other: looked up once. */
		if (!v || r->site != site || r->pid != pid) {
			site = r->site;
			pid = r->pid;
			v = why_value(row, site, pid, SP_WHY_ROOT);
		}
		why_add(v, SP_WHY_ROOT, r->state, r->ns);
	}
	w->t0 = 0;
	return 0;
}
