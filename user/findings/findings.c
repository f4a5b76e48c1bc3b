// SPDX-License-Identifier: GPL-2.0
/*
 * Findings.  A lock's impact is the time its waits took from threads
 * that would otherwise have run: each wait weighted by its thread's busy
 * share (what it ran of the time it was neither waiting for a lock nor
 * for a CPU), over the program's thread time in the window.  This is
 * wPerf's question (which waits does progress depend on) asked of what
 * syncprof already has: a thread that sleeps between rounds (a
 * background flusher, a timer loop) gives its waits little weight, a
 * worker that computes between its lock calls gives them all; idle
 * waits (class event) are never a lock finding.  Rejected: total wait
 * (the background threads' lock tops it), and the knots of a wait-for
 * graph alone (every saturated lock is a knot of its own threads).
 *
 * Each lock (pid, type, object) is then judged once per category:
 * long-hold when one release site's holds caused most of its charged
 * waits (the site to change is that release: the holder's unlock);
 * hot-stripe when one object of a kind (objects waited on at one call
 * site) takes most of the kind's waits; futile-wakeups when its waiters
 * are often woken for nothing; holder-preempted and blocking-under-lock
 * when --why says its holders waited for a CPU or slept; wrong-primitive
 * in full mode (an rwlock never read, a spinlock spun long).  A finding
 * that says why the waits were long (a holders' state, lost races, the
 * primitive) replaces the lock's long-hold, which would name the same
 * site with less to say.  Everything is sorted copies and linear walks,
 * O(n log n) in the rows of a report, but the holders' and primitives'
 * lookups, linear in the (few) locks judged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "findings.h"
#include "sortorder.h"
#include "syncprof.h"

const char *findings__category_name(enum findings_category c)
{
	static const char *const names[FINDING__COUNT] = {
		[FINDING_LONG_HOLD] = "long-hold",
		[FINDING_HOT_STRIPE] = "hot-stripe",
		[FINDING_HOLDER_PREEMPTED] = "holder-preempted",
		[FINDING_BLOCKING_UNDER_LOCK] = "blocking-under-lock",
		[FINDING_FUTILE_WAKEUPS] = "futile-wakeups",
		[FINDING_WRONG_PRIMITIVE] = "wrong-primitive",
	};

	return c < FINDING__COUNT ? names[c] : "unknown";
}

/* One lock's waits, summed. */
struct lock_acc {
	uint32_t pid, type;
	uint64_t object;
	uint64_t wait_ns, count, futile;
	double weighted_ns;	/* waits times their threads' busy share */
	uint64_t futile_site;	/* the call site with the most futile */
	uint64_t futile_site_n;
	uint64_t top_site;	/* the call site with the most wait */
	uint64_t top_site_ns;
};

static int wait_kind_cmp(const void *pa, const void *pb)
{
	const struct findings_wait *a = pa, *b = pb;

	return order__u64(a->pid, b->pid) ?: order__u64(a->type, b->type) ?:
	       order__u64(a->callsite, b->callsite) ?:
	       order__u64(a->object, b->object);
}

static int release_cmp(const void *pa, const void *pb)
{
	const struct findings_release *a = pa, *b = pb;

	return order__u64(a->pid, b->pid) ?: order__u64(a->type, b->type) ?:
	       order__u64(a->object, b->object) ?:
	       order__u64(a->site, b->site);
}

/* Waits and releases by (type, object, pid): shared_locks's walk. */
static int wait_object_cmp(const void *pa, const void *pb)
{
	const struct findings_wait *a = pa, *b = pb;

	return order__u64(a->type, b->type) ?:
	       order__u64(a->object, b->object) ?: order__u64(a->pid, b->pid);
}

static int release_object_cmp(const void *pa, const void *pb)
{
	const struct findings_release *a = pa, *b = pb;

	return order__u64(a->type, b->type) ?:
	       order__u64(a->object, b->object) ?: order__u64(a->pid, b->pid);
}

/*
 * A lock in shared memory that other processes release (PostgreSQL's
 * backends wake each other's semaphores): its waits are keyed by the
 * waiters' processes, its releases by the releasers', the object by the
 * identity they share.  One lock across them (pid 0) when a release of
 * it came from a process none of its waiters is in: a futex wake from
 * another process reaches only a shared word.  Two processes' private
 * locks at one address (a fork's copies) release each its own: kept
 * apart.  Both arrays are left sorted by (type, object, pid).
 */
