// SPDX-License-Identifier: GPL-2.0
/*
 * Source locations through inlined calls, from DWARF.
 *
 * A call site is looked up at ret - 1.  Its line is the first location,
 * from the innermost outward, that is not in a system header: the line
 * table's line, then the call sites of each inlined function around it.
 * So std::lock_guard -> std::mutex::lock -> __gthread_mutex_lock, all
 * inlined, resolve to the user's lock_guard line, while a user's own
 * inline helper keeps its own line.
 *
 * A stack's frames (srclines__frames) keep every inlined call instead:
 * one frame per DW_TAG_inlined_subroutine around pc, each at the line
 * the line table or the inner call's DW_AT_call_file/line gives, then
 * the real function, as eu-addr2line -i prints them.  Names are
 * demangled by libiberty (demangle.c): C++, and Rust's legacy and v0
 * manglings.  The scopes around pc come from the module's index
 * (modindex.c), not from a walk of the CU each time.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "demangle.h"
#include "modindex.h"
#include "srclines.h"
#include "srcpath.h"
#include "symcache.h"

/* A function's name from its DIE: linkage name demangled, else its name. */
static char *die_function_name(Dwarf_Die *die)
{
	static const unsigned int linkage_attrs[] = {
		DW_AT_linkage_name, DW_AT_MIPS_linkage_name,
	};
	Dwarf_Attribute attr;
	const char *name;

	for (size_t i = 0; i < 2; i++) {
		name = dwarf_formstring(dwarf_attr_integrate(die, linkage_attrs[i],
							     &attr));
		if (name)
			return demangle__name(name);
	}
	name = dwarf_diename(die);
	return name ? strdup(name) : NULL;
}

static bool is_function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * file:line of pc through the inline chain (see the top of this file).
 * *inline_scope is set when the chosen line lies in an inlined function
 * (its DIE names the function), left NULL for the real function.
 */
void srclines__callsite(struct symcache *strings, Dwfl_Module *mod,
			struct modindex *idx, Dwarf_Addr pc,
			struct symbol_info *info, char **inline_function)
{
	Dwfl_Line *line = modindex__dwarf_usable(idx) ?
			  dwfl_module_getsrc(mod, pc) : NULL;
	Dwarf_Die *scopes = NULL, *cudie, cu_mem;
	Dwarf_Files *files = NULL;
	const char *file;
	size_t nfiles = 0;
	int lineno = 0, nscopes;

	*inline_function = NULL;
	if (!line)
		return;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file)
		return;
	nscopes = idx ? modindex__scopes(idx, pc, &scopes) : 0;
	cudie = nscopes > 0 ? dwarf_diecu(&scopes[nscopes - 1], &cu_mem, NULL, NULL)
			    : NULL;
	if (!cudie) {
		Dwarf_Addr bias;

		cudie = dwfl_module_addrdie(mod, pc, &bias);
	}
	if (cudie)
		dwarf_getsrcfiles(cudie, &files, &nfiles);

	/* The location inside scopes[at]; walk out while it is a system header. */
	int at = 0;

	while (file && srcpath__is_system(file) && at < nscopes) {
		Dwarf_Attribute attr;
		Dwarf_Word call_file, call_line;
		int next;

		while (at < nscopes && dwarf_tag(&scopes[at]) != DW_TAG_inlined_subroutine) {
			if (dwarf_tag(&scopes[at]) == DW_TAG_subprogram)
				at = nscopes;	/* the real function: no caller here */
			else
				at++;
		}
		if (at >= nscopes)
			break;
		if (dwarf_formudata(dwarf_attr(&scopes[at], DW_AT_call_file, &attr), &call_file) ||
		    dwarf_formudata(dwarf_attr(&scopes[at], DW_AT_call_line, &attr), &call_line) ||
		    !files)
			break;
		/* The call of inline `at` lies in the next function scope out. */
		for (next = at + 1; next < nscopes && !is_function_scope(&scopes[next]); next++)
			;
		file = dwarf_filesrc(files, call_file, NULL, NULL);
		lineno = (int)call_line;
		at = next;
	}
	if (file) {
		Dwarf_Attribute attr;
		const char *comp_dir = cudie ? dwarf_formstring(
			dwarf_attr(cudie, DW_AT_comp_dir, &attr)) : NULL;

		info->file = symcache__own(strings,
					   srcpath__join(comp_dir, file));
		info->line = lineno > 0 ? (unsigned int)lineno : 0;
	}
	/* Name the inlined function the line is in, if it is one. */
	for (int i = at; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			*inline_function = die_function_name(&scopes[i]);
			break;
		}
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
	}
	free(scopes);
}

