/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --format pprof: the report as pprof's profile.proto, gzipped, which
 * go tool pprof, Pyroscope and Parca read.  The sample types are Go's and
 * Abseil's for a mutex profile: contentions/count and delay/nanoseconds
 * (the default).  One sample per distinct stack of a row, leaf first,
 * labelled with the lock: "type" (mutex) and "object" (big_lock,
 * 0x55d0c0de1040, or "7 objects"), and "tid" with --per-thread; with
 * --why, one sample per root of its chains (pprof_window).
 * Locations carry their inlined calls as lines; functions their file and
 * the line they begin at; mappings their file, offset and build ID, so a
 * profile can be symbolized again elsewhere.
 */
#ifndef SYNCPROF_PPROF_H
#define SYNCPROF_PPROF_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "names.h"
#include "rowstacks.h"
#include "stacktab.h"
#include "whyrows.h"

struct pprof;

/* What a profile says of its run: its comment, and its window. */
struct pprof_window {
	pid_t pid;
	const char *comm;
	/* What the run follows (session__scope); NULL: pid and comm. */
	const char *scope;
	const char *mode;
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	/*
	 * Rows split by process: the name of a row's pid for its "process"
	 * label (NULL, or a NULL answer: comm when it is pid, else "?").
	 */
	const char *(*process_name)(const void *ctx, pid_t pid);
	const void *process_ctx;
	/*
	 * Every mapping says its functions are named (--serve: names come
	 * from the targets' own files, through /proc; a client asking the
	 * server back for names, as go tool pprof does for an HTTP source
	 * without them, gets none).
	 */
	bool symbolized;
	/*
	 * --why: the window's charges and the grouping the rows were built
	 * by (NULL: none).  Each stack's sample is then split by the roots
	 * of its chains, labelled "root" (the release site, as -g prints a
	 * frame) and "root_state" (why__state_name), and the rest labelled
	 * root=none: a row's samples still add up to it.
	 */
	const struct why *why;
	const struct report_settings *why_rows_by;
	/*
	 * --why's root frames are shown without this root of their files
	 * (NULL: pprof__print finds it, names__source_root).
	 */
	const char *source_root;
	size_t source_root_len;
};

/*
 * Where a profile's mappings and its roots' call sites are named: the
 * symbolizer (pprof__add), or names read from it earlier and kept
 * (--serve builds its profiles off the loop that owns the symbolizer).
 */
struct pprof_source {
	/* The mapping holding addr; -ENOENT: none. */
	int (*module)(void *ctx, uint64_t addr, struct symbol_module *out);
	/* The call site whose return address is addr (zeroed: unknown). */
	void (*callsite)(void *ctx, uint64_t addr, struct symbol_info *out);
	void *ctx;
};

int pprof__new(const struct pprof_window *window, struct pprof **out);
void pprof__free(struct pprof *p);
/*
 * Adds the stacks of row (named in rs) as samples; sym gives their
 * mappings (NULL: none); object_symbol: the row's lock's name or NULL.
 */
int pprof__add(struct pprof *p, struct symbolizer *sym,
	       const struct report_row *row, const char *object_symbol,
	       const struct rowstacks *rs);
/* The same, the mappings and roots named by src (NULL: none). */
int pprof__add_from(struct pprof *p, const struct pprof_source *src,
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
		 const struct stacktab *tab, const struct pprof_window *window,
		 const struct report_rows *rows,
		 const struct row_names *names);

#endif
