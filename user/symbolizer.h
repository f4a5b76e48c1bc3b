/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for addresses in the target: the module that maps a call site and
 * the offset into it.  The module list is taken at attach and re-read on a
 * miss while the target lives, so a report after the target exited still
 * names every address seen before.
 */
#ifndef SYNCPROF_SYMBOLIZER_H
#define SYNCPROF_SYMBOLIZER_H

#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

struct symbol_info {
	const char *module;	/* path in the target, NULL if unknown */
	uint64_t module_offset;	/* file offset in module */
	const char *function;	/* NULL if unknown */
	const char *file;	/* NULL if unknown */
	unsigned int line;	/* 0 if unknown */
};

int symbolizer__new(pid_t pid, struct symbolizer **out);
void symbolizer__free(struct symbolizer *sym);
/* Fills *info; strings stay valid until symbolizer__free.  -ENOENT: unmapped. */
int symbolizer__lookup(struct symbolizer *sym, uint64_t addr,
		       struct symbol_info *info);

#endif
