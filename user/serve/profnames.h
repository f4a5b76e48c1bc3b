/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profile's rows named by the loop's symbolizer and kept as copies of
 * their own: each row's call site and object, its stacks with their
 * frames, the mappings of their addresses and, with --why, the call
 * sites of the roots they split by.  Named on the loop a row at a time
 * (profnames__name), then read on any thread with no symbolizer
 * (profnames__stacks, profnames__source): nothing in it points into the
 * symbolizer, whose modules may be released meanwhile.
 */
#ifndef SYNCPROF_PROFNAMES_H
#define SYNCPROF_PROFNAMES_H

#include <stddef.h>

#include "names.h"
#include "pprof.h"
#include "report.h"
#include "rowstacks.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "whyrows.h"

struct profnames;

/* Room for n_rows rows, none named yet.  0 or -ENOMEM. */
int profnames__new(size_t n_rows, struct profnames **out);
void profnames__free(struct profnames *pn);
/*
 * Names row i through sym and tab (NULL: no stacks kept) and keeps the
 * copies; why (NULL: none) grouped by rows_by: the roots its stacks
 * split by are named too.  0 or -ENOMEM.
 */
int profnames__name(struct profnames *pn, size_t i, struct symbolizer *sym,
		    const struct stacktab *tab, const struct report_row *row,
		    const struct why *why,
		    const struct report_settings *rows_by);
/* Every row's names (a row not named: zeroed). */
const struct row_names *profnames__names(const struct profnames *pn);
/* Row i's stacks, as rowstacks__name gave them. */
const struct rowstacks *profnames__stacks(const struct profnames *pn,
					  size_t i);
/* The mappings and root call sites named, for pprof__add_from. */
const struct pprof_source *profnames__source(const struct profnames *pn);
/* Bytes held by the copies (the strings once each). */
size_t profnames__bytes(const struct profnames *pn);

#endif
