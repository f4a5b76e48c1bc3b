/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The waits in progress when a report is made: each thread's in-flight
 * state, read from the BPF programs' task storage.
 */
#ifndef SYNCPROF_WAITING_H
#define SYNCPROF_WAITING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"

/*
 * Adds to snap one entry per thread of tgid that is inside a wait at
 * now_ns (CLOCK_MONOTONIC): count 1, its wait so far as wait_ns and
 * max_ns.  map_fd is the task storage of contended mode (struct
 * sp_contended) or of full mode (struct sp_inflight).  0, or -errno when
 * the threads cannot be listed.
 */
int waiting__read(int map_fd, bool contended, pid_t tgid, uint64_t now_ns,
		  struct snapshot *snap);

/* ---- pure parts, for the tests --------------------------------------- */

/*
 * Whether a thread's contended-mode state is an acquisition in progress:
 * blocked now, or stopped by a signal between two of its waits; *key and
 * *ns (blocked so far) when it is.
 */
bool waiting__contended(const struct sp_contended *st, uint64_t now_ns,
			struct sp_key *key, uint64_t *ns);
/* The same for full mode's state of a call in flight. */
bool waiting__full(const struct sp_inflight *call, uint32_t tid,
		   uint64_t now_ns, struct sp_key *key, uint64_t *ns);

#endif
