/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --why: the charges the programs keep (bpf/measure/why.bpf.h), by the waiter's
 * row: what the holder did during the row's waits, and the roots of the
 * chains (a release site, its process, the last holder's state).  Read
 * from the map as totals since attach; a window is the difference of two
 * reads.  A report row finds its charges by the grouping that built it.
 */
#ifndef SYNCPROF_WHY_H
#define SYNCPROF_WHY_H

#include <stddef.h>
#include <stdint.h>

#include "syncprof.h"
#include "report.h"

struct why;

/* One root of a row's chains. */
struct why_root {
	uint64_t site;		/* the release's return address; 0: not seen */
	uint32_t pid;
	uint32_t state;		/* enum sp_why_state */
	uint64_t ns;
	uint64_t waits;		/* waits charged to it (in part) */
};

struct why_row {
	uint64_t holder[SP_WHY__COUNT];	/* by enum sp_why_state */
	struct why_root *roots;	/* largest first */
	size_t n_roots;
};

int why__new(struct why **out);
void why__free(struct why *w);
int why__add(struct why *w, const struct sp_why_key *key,
	     const struct sp_why_value *value);
/* Chains cut short and charges lost, since attach (SP_CNT_WHY_*). */
void why__set_counts(struct why *w, uint64_t cut, uint64_t dropped);
void why__counts(const struct why *w, uint64_t *cut, uint64_t *dropped);
/* After the adds: sorted for why__delta's lookups. */
void why__seal(struct why *w);
/*
 * Several processes: fn turns each key's addresses (the row's, and the
 * root's site in its process) into canonical ones; equal keys merge.
 */
void why__rekey(struct why *w, void (*fn)(void *ctx, struct sp_key *key),
		void *ctx);
/* cur - prev (prev NULL: cur), key by key, into a new sealed *out. */
int why__delta(const struct why *cur, const struct why *prev,
	       struct why **out);
/* The charges of the rows grouped into row by settings. */
int why__row(const struct why *w, const struct report_row *row,
	     const struct report_settings *settings, struct why_row *out);
/* The same for the waits of row whose stack is stack_id (0: none kept). */
int why__row_stack(const struct why *w, const struct report_row *row,
		   const struct report_settings *settings, uint64_t stack_id,
		   struct why_row *out);
void why__row_free(struct why_row *r);
/*
 * The roots of rows whose last holder was in state, one report row per
 * waited-on lock and root, summed across the rows that waited on it
 * (the waiters' type and object; callsite: the root's site, 0 if not
 * seen; count: its waits; wait_ns: its charge), largest charge first;
 * free out->rows.  0 or -ENOMEM.
 */
int why__state_rows(const struct why *w, const struct report_rows *rows,
		    const struct report_settings *settings, uint32_t state,
		    struct report_rows *out);
/* "running", "runnable", "lock", "sleep", "unknown", "woken". */
const char *why__state_name(uint32_t state);
/* What a state says of a chain's end: "the last holder was running". */
const char *why__state_title(uint32_t state);

#endif
