/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for addresses in the target, from outside and without frame
 * pointers: a call site becomes module, function, file and line (through
 * inlined wrappers, to the user's own line); a lock object becomes the
 * global or static variable that holds it, and the member in it.
 */
#ifndef SYNCPROF_SYMBOLIZER_H
#define SYNCPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolinfo.h"

struct procmaps;
struct symbolizer;

struct debugfetch;
/*
 * Stripped modules' debug files from debuginfod (NULL: off), for every
 * session from now on.  Not owned.
 */
void symbolizer__use_debuginfod(struct debugfetch *fetch);
/*
 * Reads the target's modules now, so later lookups work after it exits.
 * debuginfo_path: where to look for separate debug files, in libdwfl's
 * syntax (NULL: ":.debug:/usr/lib/debug" and the target's own root).
 */
int symbolizer__new(pid_t pid, const char *debuginfo_path,
		    struct symbolizer **out);
/*
 * Names addresses of one ELF file (an absolute path) as if a process had
 * mapped all of it at base, from file offset 0: no process is read.  For
 * files whose process is gone, and for the fuzzer.
 */
int symbolizer__new_file(const char *path, uint64_t base,
			 const char *debuginfo_path, struct symbolizer **out);
/*
 * Where a symbolizer of several processes sends its lookups: each
 * canonical address to the symbolizer of the process that names it.
 * procspace.c makes one (procspace__symbolizer); the symbolizer knows no
 * processes, only these calls.
 */
struct symbolizer_delegate {
	/*
	 * The symbolizer that names canonical (*sym, NULL: none) and the
	 * address there (*addr).
	 */
	void (*resolve)(void *ctx, uint64_t canonical, struct symbolizer **sym,
			uint64_t *addr);
	/* A shared memory object that holds canonical: its path and offset. */
	bool (*shared_object)(void *ctx, uint64_t canonical, const char **path,
			      uint64_t *offset);
	/* Every symbolizer it sends to re-reads its process's modules. */
	void (*refresh)(void *ctx);
	void *ctx;		/* outlives the symbolizer */
};

/*
 * Names canonical addresses of several processes: each lookup goes to
 * the symbolizer delegate->resolve says; a lock in shared memory is named
 * by its mapping and offset.
 */
int symbolizer__new_delegating(const struct symbolizer_delegate *delegate,
			       struct symbolizer **out);
void symbolizer__free(struct symbolizer *sym);
/* Adds what the target mapped since; call now and then while it lives. */
int symbolizer__refresh(struct symbolizer *sym);
/* The same from maps the caller read of the target (the unwinder's). */
int symbolizer__update(struct symbolizer *sym, const struct procmaps *maps);
/* Whether it names by a file that maps no longer shows. */
bool symbolizer__outdated(const struct symbolizer *sym,
			  const struct procmaps *maps);
/* The target exited: never read its /proc files again (the PID may be reused). */
void symbolizer__freeze(struct symbolizer *sym);
/*
 * What the symbolizers of this process hold, shared by file identity
 * and bounded (docs/fleet.md, "Bounds"): for /metrics.
 */
struct symbolizer_cache_stats {
	uint64_t modules;	/* libdwfl modules in all symbolizers */
	uint64_t gone;		/* of which no followed process maps */
	uint64_t evictions;	/* modules released so far */
	uint64_t files;		/* distinct ELF files behind them */
	uint64_t open_files;	/* of which held open */
	uint64_t memory_bytes;	/* deleted files kept in memory */
	uint64_t shared;	/* opens answered by a file known already */
};
void symbolizer__cache_stats(struct symbolizer_cache_stats *out);
/*
 * Each housekeeping tick: files of modules no process maps that were
 * deleted since they were let go are closed (read into memory).
 */
void symbolizer__housekeep(void);
/*
 * Names the call site whose return address is `ret_addr` (looked up at
 * ret_addr - 1).  Strings stay valid until symbolizer__free.  -ENOENT:
 * no module maps it (info->module is NULL then).
 */
int symbolizer__callsite(struct symbolizer *sym, uint64_t ret_addr,
			 struct symbol_info *info);
/*
 * The source frames of the code at pc, innermost first, as eu-addr2line
 * -i: one per inlined call (inlined true), in the function it was
 * inlined into, and that function last.  Each frame's file and line say
 * where in it the code is: for an inlined frame's caller, the line of
 * the inlined call.  A return address (is_return_address) is looked up
 * at pc - 1, as a call site.  All frames carry pc's module and file
 * offset; the outermost carries the ELF symbol's name and pc's offset in
 * it (function_offset; 0 in inlined frames).  Without DWARF: one frame,
 * named by the ELF symbol if any.
 *
 * *frames (the symbolizer's, valid until symbolizer__free) holds *n >= 1
 * frames.  -ENOENT: no module maps pc (one frame, module NULL); -ENOMEM.
 */
int symbolizer__frames(struct symbolizer *sym, uint64_t pc,
		       bool is_return_address,
		       const struct symbol_frame **frames, size_t *n);
/*
 * The mapping holding addr, with its file's build ID; -ENOENT if none.
 * The path stays valid until symbolizer__free; the build ID's bytes
 * until the next lookup (a module no process maps may be released then:
 * dwflsession.c).
 */
int symbolizer__module(struct symbolizer *sym, uint64_t addr,
		       struct symbol_module *out);
/*
 * The data symbol holding addr, or NULL: with its DWARF type, the path
 * of the member ("queue.not_empty", "table[3].lock"; memberpath.h),
 * else "name" or "name+0xoff".
 */
const char *symbolizer__object(struct symbolizer *sym, uint64_t addr);
/*
 * Several processes: whether addr (canonical) lies in shared memory,
 * which symbolizer__object names by its mapping ("shared memory+0x40").
 */
bool symbolizer__shared(struct symbolizer *sym, uint64_t addr);
/*
 * Remembers name (from symbolizer__argument_lock, kept as long as sym)
 * for the lock in shared memory at addr: symbolizer__object says it from
 * then on, for every row of that lock (a release site's too).
 */
void symbolizer__name_shared(struct symbolizer *sym, uint64_t addr,
			     const char *name);
/*
 * A lock with no symbol (heap), by the type of the pointer the call
 * returning to ret_addr was passed it through: "(struct queue *)->lock"
 * (callarg.h), or NULL if the call site's DWARF does not say.  condvar:
 * the row waits on a condvar, else on a lock.  Cached per call site.
 */
const char *symbolizer__argument_lock(struct symbolizer *sym,
				      uint64_t ret_addr, bool condvar);
/*
 * The global or static variable called name (its symbol-table name) in
 * the target's modules, or a member of one by its path from DWARF
 * ("queue.not_empty", "table[3].lock"): its address and size.  -ENOENT:
 * none; -ENOTUNIQ: one in several modules.
 */
int symbolizer__find_object(struct symbolizer *sym, const char *name,
			    uint64_t *start, uint64_t *size);

#endif