static void shared_locks(struct findings_wait *w, size_t n,
			 struct findings_release *rel, size_t n_rel)
{
	size_t i = 0, r = 0;

	qsort(w, n, sizeof(*w), wait_object_cmp);
	qsort(rel, n_rel, sizeof(*rel), release_object_cmp);
	while (i < n) {
		size_t end = i, rend;
		bool shared = false;

		while (end < n && w[end].type == w[i].type &&
		       w[end].object == w[i].object)
			end++;
		while (r < n_rel && (rel[r].type < w[i].type ||
				     (rel[r].type == w[i].type &&
				      rel[r].object < w[i].object)))
			r++;
		for (rend = r; rend < n_rel && rel[rend].type == w[i].type &&
		     rel[rend].object == w[i].object; rend++) {
			bool waiter = false;

			for (size_t k = i; k < end && !waiter; k++)
				waiter = w[k].pid == rel[rend].pid;
			shared |= !waiter;
		}
		for (size_t k = i; shared && k < end; k++)
			w[k].pid = 0;
		for (size_t k = r; shared && k < rend; k++)
			rel[k].pid = 0;
		i = end;
		r = rend;
	}
}

struct builder {
	const struct findings_input *in;
	double thread_ns;
	struct finding *out;
	size_t n, cap;
	/* Objects a hot-stripe finding is about: no long-hold for them. */
	struct finding *stripes;
	size_t n_stripes, stripes_cap;
};

static int builder__add(struct builder *b, const struct finding *f)
{
	if (array__grow(&b->out, &b->cap, b->n + 1, sizeof(*b->out)))
		return -ENOMEM;
	b->out[b->n++] = *f;
	return 0;
}

static double pct(const struct builder *b, double ns)
{
	double p = b->thread_ns > 0 ? 100.0 * ns / b->thread_ns : 0;

	return p > 100 ? 100 : p;
}

/* Seconds, for evidence: three significant places are enough. */
static double secs(uint64_t ns)
{
	return (double)ns * 1e-9;
}

static bool striped(const struct builder *b, const struct lock_acc *l)
{
	for (size_t i = 0; i < b->n_stripes; i++)
		if (b->stripes[i].object == l->object &&
		    b->stripes[i].pid == l->pid && b->stripes[i].type == l->type)
			return true;
	return false;
}

/*
 * A finding about lock l at site (a release site: the holder's unlock),
 * about all of the lock's waits until the category says which part.
 */
static struct finding lock_finding(enum findings_category c,
				   const struct lock_acc *l, uint64_t site,
				   bool release)
{
	return (struct finding){
		.category = c,
		.type = l->type,
		.object = l->object,
		.pid = l->pid,
		.n_objects = 1,
		.site = site,
		.site_release = release,
		.wait_ns = l->wait_ns,
		.lock_wait_ns = l->wait_ns,
	};
}

/* The release site whose holds caused most of a lock's charged waits. */
struct top_release {
	uint64_t site;		/* 0: none seen */
	uint64_t ns, count, max_ns;
	uint64_t total;		/* all the lock's charges */
};

/* The lock's releases (sorted, from *at on), summed by site. */
static void top_release(const struct lock_acc *l,
			const struct findings_release *rel, size_t n_rel,
			size_t *at, struct top_release *t)
{
	uint64_t site_ns = 0, site_count = 0, site_max = 0;
	size_t i = *at;

	*t = (struct top_release){ 0 };
	/* Skip releases of locks before this one. */
	while (i < n_rel && (rel[i].pid < l->pid ||
			     (rel[i].pid == l->pid &&
			      (rel[i].type < l->type ||
			       (rel[i].type == l->type &&
				rel[i].object < l->object)))))
		i++;
	for (; i < n_rel && rel[i].pid == l->pid && rel[i].type == l->type &&
	       rel[i].object == l->object; i++) {
		const struct findings_release *r = &rel[i];

		t->total += r->wait_ns;
		site_ns += r->wait_ns;
		site_count += r->count;
		if (r->max_ns > site_max)
			site_max = r->max_ns;
		if (i + 1 < n_rel && rel[i + 1].pid == r->pid &&
		    rel[i + 1].type == r->type &&
		    rel[i + 1].object == r->object && rel[i + 1].site == r->site)
			continue;
		if (r->site && site_ns > t->ns) {
			t->ns = site_ns;
			t->site = r->site;
			t->count = site_count;
			t->max_ns = site_max;
		}
		site_ns = site_count = site_max = 0;
	}
	*at = i;
}

