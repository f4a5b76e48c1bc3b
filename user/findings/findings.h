/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What to fix first: from one report's waits (per object, call site and
 * thread), the charges of its releases and how much each thread ran,
 * a short list of findings ranked by what a fix would give the program.
 * Pure: no probes, no names (the renderers name objects and sites).
 * The method and its thresholds are in docs/findings.md.
 */
#ifndef SYNCPROF_FINDINGS_H
#define SYNCPROF_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum findings_category {
	FINDING_LONG_HOLD = 0,
	FINDING_HOT_STRIPE,
	FINDING_HOLDER_PREEMPTED,
	FINDING_BLOCKING_UNDER_LOCK,
	FINDING_FUTILE_WAKEUPS,
	FINDING_WRONG_PRIMITIVE,
	FINDING__COUNT,
};

/* Thresholds (docs/findings.md). */
#define FINDINGS_MAX		5	/* findings per report */
#define FINDINGS_MIN_IMPACT	5.0	/* % of the threads' time */
#define FINDINGS_JUDGE_FLOOR	0.25	/* %: locks judged, their alike
					   findings summed (at most 400) */
#define FINDINGS_HOLD_SHARE	0.5	/* one site's share of the charges */
#define FINDINGS_STRIPE_OBJECTS	3	/* objects of one kind, at least */
#define FINDINGS_STRIPE_SHARE	0.5	/* the hot one's share of the waits */
#define FINDINGS_STRIPE_FAIR	2.0	/* ... and times its fair share */
#define FINDINGS_FUTILE_SHARE	0.2	/* futile of all wakeups */
#define FINDINGS_FUTILE_EXPLAINS 0.3	/* ... this many: they explain the waits */
#define FINDINGS_HOLDER_SHARE	0.3	/* --why: the holders' state's share */
#define FINDINGS_SPIN_MEAN_NS	50000	/* a spinlock spun this long: sleep */
#define FINDINGS_RW_CALLS	100	/* write-only rwlock: at least these */

/* Waits on one object at one call site by one thread (a stats row). */
struct findings_wait {
	uint32_t type;		/* enum sp_lock_type */
	bool event;		/* class event: waiting for something to
				   happen (idle), not for a lock */
	uint64_t object;
	uint64_t callsite;
	uint32_t pid;
	uint32_t tid;		/* 0: not known */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t max_ns;
	uint64_t futile;
	uint64_t hold_count;	/* full mode, --hold: the holds taken here */
	uint64_t hold_ns;
	uint64_t hold_max_ns;
	double busy;		/* findings__build's own: the weight it gives */
};

/*
 * Wait charged to a release site: the part of each wait that overlapped
 * the hold the release ended (contended mode), or the waits it ended.
 */
struct findings_release {
	uint32_t type;
	uint64_t object;
	uint64_t site;		/* 0: not seen */
	uint32_t pid;
	uint64_t count;		/* waits it woke */
	uint64_t wait_ns;
	uint64_t max_ns;	/* the longest part: a hold at least as long */
};

/*
 * --why: what the holders of one lock did while its waiters waited at
 * one call site, and the release sites where those chains ended in each
 * state (the largest).
 */
struct findings_holder {
	uint32_t pid;
	uint32_t type;
	uint64_t object;
	uint64_t total_ns;	/* the waits' charges, all states */
	uint64_t runnable_ns;	/* the holder waited for a CPU */
	uint64_t sleep_ns;	/* the holder slept (I/O, a timer, ...) */
	uint64_t runnable_site, runnable_site_ns;
	uint64_t sleep_site, sleep_site_ns;
};

/*
 * A thread's time in the window (its schedstat): its busy share is what
 * it ran of the time it was neither waiting for a lock (its waits) nor
 * for a CPU: near 1 a thread that computes between its lock calls, near
 * 0 one that sleeps between rounds.
 */
struct findings_thread {
	uint32_t pid;
	uint32_t tid;
	uint64_t run_ns;
	uint64_t runq_ns;
	uint64_t slices;	/* times it went on a CPU (0: not known) */
	uint64_t span_ns;	/* the part of the window it lived */
	double busy;		/* set by findings__weigh_threads */
};

struct findings_input {
	const struct findings_wait *waits;
	size_t n_waits;
	const struct findings_release *releases;
	size_t n_releases;
	const struct findings_holder *holders;	/* --why; NULL: none */
	size_t n_holders;
	const struct findings_thread *threads;	/* unknown threads: busy 1 */
	size_t n_threads;
	/* threads sorted, busy set (findings__weigh_threads); NULL: weighed
	   where needed */
	const struct findings_thread *weighed;
	bool every_call;	/* full mode: waits counts every acquisition */
	size_t n_threads_alive;	/* threads of the program in the window
				   (0: those seen in waits and threads) */
	uint64_t elapsed_ns;	/* the window */
};

struct finding {
	enum findings_category category;
	uint32_t type;
	uint64_t object;	/* the lock (hot-stripe: the hot one) */
	uint32_t pid;
	uint32_t n_objects;	/* hot-stripe: the stripes; alike locks
				   merged (merge_alike): how many; else 1 */
	uint64_t site;		/* where the change goes */
	bool site_release;	/* site is a release (unlock) site */
	double impact_pct;
	uint64_t wait_ns;	/* the waits the finding is about */
	uint64_t lock_wait_ns;	/* all waits on the lock (group) */
	char evidence[480];
	char fix[200];
};

/*
 * The findings of one report, best first, at most FINDINGS_MAX; *out
 * (NULL when none) is freed with free().  0 or -ENOMEM.
 */
int findings__build(const struct findings_input *in, struct finding **out,
		    size_t *n);
/* "long-hold", "hot-stripe", ... (DESIGN.md's strings). */
const char *findings__category_name(enum findings_category c);
/*
 * in's threads sorted by tid (then pid), each with its busy share from
 * its times and its lock waits (in->waits): one walk of the waits, that
 * findings__build and findings__folded_weights both read when given it
 * as in->weighed.  *out is freed with free(); 0 or -ENOMEM.
 */
int findings__weigh_threads(const struct findings_input *in,
			    struct findings_thread **out);
/*
 * The weight of a lock's rows that lost their thread (tid 0: the rows
 * of threads that exited before the report was read, folded): what
 * findings__build gives them.
 */
struct findings_lock_weight {
	uint32_t pid;
	uint64_t object;
	double busy;
};

/*
 * Sets each wait's busy (its weight) and sorts the waits by
 * findings__wait_cmp; 0 or -ENOMEM.
 */
int findings__weigh(const struct findings_input *in, struct findings_wait *w,
		    size_t n);
/* Waits by pid, type, object, call site (qsort's comparator). */
int findings__wait_cmp(const void *pa, const void *pb);
/*
 * Every lock with such rows, sorted by pid and object, weighed by in's
 * threads; 0 or -ENOMEM.
 */
int findings__folded_weights(const struct findings_input *in,
			     struct findings_lock_weight **out, size_t *n);

#endif
