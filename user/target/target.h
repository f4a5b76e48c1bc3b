/* SPDX-License-Identifier: GPL-2.0 */
/* The profiled process: found by PID, or launched and held at its start. */
#ifndef SYNCPROF_TARGET_H
#define SYNCPROF_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target;

/* Checks that PID is a live user-space process and opens a pidfd on it. */
int target__attach(pid_t pid, struct target **out);
/* The signal state a launched command starts with: the caller's own. */
struct target_signals {
	sigset_t mask;		/* blocked signals */
	bool pipe_ignored;	/* SIGPIPE ignored (the others are reset by exec) */
};

/*
 * Runs argv with the new process held (ptrace) right after its dynamic
 * loader mapped libc, before any code of the program or its libraries ran.
 * The command starts with the signal mask and SIGPIPE disposition in sig.
 */
int target__launch(char *const argv[], const struct target_signals *sig,
		   struct target **out);
/* Whether the target has exited (its pidfd says so; not reaped yet). */
bool target__exited(const struct target *t);
/*
 * Whether the target has exited or is on its way out (its last thread
 * exiting, its memory already gone, before the pidfd says so); reads
 * its name again on the way, as target__refresh.
 */
bool target__exiting(struct target *t);
/* Reads the target's name again (an exec changes it); kept when gone. */
void target__refresh(struct target *t);
/* Lets a launched process go; a no-op for an attached one. */
int target__resume(struct target *t);
/*
 * The file that holds the target's pthread functions (libpthread when it
 * defines them, else libc), as a path syncprof can open: through
 * /proc/PID/root, or /proc/PID/map_files when the file was replaced.
 */
int target__pthread_library(struct target *t, char *path, size_t len);
/* Whether it maps a libc with the pthread functions now; says nothing. */
bool target__maps_pthread(const struct target *t);
/* The target's dynamic loader (ld.so), as target__pthread_library. */
int target__loader_library(struct target *t, char *path, size_t len);
pid_t target__pid(const struct target *t);
const char *target__comm(const struct target *t);
/*
 * The process's command line, arguments separated by spaces, cut to len
 * (not sanitized: it is the target's text).
 */
int target__cmdline(const struct target *t, char *buf, size_t len);
/* Readable when the process exits. */
int target__pidfd(const struct target *t);
/* Collects the exit of a launched process; call once the pidfd is readable. */
int target__reap(struct target *t);
bool target__launched(const struct target *t);
/* Shell-style exit code of a reaped launched process, or -1. */
int target__exit_code(const struct target *t);
/* Frees; a launched process still held is killed, having run nothing. */
void target__free(struct target *t);

#endif
