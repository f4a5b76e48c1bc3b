/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The findings of one report, from the session's snapshots to the
 * renderers: gathers findings.h's input from the window's waits, the
 * charges of its releases and the threads' run times; names each
 * finding's lock and site; prints the table's block, the JSON list, the
 * live screen's line and CSV's comment lines.
 */
#ifndef SYNCPROF_FINDOUT_H
#define SYNCPROF_FINDOUT_H

#include <stdio.h>

#include <jansson.h>

#include "findings.h"
#include "names.h"
#include "options.h"
#include "snapshot.h"
#include "symbolizer.h"
#include "whycharges.h"

/* One report's findings, named. */
struct findout {
	struct finding *list;
	size_t n;
	struct row_names *names;	/* names[i]: list[i]'s lock and site */
	struct findings_thread *threads;	/* by tid, busy shares set */
	size_t n_threads;
	struct findings_lock_weight *folded;	/* by pid and object */
	size_t n_folded;
};

/*
 * The locks' names a session's findings found, none found included: a
 * lock is named once (a lock in shared memory that no symbol holds is
 * looked for through the target's globals, milliseconds each time).
 */
struct findout_known;
struct findout_known *findout__known_new(void);	/* NULL: -ENOMEM */
void findout__known_free(struct findout_known *k);

/*
 * Finds what is worth fixing in the window: waits (its rows), charges
 * (the holds' charges, or --blame's; NULL: none), why (--why's charges,
 * NULL: none), every_call (full mode: waits count every acquisition),
 * threads (their run times, NULL: none known).  sym names the results,
 * known (NULL: none) remembers the locks' names between reports.
 */
int findout__build(const struct snapshot *waits, const struct snapshot *charges,
		   const struct why *why, bool every_call,
		   const struct findings_thread *threads, size_t n_threads,
		   uint64_t elapsed_ns, struct symbolizer *sym,
		   struct findout_known *known, struct findout *out);
void findout__free(struct findout *f);
/*
 * A thread's weight in the table's order (report_settings' weigh, ctx
 * the findout): its busy share, 1 when not known.
 */
double findout__weigh(const void *ctx, uint32_t pid, uint32_t tid,
		      uint64_t object);
/*
 * The threads' weights as text, "tid:weight,..." (weights exact), for a
 * recording; NULL on -ENOMEM.  Freed with free().
 */
char *findout__weights_text(const struct findout *f);
/*
 * Weights read back from that text (a replay): sorted by tid into a
 * findout that only findout__weigh reads; -EINVAL for a bad text.
 */
int findout__weights_parse(const char *text, struct findout *out);
/*
 * The table's block: "What to fix first" and a line or three per
 * finding; one line saying none when there is none.
 */
void findout__table(FILE *out, const struct findout *f,
		    enum callsite_style style);
/* JSON "findings": the contract's list, [] when none. */
json_t *findout__json(const struct findout *f, int *err);
/* One line for the live screen: the first finding, short. */
void findout__line(const struct findout *f, char *buf, size_t len);

#endif
