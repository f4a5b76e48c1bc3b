// SPDX-License-Identifier: GPL-2.0
/*
 * The findings' weights.  A thread's busy share is what it ran of the
 * time it was neither waiting for a lock nor for a CPU: near 1 for a
 * worker that computes between its lock calls, near 0 for a background
 * thread that sleeps between rounds.  Each wait weighs as its thread's
 * share.  A woken wait's CPU wait is counted once (it is in both the wait
 * and the run queue).  The rows of threads that exited before the report
 * was read come folded without a thread: they weigh as their lock's
 * known waits, not fully (a background lock whose threads ended first
 * would otherwise outrank the lock its workers wait for).  A lock whose
 * waiters all exited weighs as those threads did, taken as one: the
 * process's threads with no rows of their own, their run over their time
 * less the folded waits and their CPU waits.  The process's other
 * threads' waits only when no such thread is known: weighed by them, a
 * main thread that sleeps in its joins, with a few microseconds of the
 * loader's locks, made seconds of its exited workers' waits weigh
 * nothing (a program whose workers end before it does, or whose exit a
 * loaded host delays past a read, lost its findings).
 *
 * The shares are computed once a report, in one walk of the waits, each
 * finding its threads by binary search (findings__weigh_threads), and
 * serve both findings__build and the table's weights (in->weighed).  A
 * walk of all the waits for each thread, done for each of the two, was
 * what a report with a thousand threads spent most of its judging on.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "sortorder.h"

/* A thread's busy share from its lock waits and the waits woken. */
static void share_of(const struct findings_input *in, struct findings_thread *t,
		     uint64_t locked, uint64_t woken)
{
	uint64_t span = t->span_ns ? t->span_ns : in->elapsed_ns;
	double free_ns, inside = 0;

	/*
	 * A woken lock wait ends when its thread runs again: the CPU
	 * wait after the wake is in both its wait and runq_ns.  Each
	 * time on a CPU follows one CPU wait: the lock waits' part,
	 * one per wait that blocked, as long as the thread's average
	 * (contended mode: every wait counted blocked; full mode
	 * counts every call, most of them never woken).
	 */
	if (!in->every_call && t->slices)
		inside = (double)t->runq_ns * (double)woken /
			 (double)t->slices;
	if (inside > (double)t->runq_ns)
		inside = (double)t->runq_ns;
	if (inside > (double)locked)
		inside = (double)locked;
	free_ns = (double)span - (double)locked - (double)t->runq_ns +
		  inside;
	if (free_ns <= 0)
		t->busy = 1.0;	/* all of it waited: weigh it fully */
	else
		t->busy = (double)t->run_ns / free_ns;
	if (t->busy > 1)
		t->busy = 1;
	if (t->busy < 0)
		t->busy = 0;
}

static int thread_cmp(const void *pa, const void *pb)
{
	const struct findings_thread *a = pa, *b = pb;

	return order__u64(a->tid, b->tid) ?: order__u64(a->pid, b->pid);
}

