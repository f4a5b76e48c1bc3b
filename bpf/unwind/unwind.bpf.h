/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack walk both modes run in the kernel: from a thread's user
 * registers (saved by the futex system call, or at a uprobe), out of
 * libc, through every module of the target, to the thread's outermost
 * frame or --stack-depth frames.  This header has the maps' types, the
 * packed rule and unwind_user's prototype; the maps and the walk are in
 * unwind.bpf.c.
 *
 * Tables.  The loader turns each module build's CFI into rows (one rule
 * per address range, bpf/unwind.h) and gives each build an inner array
 * of an ARRAY_OF_MAPS: BPF_F_INNER_MAP lets the inner arrays differ in
 * size, so a library dlopen'ed later gets its table without a reload,
 * and a build is loaded once whatever maps it (tables are keyed by build,
 * not by process).  Each process has a sorted array of its executable
 * mappings (HASH_OF_MAPS by tgid): module slot and load bias per range.
 * The loader builds a new array and swaps it in, so a walk never sees a
 * half-written one.
 *
 * The frame cache.  The same return address unwinds the same way every
 * time, and a lock-heavy program blocks from a few hundred call chains:
 * each lookup address's packed rule (CFA register and offset, where rbp
 * is, whether the frame is libc's or a --skip function's, libc's lock
 * class) sits in a direct-mapped array indexed by a hash of the address.
 * A hit is one inlined array access, no helper call; a miss is two
 * binary searches (mappings, then rows: ~25 lookups for libc).  In make
 * bench's hammer (40 frames deep) a frame costs a third of what it does
 * with the cache turned off.  Entries are tagged with address ^ rule ^
 * the process's layout, so a torn write between two CPUs reads as a
 * miss.  A layout (proc_layouts) is a hash of the process's whole mapping
 * array (ranges, biases, table slots; slots are never reused), set by
 * the loader when it installs the array: processes whose code sits at the
 * same addresses from the same builds share their entries, whatever
 * their number (forked servers: PostgreSQL's backends, a fork burst of
 * one program), and a dlopen or an exec gives a new layout, so the old
 * entries read as misses without a generation bump that would empty the
 * cache for every process.  The layout also picks the entry (the index
 * hashes address and layout), so two layouts' code at one address does
 * not evict each other.  Measured on --children PostgreSQL: with entries
 * tagged per process and emptied whenever any process's mappings were
 * replaced, 7.7-33 misses per wait; see make bench, section servers.
 * An exec removes the process's layout at once (target_exec); until the
 * loader has read the new image its walks take the slow path, which
 * stops them as stale.
 *
 * --skip is applied here, not by the loader: the rows of --skip
 * functions carry SP_UNWIND_A_SKIP, and the walk takes the first frame
 * outside libc without it as the call site, which goes in the row key.
 * Rows at different call sites stay apart without the loader re-keying
 * them, and --stack-depth 0 --skip needs no stack kept.  The built-in
 * runtimes' wrappers (user/unwind/wrappers.c) are more globs, whose rows
 * also carry the lock kind they implement, packed into the rule where a
 * libc frame has libc's class: the walk returns the kinds it crossed on
 * the way to the call site, and the row key gets the kind, so a Rust
 * Mutex and Condvar waiting in the same futex_wait stay apart.
 *
 * Rejected:
 *  - picking the call site from the kept stack in user space: needs the
 *    stack kept even at --stack-depth 0, and a second grouping of rows;
 *  - opentelemetry-ebpf-profiler's layout (fixed size classes of inner
 *    maps, a page index per build, an LPM trie of mappings, a tail call
 *    every ~20 frames): built for whole-system sampling of many
 *    processes; BPF_F_INNER_MAP removes the size classes, bpf_loop the
 *    tail calls, and the frame cache makes the searches rare.
 *  - a hash map as the frame cache: a helper call and a hash per frame,
 *    several times the inlined array access.
 *  - frame pointers only (bpf_get_stack): distributions build without
 *    them, and libc never has them.
 *  - keeping rows per process: libc would be loaded once per process.
 *
 * A module without CFI is walked by frame pointer (SP_MAP_F_FP).  Code in
 * no file (JIT, anonymous memory) stops the walk, counted: nothing there
 * says where its caller's frame is.  After an exec, until the loader has
 * read the new image, the mapping array is stale: an address it does not
 * place is looked up by its VMA's file (bpf_find_vma, then the files map
 * of every file the loader has read), so libc and ld.so are walked in
 * the new image at once and the call site is right; a frame in a file
 * not read yet stops the walk (counted as stale), and the caller walks
 * again when the wait ends (unwind_rewalked); a walk still cut then
 * hands the loader its raw frames (UNWIND_LATE, struct sp_late_walk),
 * which it finishes once the table is read (user/unwind/latewalk.c).  Rejected: stopping the
 * target at the exec until the loader is done (a SIGSTOP its parent
 * would see) and the mapping array alone (a new program's first waits
 * landed in libc for 0.2-0.3 s).
 */