/* Whether one site's holds caused most of the charged waits. */
static bool top_holds(const struct top_release *t)
{
	return t->total && t->site &&
	       (double)t->ns >= FINDINGS_HOLD_SHARE * (double)t->total;
}

/* long-hold: the top release site, when its holds caused most. */
static int long_hold(struct builder *b, const struct lock_acc *l,
		     const struct top_release *t)
{
	uint64_t best_ns = t->ns, best_site = t->site, best_count = t->count;
	uint64_t best_max = t->max_ns, total = t->total;

	if (!top_holds(t))
		return 0;

	struct finding f = lock_finding(FINDING_LONG_HOLD, l, best_site, true);

	f.wait_ns = best_ns;
	f.lock_wait_ns = total;
	f.impact_pct = pct(b, l->weighted_ns * (double)best_ns / (double)total);
	snprintf(f.evidence, sizeof(f.evidence),
		 "holds released here caused %.3f s of the %.3f s waited on "
		 "the lock (%.0f%%), %" PRIu64 " waits woken; the longest "
		 "part of one wait charged to them %.1f ms",
		 secs(best_ns), secs(total),
		 100.0 * (double)best_ns / (double)total, best_count,
		 (double)best_max * 1e-6);
	snprintf(f.fix, sizeof(f.fix),
		 "shorten the critical section that ends here: move the work "
		 "that does not need the lock out of it, or walk a copy");
	return builder__add(b, &f);
}

/*
 * Full mode with --hold, no releases charged: the acquire site whose
 * holds are most of the lock's hold time (waits sorted by lock, this
 * lock's run [from, to)).
 */
static int long_hold_by_holds(struct builder *b, const struct lock_acc *l,
			      const struct findings_wait *w, size_t from,
			      size_t to)
{
	uint64_t total = 0, best_ns = 0, best_site = 0, best_count = 0;
	uint64_t best_max = 0, site_ns = 0, site_count = 0, site_max = 0;

	for (size_t i = from; i < to; i++) {
		total += w[i].hold_ns;
		site_ns += w[i].hold_ns;
		site_count += w[i].hold_count;
		if (w[i].hold_max_ns > site_max)
			site_max = w[i].hold_max_ns;
		if (i + 1 < to && w[i + 1].callsite == w[i].callsite)
			continue;
		if (w[i].callsite && site_ns > best_ns) {
			best_ns = site_ns;
			best_site = w[i].callsite;
			best_count = site_count;
			best_max = site_max;
		}
		site_ns = site_count = site_max = 0;
	}
	if (!total || !best_site ||
	    (double)best_ns < FINDINGS_HOLD_SHARE * (double)total)
		return 0;

	struct finding f = lock_finding(FINDING_LONG_HOLD, l, best_site, false);

	f.impact_pct = pct(b, l->weighted_ns * (double)best_ns / (double)total);
	snprintf(f.evidence, sizeof(f.evidence),
		 "%" PRIu64 " holds taken here: %.3f s of the lock's %.3f s "
		 "held (%.0f%%), the longest %.1f ms; %.3f s waited on it",
		 best_count, secs(best_ns), secs(total),
		 100.0 * (double)best_ns / (double)total,
		 (double)best_max * 1e-6, secs(l->wait_ns));
	snprintf(f.fix, sizeof(f.fix),
		 "shorten the critical section taken here: move the work that "
		 "does not need the lock out of it, or walk a copy");
	return builder__add(b, &f);
}

/*
 * futile-wakeups; *explains: most wakeups were futile, which is why the
 * waits were long (the waiters lose the race for the lock).
 */
