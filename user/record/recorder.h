/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writer: a thread of its own that takes --record's waits off the
 * BPF ring buffer and appends them to the event log, so that neither the
 * reports nor the disk ever hold the kernel side back (a full ring drops
 * and counts, it never waits).  It also notes each thread's name when it
 * first sees the thread.
 */
#ifndef SYNCPROF_RECORDER_H
#define SYNCPROF_RECORDER_H

#include <stdint.h>
#include <sys/types.h>

#include "syncprof.h"

struct recorder;

struct recorder_thread {
	uint32_t tid;
	char comm[16];		/* "" when the thread was gone already */
};

struct recorder_config {
	int ring_fd;		/* the BPF ring buffer map */
	int log_fd;		/* the event log; the recorder owns it */
	pid_t pid;		/* the target, for its threads' names */
};

/* Starts the thread.  0 or -errno (nothing left running then). */
int recorder__start(const struct recorder_config *cfg, struct recorder **out);
/*
 * Stops the thread and takes what is left in the ring; returns the first
 * error of the log's writes.  Events can still be appended afterwards.
 */
int recorder__stop(struct recorder *r);
/* After stop: a record of waits lost with no later wait to carry them. */
int recorder__append(struct recorder *r, const struct sp_wait_event *e);
/* Waits recorded, and waits lost as the recorded events say. */
uint64_t recorder__events(const struct recorder *r);
uint64_t recorder__lost(const struct recorder *r);
/* Threads seen, sorted by tid. */
const struct recorder_thread *recorder__threads(const struct recorder *r,
						size_t *n);
/* While it runs: a copy of the threads seen (free() it). */
int recorder__threads_copy(struct recorder *r, struct recorder_thread **out,
			   size_t *n);
/*
 * Ends the log (after stop): *log_fd is its fd, open, for reading back;
 * returns the first write error.  Free the recorder afterwards.
 */
int recorder__finish(struct recorder *r, int *log_fd);
void recorder__free(struct recorder *r);

#endif