/*
 * The frames of the code at pc, innermost first, as eu-addr2line -i
 * gives them: the line table names the innermost location; each inlined
 * subroutine around it is a frame whose caller's location is its
 * DW_AT_call_file:DW_AT_call_line; the subprogram they were inlined into
 * is the last frame.  base holds what all frames share (module, offset)
 * and the ELF symbol's name for the outermost one.
 */
int srclines__frames(struct symcache *strings, Dwfl_Module *mod,
		     struct modindex *idx, Dwarf_Addr pc,
		     const struct symbol_info *base,
		     struct symbol_frame **out, size_t *n)
{
	Dwfl_Line *line = modindex__dwarf_usable(idx) ?
			  dwfl_module_getsrc(mod, pc) : NULL;
	Dwarf_Die *scopes = NULL, *cudie = NULL, cu_mem;
	Dwarf_Files *files = NULL;
	const char *file = NULL, *comp_dir = NULL;
	size_t nfiles = 0, cap = 0;
	int lineno = 0, nscopes, err = 0;
	Dwarf_Attribute attr;

	*out = NULL;
	*n = 0;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	nscopes = idx ? modindex__scopes(idx, pc, &scopes) : 0;
	if (nscopes > 0)
		cudie = dwarf_diecu(&scopes[nscopes - 1], &cu_mem, NULL, NULL);
	if (!cudie && modindex__dwarf_usable(idx)) {
		Dwarf_Addr bias;

		cudie = dwfl_module_addrdie(mod, pc, &bias);
	}
	if (cudie) {
		dwarf_getsrcfiles(cudie, &files, &nfiles);
		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir,
						       &attr));
	}
	for (int i = 0; i <= nscopes; i++) {
		int tag = i < nscopes ? dwarf_tag(&scopes[i]) : DW_TAG_subprogram;
		struct symbol_frame *f;
		Dwarf_Word call_file, call_line;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;	/* a lexical block */
		if (array__grow(out, &cap, *n + 1, sizeof(**out))) {
			err = -ENOMEM;
			break;
		}
		f = &(*out)[(*n)++];
		*f = (struct symbol_frame){ .info = *base };
		if (i < nscopes) {
			int decl = 0;

			if (!dwarf_decl_line(&scopes[i], &decl) && decl > 0)
				f->decl_line = (unsigned int)decl;
		}
		if (file) {
			f->info.file = symcache__own(
				strings, srcpath__join(comp_dir, file));
			f->info.line = lineno > 0 ? (unsigned int)lineno : 0;
		}
		if (tag == DW_TAG_subprogram) {
			/* The real function: the ELF symbol names it, as a
			   call site; else its DIE. */
			if (!f->info.function && i < nscopes)
				f->info.function = symcache__own(
					strings, die_function_name(&scopes[i]));
			break;
		}
		f->inlined = true;
		f->info.function = symcache__own(
			strings, die_function_name(&scopes[i]));
		f->info.function_offset = 0;
		/* Where it was inlined: the location in the next frame out. */
		file = NULL;
		lineno = 0;
		if (files &&
		    !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr),
				     &call_file) &&
		    !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr),
				     &call_line)) {
			file = dwarf_filesrc(files, call_file, NULL, NULL);
			lineno = (int)call_line;
		}
	}
	free(scopes);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}