static int futile(struct builder *b, const struct lock_acc *l,
		  bool may_explain, bool *explains)
{
	uint64_t wakeups = l->count + l->futile;
	double share;

	*explains = false;
	if (!l->count || l->futile < 10)
		return 0;
	share = (double)l->futile / (double)wakeups;
	if (share < FINDINGS_FUTILE_SHARE)
		return 0;
	*explains = may_explain && share >= FINDINGS_FUTILE_EXPLAINS;

	struct finding f = lock_finding(FINDING_FUTILE_WAKEUPS, l,
					l->futile_site, false);

	/* What the futile wakeups are of the lock's: their share; all
	 * of it when they explain the waits. */
	f.impact_pct = pct(b, l->weighted_ns * (*explains ? 1.0 : share));
	snprintf(f.evidence, sizeof(f.evidence),
		 "%" PRIu64 " of its %" PRIu64 " wakeups (%.0f%%) found the "
		 "lock taken and waited again (%" PRIu64 " waits); %.3f s "
		 "waited on it",
		 l->futile, wakeups, 100.0 * share, l->count,
		 secs(l->wait_ns));
	snprintf(f.fix, sizeof(f.fix),
		 "wake one waiter where one can go on (signal, not broadcast), "
		 "and wake it after the state it waits for has changed");
	return builder__add(b, &f);
}

/*
 * hot-stripe: objects of one type waited on at one call site (a
 * coalesced row); w sorted by (pid, type, call site, object).
 */
static int hot_stripes(struct builder *b, const struct findings_wait *w,
		       size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t end = i, objects = 0;
		uint64_t total = 0, best_ns = 0, best_obj = 0, obj_ns = 0;
		double best_weighted = 0, obj_weighted = 0;

		while (end < n && w[end].pid == w[i].pid &&
		       w[end].type == w[i].type &&
		       w[end].callsite == w[i].callsite)
			end++;
		for (size_t k = i; k < end; k++) {
			total += w[k].wait_ns;
			obj_ns += w[k].wait_ns;
			obj_weighted += (double)w[k].wait_ns *
					w[k].busy;
			if (k + 1 < end && w[k + 1].object == w[k].object)
				continue;
			objects++;
			if (obj_ns > best_ns) {
				best_ns = obj_ns;
				best_obj = w[k].object;
				best_weighted = obj_weighted;
			}
			obj_ns = 0;
			obj_weighted = 0;
		}
		if (objects >= FINDINGS_STRIPE_OBJECTS && total &&
		    (double)best_ns >= FINDINGS_STRIPE_SHARE * (double)total &&
		    (double)best_ns * (double)objects >=
		    FINDINGS_STRIPE_FAIR * (double)total &&
		    pct(b, best_weighted) >= FINDINGS_MIN_IMPACT) {
			struct finding f = {
				.category = FINDING_HOT_STRIPE,
				.type = w[i].type,
				.object = best_obj,
				.pid = w[i].pid,
				.n_objects = (uint32_t)objects,
				.site = w[i].callsite,
				.wait_ns = best_ns,
				.lock_wait_ns = total,
				.impact_pct = pct(b, best_weighted),
			};
			int err;

			snprintf(f.evidence, sizeof(f.evidence),
				 "this one of %zu locks waited on here had %.3f s "
				 "of their %.3f s waited (%.0f%%; an even "
				 "spread gives each %.0f%%)",
				 objects, secs(best_ns), secs(total),
				 100.0 * (double)best_ns / (double)total,
				 100.0 / (double)objects);
			snprintf(f.fix, sizeof(f.fix),
				 "spread the keys over the locks (a better hash, "
				 "more stripes) or split what this lock guards");
			err = builder__add(b, &f);
			if (!err && array__grow(&b->stripes, &b->stripes_cap,
						b->n_stripes + 1,
						sizeof(*b->stripes)))
				err = -ENOMEM;
			if (err)
				return err;
			b->stripes[b->n_stripes++] = f;
		}
		i = end;
	}
	return 0;
}

/*
 * --why: holders that waited for a CPU (holder-preempted) or slept
 * (blocking-under-lock) for at least FINDINGS_HOLDER_SHARE of the
 * lock's waits.  *explained: the state's share, so that long-hold can
 * step back for the finding that says why the hold was long.
 */
