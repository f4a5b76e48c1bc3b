// SPDX-License-Identifier: GPL-2.0
/*
 * libiberty's demangler, the one binutils and gdb use: one call knows
 * C++ and both Rust manglings.  Legacy Rust symbols are valid C++ names
 * too (std::sys::...::lock_contended::h0123456789abcdef), so Rust is
 * tried first, as cplus_demangle does in DMGL_AUTO.  Rejected: the C++
 * runtime's __cxa_demangle (no Rust) and a Rust demangler of our own.
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

char *demangle__name(const char *name)
{
	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) {
		char *out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
						 DMGL_AUTO);

		if (out)
			return out;
	}
	return strdup(name);
}

char *demangle__symbol(const char *name)
{
	const char *at = strchr(name, '@');
	char *bare, *out;

	if (!at || at == name)
		return demangle__name(name);
	bare = strndup(name, (size_t)(at - name));
	if (!bare)
		return NULL;
	out = demangle__name(bare);
	free(bare);
	return out;
}
