/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --format pprof: the report as pprof's profile.proto, gzipped, which
 * go tool pprof, Pyroscope and Parca read.  The sample types are Go's and
 * Abseil's for a mutex profile: contentions/count and delay/nanoseconds
 * (the default).  One sample per distinct stack of a row, leaf first,
 * labelled with the lock: "type" (mutex) and "object" (big_lock,
 * 0x55d0c0de1040, or "7 objects"), and "tid" with --per-thread.
 * Locations carry their inlined calls as lines; functions their file and
 * the line they begin at; mappings their file, offset and build ID, so a
 * profile can be symbolized again elsewhere.
 */
#ifndef SYNCPROF_PPROF_H
#define SYNCPROF_PPROF_H

#include <stdio.h>

#include "format.h"
#include "rowstacks.h"

struct pprof;

int pprof__new(const struct format_meta *meta, struct pprof **out);
void pprof__free(struct pprof *p);
/*
 * Adds the stacks of row (named in rs) as samples; sym gives their
 * mappings (NULL: none); object_symbol: the row's lock's name or NULL.
 */
int pprof__add(struct pprof *p, struct symbolizer *sym,
	       const struct report_row *row, const char *object_symbol,
	       const struct rowstacks *rs);
/*
 * Writes the profile, gzipped, to out.  A seekable out that already
 * holds data (the previous report of --interval) is emptied first: the
 * file holds the latest report.
 */
int pprof__finish(struct pprof *p, FILE *out);
/* One report: every row's stacks, named through sym (tab: NULL if none). */
int pprof__print(FILE *out, struct symbolizer *sym,
		 const struct stacktab *tab, const struct format_meta *meta,
		 const struct report_rows *rows,
		 const struct format_names *names);

#endif
