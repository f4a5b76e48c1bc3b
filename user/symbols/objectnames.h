/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of lock objects, and objects by name: a global or static
 * variable and the member in it, a heap lock by the variable that holds
 * it or by the type of the pointer it was passed through.
 */
#ifndef SYNCPROF_OBJECTNAMES_H
#define SYNCPROF_OBJECTNAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct dwflsession;
struct objectnames;
struct symcache;

/*
 * Names objects in session's modules (process pid, <= 0: none); strings
 * are kept by strings.  Neither is owned; both outlive it.
 */
int objectnames__new(struct dwflsession *session, struct symcache *strings,
		     pid_t pid, struct objectnames **out);
void objectnames__free(struct objectnames *o);
/*
 * The data symbol holding addr, or NULL: with its DWARF type, the path
 * of the member ("queue.not_empty", "table[3].lock"; memberpath.h), else
 * "name" or "name+0xoff".  In no module: the variable whose first word
 * points to it (holders.h), re-read at most once a second while live.
 */
const char *objectnames__name(struct objectnames *o, uint64_t addr, bool live);
/*
 * The lock passed at the call returning to ret_addr, by its pointer's
 * type (callarg.h), or NULL.  *known: false when no module holds the
 * call site yet (the answer may come later).
 */
const char *objectnames__argument(struct objectnames *o, uint64_t ret_addr,
				  bool condvar, bool *known);
/*
 * The variable called name (its symbol-table name), or a member of one
 * by its path from DWARF: its address and size.  -ENOENT: none;
 * -ENOTUNIQ: one in several modules; -EIO.
 */
int objectnames__find(struct objectnames *o, const char *name,
		      uint64_t *start, uint64_t *size);

#endif
