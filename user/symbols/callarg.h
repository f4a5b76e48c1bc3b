/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A lock passed to a call, named by the type of the pointer it was taken
 * through, from the caller's DWARF call site: "(struct queue *)->lock".
 * For locks no variable holds (heap objects), where the compiler says.
 */
#ifndef SYNCPROF_CALLARG_H
#define SYNCPROF_CALLARG_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>

/*
 * An argument's value as a call site's DW_AT_call_value gives it:
 * register reg (a DWARF register number) plus offset, the register's
 * value now or, entry, at the function's entry.
 */
struct callarg_value {
	unsigned int reg;
	bool entry;		/* DW_OP_entry_value(DW_OP_regN) */
	int64_t offset;
};

/*
 * Reads ops as register + offset: DW_OP_bregN k or
 * DW_OP_entry_value(DW_OP_regN), followed by any of DW_OP_plus_uconst
 * k, DW_OP_litK / DW_OP_constu k / DW_OP_consts k and DW_OP_plus or
 * DW_OP_minus.  location: ops are one entry of a variable's location,
 * where that value form must end in DW_OP_stack_value (without it,
 * DW_OP_bregN k is memory the variable lives in), and DW_OP_regN alone
 * says the register holds it; else ops are a DW_AT_call_value, a
 * plain expression.  0; -ENOTSUP: any other form (a memory read, a
 * constant, the frame base, a piece...).  entry_reg: the register a
 * DW_OP_entry_value at ops[0] reads (libdw reads its block:
 * dwarf_getlocation_attr), -1 if none or another block.
 */
int callarg__parse(const Dwarf_Op *ops, size_t n, int entry_reg,
		   bool location, struct callarg_value *out);

/* Which argument registers a machine passes the first two pointers in. */
struct callarg_abi {
	unsigned int arg_reg[2];	/* DWARF register numbers */
};

/* The ABI of an ELF machine (EM_X86_64, EM_AARCH64); -ENOTSUP: other. */
int callarg__abi(int machine, struct callarg_abi *out);

/*
 * The lock passed at the call whose return address is ret (DWARF
 * addresses of the module), in the scopes that hold ret - 1 (innermost
 * first, the subprogram last; modindex__scopes), named "(TYPE *)->path":
 * the pointer a variable or parameter of type TYPE * holds, plus the
 * lock member's offset in TYPE (memberpath__lock).  condvar: the row
 * waits on a condvar (the first argument); else on a lock, the first
 * argument, or the second when the callee is a condvar wait (its
 * mutex re-acquire).  The member must be a lock of that kind.  *out is
 * malloc'ed.  0; -ENOENT: not known (no call site, an argument computed
 * from memory, no typed variable, not a lock); -ENOMEM.
 */
int callarg__lock_name(Dwarf_Die *scopes, int n_scopes, Dwarf_Addr ret,
		       const struct callarg_abi *abi, bool condvar,
		       char **out);

#endif
