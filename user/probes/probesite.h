/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where in a function to put its entry probe: the first instruction the
 * kernel emulates (no single step) that every call passes through before
 * the stack pointer or the first argument changes.
 */
#ifndef SYNCPROF_PROBESITE_H
#define SYNCPROF_PROBESITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probesite {
	uint64_t offset;	/* from the function's start */
	bool emulated;		/* false: no such instruction, offset 0 */
	bool entry_emulated;	/* the instruction at offset 0 is emulated */
	bool entry_refused;	/* ... the kernel cannot probe it (LOCK) */
	bool rehit;		/* inside a loop back to the function's start:
				   one call can hit it more than once */
	bool refused;		/* the kernel cannot probe it (a LOCK prefix):
				   the function cannot be probed */
	char insn[200];		/* the instruction, for -v output */
};

/*
 * Decodes code (the function's first bytes, code[0] at vaddr) and picks
 * the site.  Falls back to offset 0 when the prefix cannot be proven safe.
 * When there is no such site on the straight path (a retry loop branches
 * back before it, or the kernel refuses the first instruction:
 * pthread_spin_lock starts with `lock decl (%rdi)`), the site may lie
 * past stores to the object and inside the loop (rehit); a refused entry
 * with no such site sets refused.
 */
int probesite__find(const uint8_t *code, size_t size, uint64_t vaddr,
		    struct probesite *site);
/* Whether the x86-64 uprobe code emulates this instruction (no step). */
bool probesite__is_emulated(const uint8_t *insn, size_t size);

#endif
