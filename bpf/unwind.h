/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwind table that crosses into BPF: one row per address range of a
 * library with a single x86-64 CFI rule, computed by user/unwind/cfitable.c from
 * .eh_frame (and .debug_frame) and applied by the BPF program to step out
 * of frames that keep no frame pointer.  Fixed-width types only.
 *
 * Applying a row to a frame (pc, rsp, rbp), with pc a file-relative
 * virtual address (pc - load bias; ra - 1 for a return address):
 *	cfa        = (cfa_reg == SP_UNWIND_CFA_RSP ? rsp : rbp) + cfa_offset
 *	caller ra  = *(u64 *)(cfa - 8)
 *	caller rsp = cfa
 *	caller rbp = *(u64 *)(cfa + rbp_offset)	SP_UNWIND_RBP_AT_CFA
 *		     rbp			SP_UNWIND_RBP_SAME
 *		     unknown			SP_UNWIND_RBP_UNDEFINED
 * A row with SP_UNWIND_F_UNSUPPORTED set stops the walk; its rule fields
 * are zero and the other flags say why.  No row for pc: no CFI there.
 */
#ifndef SYNCPROF_UNWIND_ABI_H
#define SYNCPROF_UNWIND_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The register the CFA is computed from.  0 is never a usable rule. */
enum sp_unwind_cfa_reg {
	SP_UNWIND_CFA_NONE = 0,		/* unsupported row */
	SP_UNWIND_CFA_RSP = 1,		/* DWARF register 7 */
	SP_UNWIND_CFA_RBP = 2,		/* DWARF register 6 */
};

/* Where the caller's rbp is. */
enum sp_unwind_rbp_rule {
	SP_UNWIND_RBP_SAME = 0,		/* unchanged by this frame */
	SP_UNWIND_RBP_AT_CFA = 1,	/* saved at cfa + rbp_offset */
	SP_UNWIND_RBP_UNDEFINED = 2,	/* clobbered: not recoverable */
};

/*
 * SP_UNWIND_F_UNSUPPORTED: do not apply the row, stop the walk.  The
 * other flags say why and come with it:
 *   CFA_EXPR      the CFA is not register + int32 (a DWARF expression)
 *   CFA_REG       the CFA is based on neither rsp nor rbp
 *   RA            the return address is not saved at CFA-8
 *   RA_UNDEFINED  no return address: the outermost frame (thread start)
 *   RBP           rbp is restored from a register or by an expression
 *   RSP           the caller's rsp is not the CFA
 *   SIGNAL        a signal frame: its ra is exact, not after a call
 *   ERROR         libdw could not evaluate the CFI there
 */
enum sp_unwind_flags {
	SP_UNWIND_F_UNSUPPORTED = 1 << 0,
	SP_UNWIND_F_CFA_EXPR = 1 << 1,
	SP_UNWIND_F_CFA_REG = 1 << 2,
	SP_UNWIND_F_RA = 1 << 3,
	SP_UNWIND_F_RA_UNDEFINED = 1 << 4,
	SP_UNWIND_F_RBP = 1 << 5,
	SP_UNWIND_F_RSP = 1 << 6,
	SP_UNWIND_F_SIGNAL = 1 << 7,
	SP_UNWIND_F_ERROR = 1 << 8,
};

/*
 * What a row says about its code besides the rule (sp_unwind_row.attrs):
 * set by the loader per session, never by the CFI.
 */
enum sp_unwind_attrs {
	SP_UNWIND_A_SKIP = 1 << 0,	/* in a --skip function: part of the
					   lock implementation */
	SP_UNWIND_A_WHOLE = 1 << 12,	/* its kind (bits 8-11) is the whole
					   operation's (a barrier, a join): it
					   wins over the lock waited on inside */
};

/*
 * Bits 8-11 of attrs: the lock kind of a runtime's lock function
 * (enum sp_lock_type + 1; 0: none), from the built-in wrapper table;
 * bit 12 is SP_UNWIND_A_WHOLE.  Never set in a libc module's rows.
 */
#define SP_UNWIND_A_TYPE_SHIFT	8
#define SP_UNWIND_A_TYPE_MASK	0xfu
#define SP_UNWIND_A_TYPE(type)	(((__u32)(type) + 1) << SP_UNWIND_A_TYPE_SHIFT)

/* One rule over [start, end), file-relative virtual addresses. */
struct sp_unwind_row {
	__u64 start;
	__u64 end;
	__s32 cfa_offset;
	__s32 rbp_offset;	/* for SP_UNWIND_RBP_AT_CFA, else 0 */
	__u8 cfa_reg;		/* enum sp_unwind_cfa_reg */
	__u8 rbp_rule;		/* enum sp_unwind_rbp_rule */
	__u16 flags;		/* enum sp_unwind_flags */
	__u32 attrs;		/* enum sp_unwind_attrs; 0 from cfitable */
};

