/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An address index over one libdwfl module: its symbols and its DWARF
 * functions, sorted, so a lookup is a binary search.
 */
#ifndef SYNCPROF_MODINDEX_H
#define SYNCPROF_MODINDEX_H

#include <elfutils/libdwfl.h>

struct modindex;

/* Indexes mod's symbol table and DWARF functions (both may be absent). */
int modindex__build(Dwfl_Module *mod, struct modindex **out);
void modindex__free(struct modindex *idx);
/*
 * The defined function or data symbol whose extent holds addr (an
 * address in the target), or NULL; *offset is addr - its start.  Of
 * aliases, a global name wins over a weak or local one.
 */
const char *modindex__symbol(const struct modindex *idx, GElf_Addr addr,
			     GElf_Off *offset, int *type);
/*
 * The DWARF scopes holding pc, innermost first, down from the function
 * that contains it: lexical blocks, inlined subroutines, the subprogram
 * last.  Returns how many (0 without DWARF); *scopes is malloc'ed.
 */
int modindex__scopes(const struct modindex *idx, GElf_Addr pc,
		     Dwarf_Die **scopes);
/*
 * The DWARF definition of the global or static variable at addr (the
 * first byte of its ELF symbol), outside functions: *die.  The
 * variables are indexed on the first call, so a module none of whose
 * objects is ever named pays nothing.  0; -ENOENT: none; -ENOMEM.
 */
int modindex__variable(struct modindex *idx, GElf_Addr addr, Dwarf_Die *die);

/*
 * Whether libdw may read this module's DWARF: false when a section that
 * ends with a NUL in every valid file does not (libdw would read past it).
 */
bool modindex__dwarf_usable(const struct modindex *idx);

/*
 * Whether a symbol's name (as dwfl_module_getsym_info gives it, from elf)
 * ends inside its string table; a symbol whose name does not is left out.
 */
bool modindex__name_ends(Elf *elf, const char *name);

#endif