static int holder_states(struct builder *b, const struct lock_acc *l,
			 const struct top_release *t, double *explained)
{
	uint64_t total = 0, state_ns[2] = { 0 }, site[2] = { 0 };
	uint64_t site_ns[2] = { 0 };
	static const enum findings_category cat[2] = {
		FINDING_HOLDER_PREEMPTED, FINDING_BLOCKING_UNDER_LOCK,
	};
	int err = 0;

	*explained = 0;
	for (size_t i = 0; i < b->in->n_holders; i++) {
		const struct findings_holder *h = &b->in->holders[i];

		if ((l->pid && h->pid != l->pid) || h->type != l->type ||
		    h->object != l->object)
			continue;
		total += h->total_ns;
		state_ns[0] += h->runnable_ns;
		state_ns[1] += h->sleep_ns;
		if (h->runnable_site_ns > site_ns[0]) {
			site_ns[0] = h->runnable_site_ns;
			site[0] = h->runnable_site;
		}
		if (h->sleep_site_ns > site_ns[1]) {
			site_ns[1] = h->sleep_site_ns;
			site[1] = h->sleep_site;
		}
	}
	for (int k = 0; !err && k < 2 && total; k++) {
		double share = (double)state_ns[k] / (double)total;

		/*
		 * The site: the holds that caused most of the waits (the
		 * chains' roots are the releases that woke the waiters: in
		 * a queue behind a sleeping holder, the short holders').
		 */
		if (top_holds(t)) {
			site[k] = t->site;
			site_ns[k] = t->ns;
		}
		if (share < FINDINGS_HOLDER_SHARE || !site[k])
			continue;
		if (share > *explained)
			*explained = share;

		struct finding f = lock_finding(cat[k], l, site[k], true);

		f.wait_ns = state_ns[k];
		f.lock_wait_ns = total;
		/* What a fix of the holds would give: all of the lock's
		 * waits they caused. */
		f.impact_pct = pct(b, l->weighted_ns);
		if (k == 0) {
			snprintf(f.evidence, sizeof(f.evidence),
				 "its holders waited for a CPU during %.3f s of "
				 "the %.3f s waited on it (%.0f%%); holds "
				 "released here caused %.3f s",
				 secs(state_ns[k]), secs(total), 100.0 * share,
				 secs(site_ns[k]));
			snprintf(f.fix, sizeof(f.fix),
				 "run fewer threads than CPUs that take this "
				 "lock (a pool sized to the CPUs), or keep the "
				 "holder from being preempted");
		} else {
			snprintf(f.evidence, sizeof(f.evidence),
				 "its holders slept (I/O, timers, other system "
				 "calls) during %.3f s of the %.3f s waited on "
				 "it (%.0f%%); holds released here caused %.3f s",
				 secs(state_ns[k]), secs(total), 100.0 * share,
				 secs(site_ns[k]));
			snprintf(f.fix, sizeof(f.fix),
				 "do the blocking call before taking the lock or "
				 "after letting it go, and hold it only to "
				 "publish the result");
		}
		err = builder__add(b, &f);
	}
	return err;
}

/* Whether the object was ever waited on as type (w sorted by lock). */
static bool waited_as(const struct findings_wait *w, size_t n, uint32_t pid,
		      uint64_t object, uint32_t type)
{
	for (size_t i = 0; i < n; i++)
		if (w[i].pid == pid && w[i].object == object &&
		    w[i].type == type && w[i].count)
			return true;
	return false;
}

/*
 * wrong-primitive (full mode: every acquisition counted): an rwlock
 * only ever write-locked, a spinlock spun long.  *explains: the waits
 * come from the primitive, long-hold steps back.
 */
static int wrong_primitive(struct builder *b, const struct lock_acc *l,
			   const struct findings_wait *w, size_t n,
			   bool *explains)
{
	struct finding f = lock_finding(FINDING_WRONG_PRIMITIVE, l,
					l->top_site, false);

	f.impact_pct = pct(b, l->weighted_ns);

	*explains = false;
	if (!b->in->every_call || !l->count || !l->top_site)
		return 0;
	if (l->type == SP_TYPE_RWLOCK_W && l->count >= FINDINGS_RW_CALLS &&
	    !waited_as(w, n, l->pid, l->object, SP_TYPE_RWLOCK_R)) {
		snprintf(f.evidence, sizeof(f.evidence),
			 "%" PRIu64 " write locks and no read lock; %.3f s "
			 "waited on it", l->count, secs(l->wait_ns));
		snprintf(f.fix, sizeof(f.fix),
			 "use a mutex: an rwlock nobody reads costs more to "
			 "take and shares nothing");
	} else if (l->type == SP_TYPE_SPINLOCK &&
		   l->wait_ns / l->count >= FINDINGS_SPIN_MEAN_NS) {
		snprintf(f.evidence, sizeof(f.evidence),
			 "%" PRIu64 " acquisitions spun %.3f s in all, %.1f us "
			 "each on average: the CPU burnt waiting",
			 l->count, secs(l->wait_ns),
			 (double)(l->wait_ns / l->count) * 1e-3);
		snprintf(f.fix, sizeof(f.fix),
			 "use a mutex, which sleeps: its holders hold it too "
			 "long to spin for");
	} else {
		return 0;
	}
	*explains = true;
	return builder__add(b, &f);
}

