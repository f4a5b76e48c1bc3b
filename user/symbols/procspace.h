/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One address space for several processes: an address of any followed
 * process becomes a canonical address, the same for the same module (or
 * shared memory object) and file offset in every process, so rows of
 * processes that share a call site or a process-shared lock merge
 * whatever ASLR did, and names are looked up in the process that mapped
 * the module first.
 */
#ifndef SYNCPROF_PROCSPACE_H
#define SYNCPROF_PROCSPACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct procmaps;

struct procspace;
struct symbolizer;

int procspace__new(struct procspace **out);
void procspace__free(struct procspace *ps);
/*
 * Reads pid's mappings (a new process, an exec, a library loaded).
 * parent: a forked child starts with its parent's layout, kept when the
 * child is gone before its maps are read; 0 for none.
 */
int procspace__update(struct procspace *ps, pid_t pid, pid_t parent);
/*
 * The same from maps just read (procmaps__read's whole list, taken over:
 * freed here); NULL reads them.
 */
int procspace__update_from(struct procspace *ps, pid_t pid, pid_t parent,
			   struct procmaps *maps);
/* After an exec: names of the new image come from a new symbolizer. */
int procspace__exec(struct procspace *ps, pid_t pid);
int procspace__exec_from(struct procspace *ps, pid_t pid,
			 struct procmaps *maps);
/* pid has exited: its maps and names are kept, /proc is read no more. */
void procspace__exited(struct procspace *ps, pid_t pid);
/*
 * The canonical address of addr in pid; addr itself when no file or
 * shared memory maps it (heap, stacks), or pid is not known.
 */
uint64_t procspace__canonical(struct procspace *ps, pid_t pid, uint64_t addr);
/*
 * Where a canonical address is named: a symbolizer and the address in
 * its process.  0, or -ENOENT when no module holds it (then *sym is a
 * symbolizer to ask anyway, or NULL).
 */
int procspace__resolve(struct procspace *ps, uint64_t canonical,
		       struct symbolizer **sym, uint64_t *addr);
/*
 * A shared memory object that holds the canonical address (a mapping of
 * a file, /dev/shm, System V or shared anonymous memory that is not an
 * ELF module): its path, sanitized by the caller, and offset in it.
 */
bool procspace__shared_object(struct procspace *ps, uint64_t canonical,
			      const char **path, uint64_t *offset);
/* Makes every symbolizer re-read its process's modules. */
void procspace__refresh(struct procspace *ps);
/*
 * A symbolizer of the canonical addresses: each lookup goes to the
 * symbolizer of the region's home process.  ps outlives it.
 */
int procspace__symbolizer(struct procspace *ps, struct symbolizer **out);

#endif
