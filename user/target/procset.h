/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes a run follows (several --pid, --children): each one's
 * PID, parent and name, kept after it exits so reports still name it;
 * the name is read again after an exec.
 */
#ifndef SYNCPROF_PROCSET_H
#define SYNCPROF_PROCSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct procset;

/* A followed process, as a report's header names it. */
struct procset_entry {
	pid_t pid;
	const char *comm;	/* its name now: after an exec, the new one */
	bool exited;
};

int procset__new(struct procset **out);
void procset__free(struct procset *set);
/*
 * Adds pid (parent: 0 for a --pid); false if it is there already and has
 * not exited (a PID reused after an exit is a new entry).  comm: its name
 * as the kernel told it, used when /proc no longer has it (a process
 * that lived a few milliseconds); NULL: /proc only.  A process already
 * gone or a zombie is added as exited.
 */
bool procset__add(struct procset *set, pid_t pid, pid_t parent,
		  const char *comm);
bool procset__has(const struct procset *set, pid_t pid);
/* pid exec'ed: its name is the new program's (comm, else /proc's). */
void procset__exec(struct procset *set, pid_t pid, const char *comm);
void procset__exited(struct procset *set, pid_t pid);
size_t procset__alive(const struct procset *set);
/*
 * Marks exited the processes that ended without an exit event: gone,
 * zombies, or their PID now another process's.  Their PIDs go to gone
 * (up to max); the count is returned.  Only those whose exit might not
 * be told are read, unless all (procset.c).
 */
size_t procset__sweep(struct procset *set, pid_t *gone, size_t max, bool all);
/*
 * The PIDs of exited processes let go since the last call (only the
 * newest exited are kept: procset.c); *pids is the set's, valid until
 * its next change.
 */
size_t procset__forgotten(struct procset *set, pid_t **pids);
/* Every process followed (the newest exited), in the order they came. */
const struct procset_entry *procset__list(const struct procset *set,
					   size_t *n);
/*
 * pid's children now (/proc/PID/task/TID/children), appended to *kids
 * (a growable array of *n, *cap); 0 or -errno.
 */
int procset__children(pid_t pid, pid_t **kids, size_t *n, size_t *cap);

#endif