static int finding_site_cmp(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	return order__u64(a->category, b->category) ?:
	       order__u64(a->type, b->type) ?: order__u64(a->site, b->site) ?:
	       order__u64(a->pid, b->pid) ?:
	       (a->impact_pct > b->impact_pct ? -1 :
		a->impact_pct < b->impact_pct);
}

/*
 * Locks of one type whose findings have the same category and site:
 * one change fixes them all, so they are one finding (the largest's
 * object, evidence and fix; their impacts and waits summed).  A wait
 * queue with a semaphore per waiter (PostgreSQL's LWLocks: each backend
 * sleeps on its own) is a lock per waiter to syncprof, each with a
 * share of the real lock's waits and the same release site: without
 * this, as many findings as backends, each below its due.  Hot-stripe
 * findings are kept apart (one per kind already).  Returns the count.
 */
static size_t merge_alike(struct finding *f, size_t n)
{
	size_t out = 0;

	qsort(f, n, sizeof(*f), finding_site_cmp);
	for (size_t i = 0; i < n;) {
		struct finding m = f[i];
		size_t end = i + 1;
		uint64_t own_wait = m.wait_ns, own_lock = m.lock_wait_ns;

		while (end < n && m.category != FINDING_HOT_STRIPE &&
		       f[end].category == m.category && f[end].type == m.type &&
		       f[end].site == m.site && f[end].pid == m.pid) {
			m.impact_pct += f[end].impact_pct;
			m.wait_ns += f[end].wait_ns;
			m.lock_wait_ns += f[end].lock_wait_ns;
			m.n_objects += f[end].n_objects;
			end++;
		}
		if (m.impact_pct > 100)
			m.impact_pct = 100;
		if (end - i > 1) {
			char one[sizeof(m.evidence)];

			snprintf(one, sizeof(one), "%s", m.evidence);
			snprintf(m.evidence, sizeof(m.evidence),
				 "%u locks alike (a semaphore per waiter: one "
				 "wait queue), together %.3f s of the %.3f s "
				 "waited on them; the largest (%.3f s of %.3f "
				 "s): %.320s", m.n_objects,
				 secs(m.wait_ns), secs(m.lock_wait_ns),
				 secs(own_wait), secs(own_lock), one);
		}
		f[out++] = m;
		i = end;
	}
	return out;
}

static int finding_cmp(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	if (a->impact_pct != b->impact_pct)
		return a->impact_pct > b->impact_pct ? -1 : 1;
	return order__u64(b->wait_ns, a->wait_ns) ?:
	       order__u64(a->object, b->object) ?:
	       order__u64(a->category, b->category);
}

/* The program's thread time: threads alive, or those seen, times the
 * window. */
static double thread_time(const struct findings_input *in,
			  const struct findings_wait *sorted, size_t n)
{
	size_t threads = in->n_threads_alive;

	if (!threads) {
		uint64_t *tids = calloc(n + in->n_threads + 1, sizeof(*tids));
		size_t k = 0;

		if (!tids)
			return 0;
		for (size_t i = 0; i < n; i++)
			tids[k++] = (uint64_t)sorted[i].pid << 32 | sorted[i].tid;
		for (size_t i = 0; i < in->n_threads; i++)
			tids[k++] = (uint64_t)in->threads[i].pid << 32 |
				    in->threads[i].tid;
		qsort(tids, k, sizeof(*tids), order__u64_at);
		for (size_t i = 0; i < k; i++)
			threads += !i || tids[i] != tids[i - 1];
		free(tids);
	}
	return (double)threads * (double)in->elapsed_ns;
}

/*
 * What the impacts are shares of: the time the threads ran, plus what
 * their lock waits took from them (weighted); without run times, the
 * threads' time in the window.
 */
