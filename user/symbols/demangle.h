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

#endif