/*
 * Tables in the kernel (user/unwind/unwinder.c fills them, the walk in
 * bpf/unwind/unwind.bpf.h reads them):
 *   unwind_tables   slot -> one module build's rows, sorted by start
 *   proc_mappings   tgid -> that process's executable mappings, sorted
 *                   by start, each naming its module's slot and bias
 * Entry 0 of a process's mapping array is a header: start = how many
 * mappings follow it, end = the exec sequence (see exec_seq) of the
 * image they describe; a walk in another image stops.
 */
#define SP_TABLE_NONE		0xffffffffu	/* a mapping without rows */
#define SP_UNWIND_MAX_TABLES	1024		/* module builds */
#define SP_UNWIND_MAX_PROCS	4096		/* processes with mappings */

enum sp_mapping_flags {
	SP_MAP_F_LIBC = 1 << 0,		/* the lock implementation (libc,
					   libpthread): not a call site */
	SP_MAP_F_LIBC_MODEL = 1 << 1,	/* the libc whose lock functions
					   libc_funcs classifies */
	SP_MAP_F_FP = 1 << 2,		/* no CFI: frame-pointer steps where
					   the table has no row */
};

struct sp_mapping {
	__u64 start;		/* runtime [start, end) */
	__u64 end;
	__u64 bias;		/* runtime address - file virtual address */
	__u32 table;		/* unwind_tables slot, or SP_TABLE_NONE */
	__u32 flags;		/* enum sp_mapping_flags */
	__u32 n_rows;		/* rows in the table */
	__u32 pad;
};

/*
 * Tables by file (the files map: struct sp_file_key -> sp_file_table),
 * for addresses the process's mapping array does not place yet: just
 * after an exec or a dlopen, before the loader has read the new maps, or
 * once the main thread has exited (its maps file is empty).  The walk
 * finds the address's VMA itself (bpf_find_vma), and with it the file
 * and the file offset; the loader puts every file it has read here, so
 * libc, ld.so and every library read once are walked at once in a new
 * image.  A file offset in [off_start, off_end) is the file virtual
 * address offset + vaddr_delta (its executable segment's p_vaddr -
 * p_offset).
 */
#define SP_UNWIND_MAX_FILES	4096

struct sp_file_key {
	__u64 ino;
	__u32 dev;		/* the kernel's encoding: major << 20 | minor */
	__u32 pad;
};

struct sp_file_table {
	__u64 off_start;	/* the executable segment's file range */
	__u64 off_end;
	__s64 vaddr_delta;	/* file virtual address - file offset */
	__u32 table;		/* unwind_tables slot, or SP_TABLE_NONE */
	__u32 flags;		/* enum sp_mapping_flags */
	__u32 n_rows;
	__u32 pad;
};

/* How an interned stack ends beyond its last frame (user/unwind/stacktab.h). */
enum sp_stack_end {
	SP_STACK_COMPLETE = 0,	/* the thread's outermost frame */
	SP_STACK_TRUNCATED = 1,	/* --stack-depth frames kept */
	SP_STACK_STOPPED = 2,	/* no rule to go on: JIT or anonymous code,
				   no CFI, a broken chain */
};

#define SP_STACK_MAX_DEPTH	127

/*
 * A stack, interned: the stacks map holds one per stack id (a hash of
 * the frames), with room for --stack-depth pcs (the map's value size).
 * pcs are absolute return addresses, innermost first, from the first
 * frame outside libc.
 */
struct sp_stack {
	__u32 n;
	__u32 end;		/* enum sp_stack_end */
	__u64 pcs[SP_STACK_MAX_DEPTH];
};

/*
 * A late walk: a stack cut at a module whose table the loader had not
 * read when the wait ended (a library dlopen'ed a moment before), with
 * the raw frames beyond the cut: the registers at the cut frame and the
 * stack memory above its sp.  The loader finishes the walk with the
 * table once it is read (user/unwind/latewalk.c) and files the wait's
 * stack, interned under `id` (the frames up to the cut, as kept), with
 * its whole frames.
 */
#define SP_LATE_STACK_BYTES	4096
#define SP_LATE_STACK_SHORT	1024	/* when 4096 bytes run past the stack */

struct sp_late_walk {
	__u64 id;		/* the stack id the wait was filed under */
	__u64 pc;		/* the cut frame: its pc, kept as the last frame */
	__u64 sp;
	__u64 bp;
	__u32 tgid;
	__u32 n;		/* frames kept, the cut frame included */
	__u32 bp_known;
	__u32 lookup_ret;	/* the cut frame's rule is looked up at pc - 1 */
	__u32 bytes;		/* stack bytes read from sp */
	__u32 pad;
	__u64 pcs[SP_STACK_MAX_DEPTH];	/* the n frames kept */
	__u8 stack[SP_LATE_STACK_BYTES];
};

/* The value size of a stack kept `depth` frames deep. */
#define SP_STACK_SIZE(depth)	(8 + 8 * (depth))

#endif
