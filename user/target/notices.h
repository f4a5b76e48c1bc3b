/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What syncprof cannot see in a target, said once: a Go program's
 * sync.Mutex, a JVM's monitors, full mode on a runtime whose locks are
 * futexes (GLib, Rust, Go, InnoDB), a musl libc.  Read from the target's
 * mappings and its executable's sections and symbols.
 */
#ifndef SYNCPROF_NOTICES_H
#define SYNCPROF_NOTICES_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct notices;

/* What the run measures, as far as the notices care. */
struct notices_run {
	bool full;		/* full mode was asked for */
	bool several;		/* more processes than one are followed */
	bool off_cpu;		/* --off-cpu */
	bool lock_order;	/* --lock-order */
};

/* Looks at the process, for a run that measures what run says. */
int notices__detect(pid_t pid, const struct notices_run *run,
		    struct notices **out);
void notices__free(struct notices *n);
/* Whether process pid's executable was built by Go's toolchain. */
bool notices__go_executable(pid_t pid);
/*
 * The target shows no lock activity but has child processes, and
 * --children was not given: in the list from now on.  The sentence, the
 * first time; else NULL.
 */
const char *notices__children(struct notices *n);
/*
 * The followed threads were blocked blocked_ns over the run, lock_ns of
 * it in the lock waits counted, and most of it elsewhere: --off-cpu
 * would show where.  The sentence, the first time (and not after
 * PostgreSQL's own); else NULL.
 */
const char *notices__off_cpu(struct notices *n, uint64_t blocked_ns,
			     uint64_t lock_ns);
/*
 * A call site in module was named by offset only (no symbol, no debug
 * file): module joins the stripped modules' notice.  The sentence when it
 * changed, else NULL.
 */
const char *notices__offsets(struct notices *n, const char *module);
/*
 * debuginfod's latest trouble (debugfetch__news) replaces the last: the
 * sentence kept, or NULL (none given, no memory).
 */
const char *notices__debuginfod(struct notices *n, const char *text);
/* The notices, one sentence each, in a stable order. */
const char *const *notices__list(const struct notices *n, size_t *count);

#endif