#ifndef SYNCPROF_UNWIND_BPF_H
#define SYNCPROF_UNWIND_BPF_H

#include "unwind.h"

/* Defined in unwind.bpf.c. */
extern const volatile __u32 stack_depth;
extern const volatile __u32 skip_enabled;
extern const volatile __u32 func_nrows;
extern const volatile __u64 lll_private_start;
extern const volatile __u64 lll_private_end;
extern volatile __u32 exec_seq;
extern const volatile __u32 late_walks_on;

/*
 * Late walks (struct sp_late_walk) for the loader to finish; sized by
 * the loader (1 page when no stacks are kept).
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} late_walks_map_t;
extern late_walks_map_t late_walks SEC(".maps");

/*
 * Each followed process's image, by tgid: exec_seq's value at its last
 * exec (absent: 0, never exec'ed while followed).  A process's mapping
 * array is good while its header says the same, so one process's exec
 * leaves the others' tables alone.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, SP_UNWIND_MAX_PROCS);
} exec_seqs_map_t;
extern exec_seqs_map_t exec_seqs SEC(".maps");

/*
 * Each process's layout, by tgid: a hash of its mapping array, the frame
 * cache's tag (see above).  Written by the loader after the array,
 * removed by an exec (target_exec) and an exit (follow_exit).
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, SP_UNWIND_MAX_PROCS);
} proc_layouts_map_t;
extern proc_layouts_map_t proc_layouts SEC(".maps");

/*
 * A process's tables no longer describe its memory (an exec, the start of
 * a dlclose): a new exec_seq for it, so its mapping array is unused until
 * the loader installs another, and its frame cache layout dropped.  Two
 * marks at once may read one value: each differs from before.
 */
static __always_inline void process_tables_stale(__u32 tgid)
{
	__u32 seq;

	__sync_fetch_and_add(&exec_seq, 1);
	seq = exec_seq;
	bpf_map_update_elem(&exec_seqs, &tgid, &seq, BPF_ANY);
	bpf_map_delete_elem(&proc_layouts, &tgid);
}

/*
 * --children: a forked child's parent (follow.bpf.c).  Until the loader
 * has read the child's mappings, its walks use its parent's: a fork
 * copies the address space, so the child's first waits are named too.
 * An exec of the child makes them stale (exec_seqs).
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, SP_UNWIND_MAX_PROCS);
} forked_from_map_t;
extern forked_from_map_t forked_from SEC(".maps");

/*
 * Inner maps give their sizes, not BTF types: clang leaves a type seen
 * only through an inner map's pointer as a forward declaration.
 */
struct unwind_rows_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct sp_unwind_row));
	__uint(max_entries, 1);
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, SP_UNWIND_MAX_TABLES);
	__array(values, struct unwind_rows_inner);
} unwind_tables_map_t;
extern unwind_tables_map_t unwind_tables SEC(".maps");

struct proc_mappings_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct sp_mapping));
	__uint(max_entries, 1);
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__type(key, __u32);		/* tgid */
	__uint(max_entries, SP_UNWIND_MAX_PROCS);
	__array(values, struct proc_mappings_inner);
} proc_mappings_map_t;
extern proc_mappings_map_t proc_mappings SEC(".maps");

/* Tables by file, for addresses no mapping array places (bpf/unwind.h). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sp_file_key);
	__type(value, struct sp_file_table);
	__uint(max_entries, SP_UNWIND_MAX_FILES);
} unwind_files_map_t;
extern unwind_files_map_t unwind_files SEC(".maps");

struct frame_cache_entry {
	__u64 tag;		/* lookup address ^ rule ^ layout mix */
	__u64 rule;		/* packed, see RULE_* */
};

#define FRAME_CACHE_BITS	14

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct frame_cache_entry);
	__uint(max_entries, 1 << FRAME_CACHE_BITS);
} frame_cache_map_t;
extern frame_cache_map_t frame_cache SEC(".maps");

/* Sized, not typed: the loader cuts the value to --stack-depth frames. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u64));	/* stack id */
	__uint(value_size, sizeof(struct sp_stack));
	__uint(max_entries, 16384);
} stacks_map_t;
extern stacks_map_t stacks SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sp_stack);
	__uint(max_entries, 1);
} walk_scratch_map_t;
extern walk_scratch_map_t walk_scratch SEC(".maps");

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sp_func_range);
	__uint(max_entries, 1);
} libc_funcs_map_t;
extern libc_funcs_map_t libc_funcs SEC(".maps");

/*
 * A rule, packed in 64 bits for the frame cache:
 *   0-31  CFA offset (s32)        32-47  rbp offset (s16)
 *   48-50 kind (RULE_K_*)         51-52  rbp rule (enum sp_unwind_rbp_rule)
 *   53    libc frame   54  --skip frame   55  in __lll_lock_wait_private
 *   56-59 libc frame: libc's lock class (enum sp_func_class);
 *         other frames: a runtime lock function's kind (type + 1)
 *   60    other frames: that kind is the whole operation's
 */
