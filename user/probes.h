/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF side: owns the skeleton, attaches the probes, reads the maps. */
#ifndef SYNCPROF_PROBES_H
#define SYNCPROF_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"
#include "syncprof.h"

struct probes;

struct probes_config {
	pid_t tgid;
	bool probe_at_entry;		/* first instruction, not the cheapest site */
	uint64_t calibration_ns[SP_SITE__COUNT]; /* probe time taken out of each call */
	unsigned int map_size;		/* stats map entries */
};

/* Opens, sizes and loads the BPF programs for one target. */
int probes__new(const struct probes_config *cfg, struct probes **out);
/* Attaches entry and return probes to the pthread functions of library. */
int probes__attach(struct probes *p, const char *library);
/* The same for one function only (calibration). */
int probes__attach_function(struct probes *p, const char *library,
			    const char *name);
/*
 * Watches the dynamic loader (the file defining _dl_debug_state) for
 * library loads and unloads; the events come on probes__module_events_fd.
 */
int probes__attach_loader(struct probes *p, const char *loader);
/* Readable when the target's libraries changed; -1 if not watched. */
int probes__module_events_fd(struct probes *p);
/* Takes the pending events; returns how many there were. */
int probes__consume_module_events(struct probes *p);
/* How the kernel runs the probed instruction of an attached function. */
enum sp_site_kind probes__site_kind(const struct probes *p, const char *name);
/* Starts a new report window and reads the stats into a sealed snapshot. */
int probes__read(struct probes *p, struct snapshot **out);
/* Events lost since attach: a full stats map, or no task storage. */
uint64_t probes__dropped(struct probes *p);
void probes__free(struct probes *p);

#endif
