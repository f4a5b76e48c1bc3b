/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording kept current on the disk, so that one cut short (SIGKILL, a
 * crash, the OOM killer) is read by --replay and by uftrace up to its last
 * checkpoint: syncprof.meta first (with "partial"), then at every
 * checkpoint (each second, and at the end) what the event log gained is
 * read back from the disk, its spans named, their uftrace records
 * appended, and syncprof.names, uftrace's small files and syncprof.meta
 * put in place whole, in that order: no file names what the others lack.
 */
#ifndef SYNCPROF_CHECKPOINT_H
#define SYNCPROF_CHECKPOINT_H

#include <stdint.h>

#include "outfile.h"
#include "recmeta.h"
#include "recnames.h"
#include "symbolizer.h"

struct checkpoint;

/* log_fd: the event log, read (not closed) from its start. */
int checkpoint__new(struct outdir *dir, int log_fd, uint64_t sid,
		    struct checkpoint **out);
/*
 * Takes in what the log gained, names new spans (sym NULL: not yet) and
 * writes the files; meta as it stands now (partial: its events and lost
 * become the log's).  File errors are printed.
 */
int checkpoint__write(struct checkpoint *c, struct recmeta *meta,
		      struct symbolizer *sym);
/* Waits, and waits lost, that the log held at the last checkpoint. */
uint64_t checkpoint__events(const struct checkpoint *c);
uint64_t checkpoint__lost(const struct checkpoint *c);
/* The spans named so far. */
struct recnames *checkpoint__names(struct checkpoint *c);
void checkpoint__free(struct checkpoint *c);

#endif
