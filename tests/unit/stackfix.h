/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks for the renderers' tests, made of the test's own functions: the
 * test binary is built -g, so a symbolizer of the test process itself
 * names them (function, this header's file and line).  A stack the
 * kernel keeps is return addresses, innermost first: here "returns"
 * into fix_leaf(), fix_mid() and fix_root(), one byte past their starts.
 */
#ifndef SYNCPROF_TEST_STACKFIX_H
#define SYNCPROF_TEST_STACKFIX_H

#include <stdint.h>
#include <unistd.h>

#include "stacktab.h"
#include "symbolizer.h"

static volatile int fix_sink;

/* Distinct bodies, so no two fold into one. */
static __attribute__((noinline, used)) void fix_leaf(void)
{
	fix_sink = 1;
}

static __attribute__((noinline, used)) void fix_mid(void)
{
	fix_sink = 2;
	fix_leaf();
}

static __attribute__((noinline, used)) void fix_root(void)
{
	fix_sink = 3;
	fix_mid();
	fix_sink = 4;
}

#define FIX_LEAF_RET ((uint64_t)(uintptr_t)&fix_leaf + 1)
#define FIX_MID_RET ((uint64_t)(uintptr_t)&fix_mid + 1)
#define FIX_ROOT_RET ((uint64_t)(uintptr_t)&fix_root + 1)

/* leaf <- mid <- root, complete: as id 0x1d. */
#define FIX_STACK_ID 0x1dull
/* mid <- root, cut at --stack-depth: as id 0x2e. */
#define FIX_SHORT_ID 0x2eull

static inline struct symbolizer *fix_symbolizer(void)
{
	struct symbolizer *sym = NULL;

	if (symbolizer__new(getpid(), NULL, &sym))
		return NULL;
	return sym;
}

static inline struct stacktab *fix_stacktab(void)
{
	const uint64_t full[3] = { FIX_LEAF_RET, FIX_MID_RET, FIX_ROOT_RET };
	const uint64_t shorter[2] = { FIX_MID_RET, FIX_ROOT_RET };
	struct stacktab *tab = NULL;

	if (stacktab__new(&tab) ||
	    stacktab__add(tab, FIX_STACK_ID, full, 3, STACKTAB_END_COMPLETE) ||
	    stacktab__add(tab, FIX_SHORT_ID, shorter, 2,
			  STACKTAB_END_TRUNCATED)) {
		stacktab__free(tab);
		return NULL;
	}
	return tab;
}

#endif
