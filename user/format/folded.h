/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --format folded: flame-graph input (flamegraph.pl, inferno), one line
 * per distinct stack: its frames outermost first, joined by ';', the lock
 * last ("[mutex big_lock]"), a space, the wait in nanoseconds.
 *
 *     [event];start_thread;worker;drain_[i];queue_pop;[condvar queue+0x28] 9884310000
 *
 * Frames are function names; an inlined call's is marked "_[i]" (the
 * suffix flamegraph.pl colours as inlined); a frame without a name is
 * its module, "[libfoo.so]", or "[unknown]".  Each line starts with its
 * row's class, "[lock]" or "[event]" (locktype.h), so that a flame graph
 * keeps lock contention apart from waiting for events; then, with
 * --per-thread, the thread, "[tid 1234]".  A stack cut short then starts
 * with "[truncated]" (--stack-depth) or "[unwinding stopped]".  Lines
 * are sorted, and stacks that read the same are one line.
 */
#ifndef SYNCPROF_FOLDED_H
#define SYNCPROF_FOLDED_H

#include <stdio.h>

#include "names.h"
#include "rowstacks.h"

struct folded;

int folded__new(struct folded **out);
void folded__free(struct folded *f);
/*
 * Adds the stacks of row (named in rs); object_symbol: the row's lock's
 * name, NULL if none.  Stacks that waited no time are left out.
 */
int folded__add(struct folded *f, const struct report_row *row,
		const char *object_symbol, const struct rowstacks *rs);
/* Writes the lines added so far, sorted and merged, and forgets them. */
int folded__write(struct folded *f, FILE *out);
/* One report: every row's stacks, named through sym (tab: NULL if none). */
int folded__print(FILE *out, struct symbolizer *sym,
		  const struct stacktab *tab, const struct report_rows *rows,
		  const struct row_names *names);

#endif
