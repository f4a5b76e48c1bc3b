/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The labels of /metrics' series, from a read's rows: the program's
 * name, the class and type, the lock and the call site, as text that
 * stays the same from one process of a program to the next and from one
 * build machine to another.
 */
#ifndef SYNCPROF_METRICNAMES_H
#define SYNCPROF_METRICNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "snapshot.h"
#include "symbolinfo.h"
#include "symbolizer.h"

struct procset_entry;

/*
 * The call site as a label: "function file:line" with the file's base
 * name (no build machine's directories), else "function+0xoff",
 * "module+0xoff" or "0xaddr".
 */
void metricnames__callsite(const struct symbol_info *info, uint64_t addr,
			   char *buf, size_t len);
/*
 * The object as a label.  Coalesced (the default): a name shared by
 * every instance of one thing, "(unnamed)" for a lock with no name, and
 * a name's per-instance parts left out ("table[3].lock" -> "table[].lock",
 * "shared memory+0x40" -> "shared memory"); else (--no-coalesce) the
 * name or the address, one series per object.
 */
void metricnames__object(const char *name, uint64_t addr, bool coalesce,
			 char *buf, size_t len);
/*
 * Adds every row of delta (a read's change) to m under its labels;
 * processes name the rows' pids.  0 or -errno.
 */
int metricnames__add(struct metrics *m, struct symbolizer *sym,
		     const struct snapshot *delta,
		     const struct procset_entry *processes, size_t n_processes,
		     bool coalesce);

#endif
