/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live run's recording (--record DIR, --chrome FILE): the writer runs
 * while the target does; each report printed is noted; at the end the
 * waits are named and written out as uftrace's files, Chrome JSON and
 * the recording's own files (syncprof.events, .names, .meta) that
 * --replay reads.
 */
#ifndef SYNCPROF_RECORDING_H
#define SYNCPROF_RECORDING_H

#include <stdint.h>
#include <sys/types.h>

#include "recmeta.h"
#include "symbolizer.h"

struct recording;

struct recording_config {
	const char *dir;	/* --record DIR, or NULL */
	const char *chrome;	/* --chrome FILE, or NULL */
	int ring_fd;		/* the BPF ring buffer */
	int lost_fd;		/* the BPF map of waits lost per thread */
	pid_t pid;
	const char *comm;
	const char *mode;
	const char *cmdline;	/* syncprof's own */
	uint64_t calibration_ns;
	uint64_t calibration_emulated_ns;
	uint64_t calibration_stepped_ns;
	uint32_t map_size;
	uint32_t ring_size;
};

/*
 * Makes DIR (or empties an older recording there), opens the event log
 * and starts the writer.  Errors are printed.
 */
int recording__start(const struct recording_config *cfg,
		     struct recording **out);
/* When the probes went live: the timeline's start. */
void recording__attached(struct recording *r, uint64_t attach_ns);
/*
 * --record: brings the files in DIR up to date with what the log holds
 * (each second, from the main loop), so that a recording cut short reads.
 * Errors are printed.
 */
int recording__checkpoint(struct recording *r, struct symbolizer *sym);
/* A report was printed (for --replay to print it again). */
int recording__note_report(struct recording *r,
			   const struct recmeta_report *report);
/*
 * Stops the writer, marks the waits the kernel still holds as lost
 * (ring_dropped: the kernel's count of waits the ring had no room for),
 * names the waits and writes every file.  Errors are printed.
 */
int recording__finish(struct recording *r, struct symbolizer *sym,
		      uint64_t ring_dropped);
void recording__free(struct recording *r);

#endif
