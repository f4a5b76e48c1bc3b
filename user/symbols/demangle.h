/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbol names as people write them: C++ (the Itanium ABI's _Z...) and
 * Rust, legacy (_ZN...17h<hash>E, the hash left out) and v0 (_R...).
 */
#ifndef SYNCPROF_DEMANGLE_H
#define SYNCPROF_DEMANGLE_H

/*
 * The demangled name of `name`, malloc'ed; a copy of name when it is not
 * mangled (a C name) or cannot be demangled.  NULL only without memory.
 */
char *demangle__name(const char *name);
/*
 * An ELF symbol's name as people write it: demangled, without the
 * symbol version glibc's own .symtab spells into it
 * ("__libc_start_main@@GLIBC_2.34").  Malloc'ed; NULL without memory.
 */
char *demangle__symbol(const char *name);

#endif
