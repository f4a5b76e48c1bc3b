/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a name is: a call site's module, function, file and line, one
 * source frame of a stack, the mapping that holds an address.  The
 * symbolizer (symbolizer.h) hands these out; the modules it is made of
 * (srclines.c, symcache.c) fill and keep them.
 */
#ifndef SYNCPROF_SYMBOLINFO_H
#define SYNCPROF_SYMBOLINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbol_info {
	const char *module;	/* path in the target, NULL if unknown */
	uint64_t module_offset;	/* file offset of the address in module */
	const char *function;	/* demangled, NULL if unknown */
	uint64_t function_offset; /* address - function start */
	const char *file;	/* source file of the call, NULL if unknown */
	unsigned int line;	/* 0 if unknown */
};

/* One source frame of an address: inlined calls are frames of their own. */
struct symbol_frame {
	struct symbol_info info;
	bool inlined;		/* inlined into the next frame out */
	unsigned int decl_line;	/* where the function begins, 0 if unknown */
};

/* The executable mapping that holds an address. */
struct symbol_module {
	const char *path;	/* in the target */
	uint64_t start;		/* [start, end) in the target */
	uint64_t end;
	uint64_t offset;	/* file offset of start */
	const unsigned char *build_id;	/* NULL if the file has none */
	size_t build_id_len;
};

#endif
