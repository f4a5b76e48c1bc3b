/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where code is in its source, from DWARF: a call site's file and line
 * through the inlined calls around it, and a pc's source frames, one per
 * inlined call, as eu-addr2line -i prints them.
 */
#ifndef SYNCPROF_SRCLINES_H
#define SYNCPROF_SRCLINES_H

#include <elfutils/libdwfl.h>
#include <stddef.h>

#include "symbolinfo.h"

struct modindex;
struct symcache;

/*
 * Sets info->file and info->line of the code at pc (a module address,
 * ret - 1 for a call site): the first location, from the innermost
 * outward, that is not in a system header.  *inline_function: the
 * inlined function that location lies in (malloc'ed), NULL for the real
 * function.  idx: mod's index (NULL: none).  Strings are kept by strings.
 */
void srclines__callsite(struct symcache *strings, Dwfl_Module *mod,
			struct modindex *idx, Dwarf_Addr pc,
			struct symbol_info *info, char **inline_function);
/*
 * The frames of the code at pc, innermost first (*out malloc'ed, *n of
 * them): each inlined call, then the function it was inlined into.
 * base: what every frame shares (module, offset) and the ELF symbol's
 * name for the outermost one.  0 or -ENOMEM.
 */
int srclines__frames(struct symcache *strings, Dwfl_Module *mod,
		     struct modindex *idx, Dwarf_Addr pc,
		     const struct symbol_info *base,
		     struct symbol_frame **out, size_t *n);

#endif
