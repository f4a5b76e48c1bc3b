/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for addresses in the target, from outside and without frame
 * pointers: a call site becomes module, function, file and line (through
 * inlined wrappers, to the user's own line); a lock object becomes the
 * global or static variable that holds it.
 */
#ifndef SYNCPROF_SYMBOLIZER_H
#define SYNCPROF_SYMBOLIZER_H

#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

struct symbol_info {
	const char *module;	/* path in the target, NULL if unknown */
	uint64_t module_offset;	/* file offset of the address in module */
	const char *function;	/* demangled, NULL if unknown */
	uint64_t function_offset; /* address - function start */
	const char *file;	/* source file of the call, NULL if unknown */
	unsigned int line;	/* 0 if unknown */
};

/*
 * Reads the target's modules now, so later lookups work after it exits.
 * debuginfo_path: where to look for separate debug files, in libdwfl's
 * syntax (NULL: ":.debug:/usr/lib/debug" and the target's own root).
 */
int symbolizer__new(pid_t pid, const char *debuginfo_path,
		    struct symbolizer **out);
/*
 * Names addresses of one ELF file (an absolute path) as if a process had
 * mapped all of it at base, from file offset 0: no process is read.  For
 * files whose process is gone, and for the fuzzer.
 */
int symbolizer__new_file(const char *path, uint64_t base,
			 const char *debuginfo_path, struct symbolizer **out);
void symbolizer__free(struct symbolizer *sym);
/* Adds what the target mapped since; call now and then while it lives. */
int symbolizer__refresh(struct symbolizer *sym);
/* The target exited: never read its /proc files again (the PID may be reused). */
void symbolizer__freeze(struct symbolizer *sym);
/*
 * Names the call site whose return address is `ret_addr` (looked up at
 * ret_addr - 1).  Strings stay valid until symbolizer__free.  -ENOENT:
 * no module maps it (info->module is NULL then).
 */
int symbolizer__callsite(struct symbolizer *sym, uint64_t ret_addr,
			 struct symbol_info *info);
/* "name" or "name+0xoff" of the data symbol holding addr, or NULL. */
const char *symbolizer__object(struct symbolizer *sym, uint64_t addr);

#endif
