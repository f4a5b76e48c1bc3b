// SPDX-License-Identifier: GPL-2.0
/*
 * Thread-state accounting, in QSP's manner: what was chosen, and why.
 *
 * The kernel keeps, per thread, nanoseconds per state up to its last
 * event and the state it is in since then (bpf/measure/states.bpf.c).
 * Each read turns that into cumulative totals at one instant: the
 * counters plus the open interval of the current state.  A thread record
 * keeps three sets of totals: at the latest read, at the mark (where the
 * next report window starts) and at the origin (attach, or the live
 * screen's reset); a window is the difference.  Rejected: differences
 * between consecutive reads summed per window (a drain read between two
 * reports would need its own bookkeeping), and windows computed in the
 * kernel (one more write per event on every context switch of the
 * target).
 *
 * Exact sums.  Every read stands for one instant, taken after the last
 * entry was copied, so no open interval is negative and each thread's
 * totals add up to its age exactly.  A thread whose state changed between
 * its copy and that instant has a few microseconds on the wrong state;
 * the next window corrects it, and a correction below zero is settled on
 * the state the thread is in, then on its largest, so every row still adds
 * up to the time it was alive in the window.
 *
 * Records are kept in TID order (then birth), so a read is merged with one
 * sort of its samples and binary searches; dead threads are kept while a
 * window that includes their life can still be asked for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "sortorder.h"
#include "threadstates.h"

/*
 * Accounts per thread: running, runnable, sleep, stolen, then one per
 * lock type.
 */
enum {
	ACC_RUNNING = 0,
	ACC_RUNNABLE,
	ACC_SLEEP,
	ACC_STOLEN,
	ACC_LOCK0,
	ACC__COUNT = ACC_LOCK0 + SP_TYPE__COUNT,
};

struct thread_rec {
	uint32_t tid;
	uint32_t state;		/* enum sp_thread_state, at the latest read */
	uint32_t lock_type;
	bool gone;		/* dead, or replaced by a new thread */
	bool seen;		/* in the read being merged */
	uint64_t born_ns;
	uint64_t exit_ns;	/* 0 while alive */
	char comm[STATES_COMM_LEN];
	uint64_t latest[ACC__COUNT];
	uint64_t mark[ACC__COUNT];
	uint64_t origin[ACC__COUNT];
};

struct threadstates {
	struct thread_rec *recs;	/* sorted by (tid, born_ns) */
	size_t count;
	size_t cap;
	uint64_t latest_ns;
	uint64_t mark_ns;
	uint64_t origin_ns;
	bool started;		/* a read came: the origin is set */
	bool keep_totals;	/* windows since the origin will be asked for */
};

static const char *const state_names[SP_THREAD__COUNT] = {
	[SP_THREAD_RUNNING] = "running",
	[SP_THREAD_RUNNABLE] = "runnable",
	[SP_THREAD_SLEEP] = "sleep",
	[SP_THREAD_LOCK] = "lock",
	[SP_THREAD_DEAD] = "exited",
};

static const char *const kind_names[STATES__COUNT] = {
	[STATES_RUNNING] = "running",
	[STATES_RUNNABLE] = "runnable",
	[STATES_LOCK] = "lock",
	[STATES_SLEEP] = "sleep",
	[STATES_STOLEN] = "stolen",
};

const char *threadstates__state_name(int state)
{
	return state >= 0 && state < SP_THREAD__COUNT ? state_names[state] : NULL;
}

const char *threadstates__kind_name(enum states_kind kind)
{
	return kind < STATES__COUNT ? kind_names[kind] : "?";
}

enum states_kind threadstates__kind(int state, uint32_t lock_type)
{
	switch (state) {
	case SP_THREAD_RUNNING:
		return STATES_RUNNING;
	case SP_THREAD_RUNNABLE:
		return STATES_RUNNABLE;
	case SP_THREAD_LOCK:
		if (lock_type < SP_TYPE__COUNT && lock_type != SP_TYPE_FUTEX)
			return STATES_LOCK;
		return STATES_SLEEP;
	case SP_THREAD_SLEEP:
		return STATES_SLEEP;
	default:
		return STATES__COUNT;
	}
}

/* The account the kernel's current state runs in; ACC__COUNT: none. */
static int acc_of(uint32_t state, uint32_t lock_type)
{
	switch (state) {
	case SP_THREAD_RUNNING:
		return ACC_RUNNING;
	case SP_THREAD_RUNNABLE:
		return ACC_RUNNABLE;
	case SP_THREAD_LOCK:
		if (lock_type < SP_TYPE__COUNT)
			return ACC_LOCK0 + (int)lock_type;
		return ACC_SLEEP;
	case SP_THREAD_SLEEP:
		return ACC_SLEEP;
	default:
		return ACC__COUNT;
	}
}

int threadstates__new(bool keep_totals, struct threadstates **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->keep_totals = keep_totals;
	return 0;
}

void threadstates__free(struct threadstates *ts)
{
	if (!ts)
		return;
	free(ts->recs);
	free(ts);
}

