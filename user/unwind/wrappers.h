/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The built-in list of runtimes' lock functions (wrappers.c): what
 * --skip would name for QEMU, GLib, Rust, libstdc++, PostgreSQL, InnoDB,
 * Abseil, folly and HotSpot, and the lock kind each one implements.
 */
#ifndef SYNCPROF_WRAPPERS_H
#define SYNCPROF_WRAPPERS_H

#include <stddef.h>

#define WRAPPER_UNTYPED	(-1)

enum wrapper_flags {
	/* The kind is the whole operation's (a barrier, a join, a
	   semaphore built from a mutex and a condvar): it wins over the
	   lock the implementation waits on inside. */
	WRAPPER_F_WHOLE = 1 << 0,
	/* The function's slow path has no symbol (a static function of a
	   stripped library): the functions it calls or jumps to that no
	   symbol names, bounded by their .eh_frame FDEs, are part of it. */
	WRAPPER_F_CALLEES = 1 << 1,
};

struct wrapper {
	const char *glob;	/* demangled name, shell glob (as --skip) */
	int type;		/* enum sp_lock_type, or WRAPPER_UNTYPED */
	unsigned int flags;	/* enum wrapper_flags */
	const char *runtime;	/* for docs/stacks.md and -v */
};

/* The table, in match order: the first glob that matches a name wins. */
const struct wrapper *wrappers__table(size_t *n);

#endif