/* The first of the threads t[0..n) (sorted by tid) with tid tid. */
static size_t first_of(const struct findings_thread *t, size_t n,
		       uint32_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A thread's lock waits and woken waits: one walk of the waits, each
 * finding its threads by binary search (a thread of pid 0 is any
 * process's thread of that tid).  The shares go in busy.
 */
static int busy_shares(const struct findings_input *in,
		       struct findings_thread *t, size_t n)
{
	uint64_t *locked = calloc(2 * n + 1, sizeof(*locked));
	uint64_t *woken = locked + n;

	if (!locked)
		return -ENOMEM;
	for (size_t k = 0; k < in->n_waits; k++) {
		const struct findings_wait *w = &in->waits[k];

		if (w->event)
			continue;
		for (size_t i = first_of(t, n, w->tid);
		     i < n && t[i].tid == w->tid; i++)
			if (!t[i].pid || w->pid == t[i].pid) {
				locked[i] += w->wait_ns;
				woken[i] += w->count;
			}
	}
	for (size_t i = 0; i < n; i++)
		share_of(in, &t[i], locked[i], woken[i]);
	free(locked);
	return 0;
}

int findings__weigh_threads(const struct findings_input *in,
			    struct findings_thread **out)
{
	struct findings_thread *t = malloc((in->n_threads + 1) * sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (in->n_threads)
		memcpy(t, in->threads, in->n_threads * sizeof(*t));
	qsort(t, in->n_threads, sizeof(*t), thread_cmp);
	err = busy_shares(in, t, in->n_threads);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}
/* The busy share of pid's thread tid in t[0..n) (sorted): 1 unknown. */
static double busy_of(const struct findings_thread *t, size_t n, uint32_t pid,
		      uint32_t tid)
{
	for (size_t i = first_of(t, n, tid); i < n && t[i].tid == tid; i++)
		if (!pid || !t[i].pid || t[i].pid == pid) {
			double b = t[i].busy;

			return b < 0 ? 0 : b > 1 ? 1 : b;
		}
	return 1.0;
}

int findings__wait_cmp(const void *pa, const void *pb)
{
	const struct findings_wait *a = pa, *b = pb;

	return order__u64(a->pid, b->pid) ?: order__u64(a->type, b->type) ?:
	       order__u64(a->object, b->object) ?:
	       order__u64(a->callsite, b->callsite);
}

/*
 * Each wait's weight: its thread's busy share.  The rows of threads that
 * exited before the report was read are folded into one row without a
 * thread (waits/fold.c): they weigh as the lock's other waits do (the
 * same threads, mostly, gone at the end), else as the threads whose
 * rows were folded (gone_share), else as the process's, and only then
 * fully.  Weighing them fully made a background lock whose threads
 * ended first outrank the one its workers wait for.
 */
/*
 * The waits in [from, to) whose weight is not known yet (busy < 0) weigh
 * as the mean of those whose thread is known there, by wait; none known:
 * none.
 */
static void weigh_folded(struct findings_wait *w, size_t from, size_t to,
			 double none)
{
	double weighted = 0, known_ns = 0;

	for (size_t k = from; k < to; k++)
		if (w[k].tid && w[k].busy >= 0) {
			weighted += (double)w[k].wait_ns * w[k].busy;
			known_ns += (double)w[k].wait_ns;
		}
	for (size_t k = from; k < to; k++)
		if (w[k].busy < 0)
			w[k].busy = known_ns > 0 ? weighted / known_ns : none;
}

/*
 * The busy share of pid's threads in t[0..n_t) (pid 0: any process's)
 * that have no rows of their own (their tids not in tids[0..n_tids),
 * sorted): the threads whose rows were folded when they exited, with
 * those that waited for no lock.  Taken as one thread whose lock waits
 * are the folded rows of w[from, to) (pid's rows); -1: no such thread.
 */
static double gone_share(const struct findings_input *in,
			 const struct findings_thread *t, size_t n_t,
			 const uint32_t *tids, size_t n_tids, uint32_t pid,
			 const struct findings_wait *w, size_t from, size_t to)
{
	struct findings_thread gone = { .pid = pid };
	uint64_t locked = 0, woken = 0;
	size_t threads = 0;

	for (size_t i = 0; i < n_t; i++) {
		const struct findings_thread *e = &t[i];

		if ((pid && e->pid && e->pid != pid) ||
		    bsearch(&e->tid, tids, n_tids, sizeof(*tids),
			    order__u32_at))
			continue;
		gone.run_ns += e->run_ns;
		gone.runq_ns += e->runq_ns;
		gone.slices += e->slices;
		gone.span_ns += e->span_ns ? e->span_ns : in->elapsed_ns;
		threads++;
	}
	if (!threads)
		return -1;
	for (size_t k = from; k < to; k++)
		if (!w[k].tid) {
			locked += w[k].wait_ns;
			woken += w[k].count;
		}
	share_of(in, &gone, locked, woken);
	return gone.busy;
}

/* The tids of the waits w[0..n) that have one, sorted, each once. */
static uint32_t *row_tids(const struct findings_wait *w, size_t n,
			  size_t *n_out)
{
	uint32_t *tids = malloc((n + 1) * sizeof(*tids));
	size_t k = 0;

	*n_out = 0;
	if (!tids)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (w[i].tid)
			tids[k++] = w[i].tid;
	qsort(tids, k, sizeof(*tids), order__u32_at);
	for (size_t i = 0; i < k; i++)
		if (!*n_out || tids[*n_out - 1] != tids[i])
			tids[(*n_out)++] = tids[i];
	return tids;
}

int findings__weigh(const struct findings_input *in, struct findings_wait *w,
		    size_t n)
{
	struct findings_thread *own = NULL;
	const struct findings_thread *t = in->weighed;
	uint32_t *tids;
	size_t end, n_tids;

	if (!t && in->n_threads) {
		int err = findings__weigh_threads(in, &own);

		if (err)
			return err;
		t = own;
	}
	tids = row_tids(w, n, &n_tids);
	if (!tids) {
		free(own);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		w[i].busy = w[i].tid ? busy_of(t, in->n_threads, w[i].pid,
						w[i].tid) : -1;
	qsort(w, n, sizeof(*w), findings__wait_cmp);
	for (size_t i = 0; i < n; i = end) {
		for (end = i; end < n && w[end].pid == w[i].pid &&
			      w[end].type == w[i].type &&
			      w[end].object == w[i].object; end++)
			;
		weigh_folded(w, i, end, -1);
	}
	/*
	 * Locks no known thread waited on: as the threads whose rows were
	 * folded, else as their process's waits.
	 */
	for (size_t i = 0; i < n; i = end) {
		double gone = -1;
		bool unknown = false;

		for (end = i; end < n && w[end].pid == w[i].pid; end++)
			unknown |= w[end].busy < 0;
		if (unknown)	/* a walk of the threads: only when needed */
			gone = gone_share(in, t, in->n_threads, tids, n_tids,
					  w[i].pid, w, i, end);
		for (size_t k = i; gone >= 0 && k < end; k++)
			if (w[k].busy < 0)
				w[k].busy = gone;
		weigh_folded(w, i, end, 1.0);
	}
	free(tids);
	free(own);
	return 0;
}

int findings__folded_weights(const struct findings_input *in,
			     struct findings_lock_weight **out, size_t *n_out)
{
	struct findings_wait *w = malloc((in->n_waits + 1) * sizeof(*w));
	size_t n = 0, k = 0;
	int err;

	*out = NULL;
	*n_out = 0;
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_waits; i++)
		if (!in->waits[i].event)
			w[n++] = in->waits[i];
	err = findings__weigh(in, w, n);	/* sorted by pid, type, object */
	if (!err) {
		*out = calloc(n + 1, sizeof(**out));
		err = *out ? 0 : -ENOMEM;
	}
	if (err)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!w[i].tid && (!k || (*out)[k - 1].pid != w[i].pid ||
				  (*out)[k - 1].object != w[i].object))
			(*out)[k++] = (struct findings_lock_weight){
				.pid = w[i].pid, .object = w[i].object,
				.busy = w[i].busy,
			};
	*n_out = k;
	free(w);
	return 0;
fail:
	free(w);
	return err;
}