uint64_t threadstates__now(const struct threadstates *ts)
{
	return ts->latest_ns;
}

static int rec_cmp(const void *pa, const void *pb)
{
	const struct thread_rec *a = pa, *b = pb;
	int c = order__u64(a->tid, b->tid);

	return c ? c : order__u64(a->born_ns, b->born_ns);
}

/* The newest record of tid (the last of its run), or NULL. */
static struct thread_rec *find_rec(struct threadstates *ts, size_t sorted,
				   uint32_t tid)
{
	size_t lo = 0, hi = sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ts->recs[mid].tid <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ts->recs[lo - 1].tid == tid ? &ts->recs[lo - 1] : NULL;
}

/* A sample's totals at now_ns. */
static void sample_totals(const struct sp_thread *t, uint64_t now_ns,
			  uint64_t acc[ACC__COUNT])
{
	int open = acc_of(t->state, t->lock_type);

	acc[ACC_RUNNING] = t->running_ns;
	acc[ACC_RUNNABLE] = t->runnable_ns;
	acc[ACC_SLEEP] = t->sleep_ns;
	acc[ACC_STOLEN] = t->stolen_ns;
	for (int i = 0; i < SP_TYPE__COUNT; i++)
		acc[ACC_LOCK0 + i] = t->lock_ns[i];
	if (open < ACC__COUNT && now_ns > t->since_ns)
		acc[open] += now_ns - t->since_ns;
}

static void rec_fill(struct thread_rec *r, const struct thread_sample *s,
		     uint64_t now_ns)
{
	sample_totals(&s->t, now_ns, r->latest);
	r->state = s->t.state;
	r->lock_type = s->t.lock_type;
	r->exit_ns = s->t.exit_ns;
	r->gone = s->t.state == SP_THREAD_DEAD;
	memcpy(r->comm, s->t.comm, sizeof(r->comm));
	r->seen = true;
}

/*
 * A record can never be reported again once it died before the mark (and
 * the origin, when totals are kept).
 */
static void threadstates__prune(struct threadstates *ts)
{
	size_t kept = 0;

	for (size_t i = 0; i < ts->count; i++) {
		const struct thread_rec *r = &ts->recs[i];

		if (r->gone && r->exit_ns <= ts->mark_ns &&
		    (!ts->keep_totals || r->exit_ns <= ts->origin_ns))
			continue;
		ts->recs[kept++] = *r;
	}
	ts->count = kept;
}

int threadstates__update(struct threadstates *ts,
			 const struct thread_sample *samples, size_t n,
			 uint64_t now_ns)
{
	size_t sorted = ts->count;
	bool first = !ts->started;
	bool appended = false;

	for (size_t i = 0; i < ts->count; i++)
		ts->recs[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		const struct thread_sample *s = &samples[i];
		struct thread_rec *r;

		if (s->t.state == SP_THREAD_NEW || s->t.state >= SP_THREAD__COUNT)
			continue;	/* not started: nothing to count yet */
		r = find_rec(ts, sorted, s->tid);
		if (r && r->born_ns != s->t.born_ns) {
			if (!r->gone) {
				/* Its TID was reused before its end was read. */
				r->gone = true;
				r->exit_ns = ts->latest_ns;
			}
			r = NULL;
		}
		if (!r) {
			int err = array__grow(&ts->recs, &ts->cap, ts->count + 1,
					      sizeof(*ts->recs));

			if (err)
				return err;
			r = &ts->recs[ts->count++];
			memset(r, 0, sizeof(*r));
			r->tid = s->tid;
			r->born_ns = s->t.born_ns;
			appended = true;
		}
		rec_fill(r, s, now_ns);
	}
	/* Not in this read: still in the state it was in. */
	for (size_t i = 0; i < ts->count; i++) {
		struct thread_rec *r = &ts->recs[i];
		int open = acc_of(r->state, r->lock_type);

		if (r->seen || r->gone || open >= ACC__COUNT ||
		    now_ns <= ts->latest_ns)
			continue;
		r->latest[open] += now_ns - ts->latest_ns;
	}
	if (appended)
		qsort(ts->recs, ts->count, sizeof(*ts->recs), rec_cmp);
	ts->latest_ns = now_ns;
	ts->started = true;
	if (first) {
		threadstates__reset(ts);
		return 0;
	}
	threadstates__prune(ts);
	return 0;
}

void threadstates__mark(struct threadstates *ts)
{
	for (size_t i = 0; i < ts->count; i++)
		memcpy(ts->recs[i].mark, ts->recs[i].latest,
		       sizeof(ts->recs[i].mark));
	ts->mark_ns = ts->latest_ns;
}

void threadstates__reset(struct threadstates *ts)
{
	for (size_t i = 0; i < ts->count; i++)
		memcpy(ts->recs[i].origin, ts->recs[i].latest,
		       sizeof(ts->recs[i].origin));
	ts->origin_ns = ts->latest_ns;
	threadstates__mark(ts);
}

