/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A row's stacks as text, under the row, in the manner of perf report
 * -g: one line per distinct stack with its share of the row's wait and
 * count, then its frames, innermost first, one per line.  The table's
 * -g prints it; the live screen shows the same lines in its stack pane.
 *
 *     --71.32%-- 620 waits (71.26%)  9.88431 s  max 18513.47 us
 *             queue_pop (demo.c:168)
 *             drain (demo.c:190) [inlined]
 *             worker (demo.c:201)
 *             start_thread (libc.so.6)
 */
#ifndef SYNCPROF_CALLGRAPH_H
#define SYNCPROF_CALLGRAPH_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"
#include "rowstacks.h"

/*
 * Prints rs, the named stacks of row.  root, root_len: the source root
 * the table leaves out of file names (names__source_root), or NULL.
 */
void callgraph__print(FILE *out, const struct report_row *row,
		      const struct rowstacks *rs, const char *root,
		      size_t root_len);

#endif
