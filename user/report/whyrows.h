/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --why by report row: what the holder did during the row's waits, and
 * the roots of the chains (a release site, its process, the last
 * holder's state), from the charges (whycharges.h).  A report row finds
 * its charges by the grouping that built it.
 */
#ifndef SYNCPROF_WHYROWS_H
#define SYNCPROF_WHYROWS_H

#include <stddef.h>
#include <stdint.h>

#include "syncprof.h"
#include "report.h"
#include "whycharges.h"

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