/*
 * The window's time per account: latest less base, made to add up to
 * alive_ns.  Below zero is a read's skew being corrected; it is settled
 * on the current account first, then on the largest.
 */
static void settle(const uint64_t latest[ACC__COUNT],
		   const uint64_t base[ACC__COUNT], int current,
		   uint64_t alive_ns, uint64_t out[ACC__COUNT])
{
	uint64_t sum = 0;

	for (int i = 0; i < ACC__COUNT; i++) {
		out[i] = latest[i] > base[i] ? latest[i] - base[i] : 0;
		sum += out[i];
	}
	if (current >= ACC__COUNT)
		current = ACC_RUNNING;
	if (sum < alive_ns) {
		out[current] += alive_ns - sum;
		return;
	}
	while (sum > alive_ns) {
		int from = current;
		uint64_t take;

		if (!out[from]) {
			from = 0;
			for (int i = 1; i < ACC__COUNT; i++)
				if (out[i] > out[from])
					from = i;
		}
		take = sum - alive_ns < out[from] ? sum - alive_ns : out[from];
		out[from] -= take;
		sum -= take;
	}
}

static void row_add(struct states_row *row, const uint64_t acc[ACC__COUNT])
{
	row->ns[STATES_RUNNING] += acc[ACC_RUNNING];
	row->ns[STATES_RUNNABLE] += acc[ACC_RUNNABLE];
	row->ns[STATES_SLEEP] += acc[ACC_SLEEP];
	row->ns[STATES_STOLEN] += acc[ACC_STOLEN];
	for (int i = 0; i < SP_TYPE__COUNT; i++) {
		uint64_t ns = acc[ACC_LOCK0 + i];

		row->type_ns[i] += ns;
		row->ns[i == SP_TYPE_FUTEX ? STATES_SLEEP : STATES_LOCK] += ns;
	}
}

static int row_cmp_name(const void *pa, const void *pb)
{
	const struct states_row *a = pa, *b = pb;
	int c = strcmp(a->comm, b->comm);

	return c ? c : order__u64((uint64_t)a->tid, (uint64_t)b->tid);
}

/* Rows sorted by name merged into one per name. */
static void group_rows(struct states_report *rep)
{
	size_t out = 0;

	qsort(rep->rows, rep->count, sizeof(*rep->rows), row_cmp_name);
	for (size_t i = 0; i < rep->count; i++) {
		struct states_row *r = &rep->rows[i];
		struct states_row *g = out ? &rep->rows[out - 1] : NULL;

		if (!g || strcmp(g->comm, r->comm)) {
			g = &rep->rows[out++];
			*g = *r;
			g->tid = STATES_NO_TID;
			g->born_ns = g->exit_ns = 0;
			g->state = -1;
			continue;
		}
		for (int k = 0; k < STATES__COUNT; k++)
			g->ns[k] += r->ns[k];
		for (int k = 0; k < SP_TYPE__COUNT; k++)
			g->type_ns[k] += r->type_ns[k];
		g->alive_ns += r->alive_ns;
		g->threads += r->threads;
	}
	rep->count = out;
}

int threadstates__report(const struct threadstates *ts, enum states_span span,
			 bool group, struct states_report *out)
{
	uint64_t start = span == STATES_SINCE_ORIGIN ? ts->origin_ns : ts->mark_ns;
	uint64_t end = ts->latest_ns;

	*out = (struct states_report){
		.start_ns = start,
		.end_ns = end,
		.grouped = group,
	};
	if (!ts->count)
		return 0;
	out->rows = calloc(ts->count, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	for (size_t i = 0; i < ts->count; i++) {
		const struct thread_rec *r = &ts->recs[i];
		const uint64_t *base = span == STATES_SINCE_ORIGIN ? r->origin
								    : r->mark;
		uint64_t from = r->born_ns > start ? r->born_ns : start;
		uint64_t to = r->exit_ns && r->exit_ns < end ? r->exit_ns : end;
		struct states_row *row;
		uint64_t acc[ACC__COUNT];

		if (to <= from)
			continue;	/* not alive in the window */
		row = &out->rows[out->count++];
		row->tid = r->tid;
		memcpy(row->comm, r->comm, STATES_COMM_LEN);
		row->comm[STATES_COMM_LEN] = '\0';
		row->threads = 1;
		row->alive_ns = to - from;
		row->born_ns = r->born_ns > start ? r->born_ns : 0;
		row->exit_ns = r->exit_ns && r->exit_ns <= end ? r->exit_ns : 0;
		row->state = (int)r->state;
		settle(r->latest, base,
		       r->state == SP_THREAD_DEAD ? ACC_RUNNING
						  : acc_of(r->state, r->lock_type),
		       row->alive_ns, acc);
		row_add(row, acc);
	}
	if (group)
		group_rows(out);
	return 0;
}

void threadstates__free_report(struct states_report *rep)
{
	free(rep->rows);
	rep->rows = NULL;
	rep->count = 0;
}