enum rule_kind {
	RULE_K_NONE = 0,	/* never cached: an empty entry */
	RULE_K_RSP,		/* CFA = rsp + offset */
	RULE_K_RBP,		/* CFA = rbp + offset */
	RULE_K_END,		/* the outermost frame: no caller */
	RULE_K_STOP,		/* no rule that can be applied here */
	RULE_K_ANON,		/* in no file-backed mapping */
	RULE_K_STALE,		/* the tables describe another image */
};

#define RULE_KIND_SHIFT		48
#define RULE_RBP_SHIFT		51
#define RULE_LIBC		(1ull << 53)
#define RULE_SKIP		(1ull << 54)
#define RULE_LLL		(1ull << 55)
#define RULE_CLASS_SHIFT	56

#define RULE_KIND(r)		((__u32)((r) >> RULE_KIND_SHIFT) & 7)
#define RULE_RBP(r)		((__u32)((r) >> RULE_RBP_SHIFT) & 3)
#define RULE_CFA_OFF(r)		((__s64)(__s32)(__u32)(r))
#define RULE_RBP_OFF(r)		((__s64)(__s16)(__u16)((r) >> 32))
#define RULE_CLASS(r)		((__u32)((r) >> RULE_CLASS_SHIFT) & 0xf)
#define RULE_WRAP_SHIFT		56
#define RULE_WRAP(r)		((__u32)((r) >> RULE_WRAP_SHIFT) & 0xf)
#define RULE_WHOLE		(1ull << 60)

static __always_inline __u64 rule_make(__u32 kind, __s32 cfa_off,
				       __u32 rbp_rule, __s32 rbp_off)
{
	return (__u64)(__u32)cfa_off | (__u64)(__u16)rbp_off << 32 |
	       (__u64)kind << RULE_KIND_SHIFT |
	       (__u64)rbp_rule << RULE_RBP_SHIFT;
}

/* Why a walk was cut short for a table not read yet (unwind_result.cut). */
enum unwind_cut {
	UNWIND_CUT_NONE = 0,
	UNWIND_CUT_LIBC,	/* still in libc: counted as unwind stopped */
	UNWIND_CUT_STACK,	/* the kept stack stopped: counted as such */
	UNWIND_CUT_CALLSITE,	/* only the --skip search for the call site */
};

/* What a walk gives the program that ran it. */
struct unwind_result {
	__u64 callsite;		/* the first frame outside libc and --skip */
	__u64 stack_id;		/* 0: no stack kept */
	__u32 libc_class;	/* enum sp_func_class of the outermost libc frame */
	__u32 left_libc;	/* else callsite is inside libc */
	__u32 lll;		/* the wait is in __lll_lock_wait_private */
	__u16 wrap_type;	/* the innermost typed runtime lock function
				   crossed before the call site: type + 1 */
	__u16 whole_type;	/* the outermost one whose kind is the whole
				   operation's (WRAPPER_F_WHOLE): type + 1 */
	__u32 cut;		/* the walk stopped at a file whose table is
				   not read yet: worth walking again when the
				   wait ends (unwind_rewalked) */
};

/* unwind_user's flags. */
#define UNWIND_KEEP		1	/* keep --stack-depth frames */
#define UNWIND_AT_RETURN	2	/* pc is a return address (a return
					   probe): looked up at pc - 1 */
#define UNWIND_LATE		4	/* the last walk of a wait: a stack
					   still cut by a table not read yet
					   keeps its raw frames (late_walks) */
#define UNWIND_RELEASE		8	/* a release's walk (--blame): a stop
					   inside libc is no wait left there
					   (SP_CNT_RELEASE_STOPPED) */

/*
 * Walks from (pc, sp, bp) in the current task; keeps the stack when
 * --stack-depth asks for one and flags has UNWIND_KEEP.  The call site
 * is the first frame outside libc and outside --skip (the first outside
 * libc if every kept frame is a --skip one).  A global function
 * (unwind.bpf.c): verified once per program, whatever calls it; its
 * miss path, frame_rule_lookup, is one too (verified once, not at each
 * of its calls in the walk's loop: 169,000 -> 18,000 instructions for
 * futex_enter, 0.4-1 s less per program to load here).  0, or -1 when
 * res is NULL.
 */
int unwind_user(__u64 pc, __u64 sp, __u64 bp, __u32 flags,
		struct unwind_result *res);

/*
 * A walk cut short (res->cut) done again when its wait ended, from the
 * same frames: one of the two is cancelled from the counters (the first
 * if the second went through, else the second), so each wait counts one
 * walk.  0, or -1 when a result is NULL.
 */
int unwind_rewalked(const struct unwind_result *first,
		    const struct unwind_result *again);

#endif
