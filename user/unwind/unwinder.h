/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwind tables in the kernel, kept in step with the target: one
 * table per module build (rows from modtable), and the process's sorted
 * executable mappings naming each one's table and load bias.  The maps
 * and the walk that reads them: bpf/unwind/unwind.bpf.h.
 */
#ifndef SYNCPROF_UNWINDER_H
#define SYNCPROF_UNWINDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmaps.h"
#include "skiplist.h"
#include "unwind.h"

struct unwinder;

struct unwinder_config {
	pid_t pid;
	int tables_fd;		/* unwind_tables: slot -> one build's rows */
	int mappings_fd;	/* proc_mappings: tgid -> its mappings */
	int files_fd;		/* unwind_files: file -> its table, or -1 */
	const char *libc_path;	/* the library libc_funcs models, or NULL */
	const struct skiplist *skip;	/* --skip, or NULL */
	/*
	 * Called between table builds of a long sync (every few ms), to
	 * drain what the kernel hands over meanwhile; or NULL.
	 */
	void (*busy)(void *ctx);
	void *busy_ctx;
};

struct unwinder_stats {
	size_t tables;		/* module builds read */
	size_t fp_tables;	/* of which walked by frame pointer */
	size_t rows;		/* rows in all tables */
	size_t mappings;	/* the processes' executable mappings */
	size_t processes;	/* processes with a mapping array */
	size_t skipped;		/* skipped functions found (built-in and --skip) */
	size_t user_skipped;	/* of which --skip named */
	size_t bytes;		/* kernel memory of rows and mappings */
	size_t collected;	/* files let go: no process mapped them */
	size_t cache_bytes;	/* the frame cache (probes fill it in) */
	double build_ms;	/* time spent reading CFI and loading it */
};

int unwinder__new(const struct unwinder_config *cfg, struct unwinder **out);
void unwinder__free(struct unwinder *u);
/*
 * Reads the target's maps and brings the kernel's tables up to date:
 * tables for new builds, and a new mapping array when anything moved.
 * exec_seq: the image the maps are read in (bpf: exec_seq).  1 if the
 * mappings changed, 0 if not, or -errno.
 */
int unwinder__sync(struct unwinder *u, uint32_t exec_seq);
/*
 * The same for another process (--children, several --pid): its
 * mappings get their own array; the builds' tables are shared.
 * exec_seq: the process's image (the exec_seqs map), read before.
 */
int unwinder__sync_pid(struct unwinder *u, pid_t pid, uint32_t exec_seq);
/*
 * The maps the last sync of pid read (its newest round), or NULL: what
 * names its addresses too, when the process is gone before another read.
 */
const struct procmaps *unwinder__last_maps(const struct unwinder *u, pid_t pid);
/*
 * While keep is true, each sync keeps its whole read of a process's maps
 * (every mapping, not only code) until it is taken: a process named
 * right after its sync (several processes) is named from the read its
 * tables were built from instead of reading /proc again.  false lets go
 * of the reads not taken.
 */
void unwinder__keep_maps(struct unwinder *u, bool keep);
/* The kept read of pid's maps, the caller's to free; NULL: none. */
struct procmaps *unwinder__take_maps(struct unwinder *u, pid_t pid);
/* The process has exited: its mapping array leaves the kernel. */
void unwinder__forget(struct unwinder *u, pid_t pid);
/*
 * The layout of pid's installed mapping array: a hash of its ranges,
 * biases and table slots (never 0), the frame cache's tag in the kernel
 * (bpf/unwind/unwind.bpf.h).  Equal for processes whose code is at the same
 * addresses from the same builds.  0: none installed.
 */
uint64_t unwinder__layout(const struct unwinder *u, pid_t pid);
void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st);
/*
 * The rule the kernel's walk finds at a lookup address of pid (late
 * walks, latewalk.h): 0 with *row; -ENODATA: placed, no row there
 * (*map_flags: the mapping's SP_MAP_F_*); -EAGAIN: no table placed there.
 */
int unwinder__rule_at(struct unwinder *u, pid_t pid, uint64_t addr,
		      struct sp_unwind_row *row, uint32_t *map_flags);

/* How a mapping of a file is walked, from its name and identity. */
uint32_t unwinder__mapping_flags(const struct procmaps_entry *e,
				 uint64_t libc_dev, uint64_t libc_inode);

#endif