static double work_time(const struct findings_input *in,
			const struct findings_wait *w, size_t n)
{
	double run = 0, lost = 0;

	for (size_t i = 0; i < in->n_threads; i++)
		run += (double)in->threads[i].run_ns;
	if (run <= 0)
		return thread_time(in, w, n);
	for (size_t i = 0; i < n; i++)
		lost += (double)w[i].wait_ns * w[i].busy;
	return run + lost;
}

int findings__build(const struct findings_input *in, struct finding **out,
		    size_t *n_out)
{
	struct builder b = { .in = in };
	struct findings_wait *w = NULL;
	struct findings_release *rel = NULL;
	size_t n = 0, rel_at = 0;
	int err = 0;

	*out = NULL;
	*n_out = 0;
	w = malloc((in->n_waits + 1) * sizeof(*w));
	rel = malloc((in->n_releases + 1) * sizeof(*rel));
	if (!w || !rel) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < in->n_waits; i++)
		if (!in->waits[i].event)	/* idle waits: no lock finding */
			w[n++] = in->waits[i];
	if (in->n_releases)
		memcpy(rel, in->releases, in->n_releases * sizeof(*rel));
	shared_locks(w, n, rel, in->n_releases);
	qsort(rel, in->n_releases, sizeof(*rel), release_cmp);
	err = findings__weigh(in, w, n);
	if (err)
		goto out;
	b.thread_ns = work_time(in, w, n);
	if (!n || b.thread_ns <= 0)
		goto out;

	qsort(w, n, sizeof(*w), wait_kind_cmp);
	err = hot_stripes(&b, w, n);
	qsort(w, n, sizeof(*w), findings__wait_cmp);
	for (size_t i = 0; !err && i < n;) {
		struct lock_acc l = { .pid = w[i].pid, .type = w[i].type,
				      .object = w[i].object };
		uint64_t hold_ns = 0, site_futile = 0, site_ns = 0;
		size_t end = i;

		while (end < n && w[end].pid == l.pid && w[end].type == l.type &&
		       w[end].object == l.object) {
			const struct findings_wait *e = &w[end];

			l.wait_ns += e->wait_ns;
			l.count += e->count;
			l.futile += e->futile;
			l.weighted_ns += (double)e->wait_ns *
					 e->busy;
			hold_ns += e->hold_ns;
			site_futile += e->futile;
			site_ns += e->wait_ns;
			if (end + 1 == n || w[end + 1].callsite != e->callsite ||
			    w[end + 1].object != e->object) {
				if (site_futile > l.futile_site_n) {
					l.futile_site_n = site_futile;
					l.futile_site = e->callsite;
				}
				if (site_ns > l.top_site_ns) {
					l.top_site_ns = site_ns;
					l.top_site = e->callsite;
				}
				site_futile = site_ns = 0;
			}
			end++;
		}
		if (pct(&b, l.weighted_ns) >= FINDINGS_JUDGE_FLOOR) {
			size_t before = b.n;
			double explained = 0;
			struct top_release t;

			top_release(&l, rel, in->n_releases, &rel_at, &t);
			bool races = false, wrong = false;

			err = wrong_primitive(&b, &l, w, n, &wrong);
			if (!err)
				err = holder_states(&b, &l, &t, &explained);
			if (!err)
				err = futile(&b, &l, !explained, &races);
			/*
			 * A holders' state or lost races that explain the
			 * waits replace long-hold.
			 */
			bool holds = !err && !striped(&b, &l) && !explained &&
				     !races && !wrong;

			before = b.n;
			if (holds)
				err = long_hold(&b, &l, &t);
			if (!err && holds && b.n == before && hold_ns)
				err = long_hold_by_holds(&b, &l, w, i, end);
		}
		i = end;
	}
	if (!err && b.n) {
		size_t kept = 0;

		b.n = merge_alike(b.out, b.n);
		for (size_t i = 0; i < b.n; i++)
			if (b.out[i].impact_pct >= FINDINGS_MIN_IMPACT)
				b.out[kept++] = b.out[i];
		b.n = kept;
	}
	if (!err && b.n) {
		qsort(b.out, b.n, sizeof(*b.out), finding_cmp);
		*out = b.out;
		*n_out = b.n < FINDINGS_MAX ? b.n : FINDINGS_MAX;
		b.out = NULL;
	}
out:
	free(b.out);
	free(b.stripes);
	free(w);
	free(rel);
	return err;
}
