/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT code's names, by perf's convention: a JIT writes
 * /tmp/perf-PID.map, one "START SIZE NAME" line (hex) per compiled
 * method (a JVM with jcmd PID Compiler.perfmap, or -XX:+DumpPerfMapAtExit;
 * V8, .NET, LuaJIT have their own switches).
 */
#ifndef SYNCPROF_PERFMAP_H
#define SYNCPROF_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/* The map of process pid, read through its root; empty until it exists. */
int perfmap__new(pid_t pid, struct perfmap **out);
void perfmap__free(struct perfmap *m);
/*
 * Re-reads the file if it changed; 0, or -errno (the old table kept).
 * live: through the target's /proc/PID/root, else this machine's /tmp.
 * Only a regular file that the target's user or root owns is read.
 */
int perfmap__refresh(struct perfmap *m, bool live);
/*
 * Replaces the table with text's lines (len bytes, NUL-terminated,
 * taken over: names point into it).  0, -ENOMEM, or -EFBIG when only
 * the first lines were kept.
 */
int perfmap__parse(struct perfmap *m, char *text, size_t len);
/* The name of the code at addr and addr's offset in it, or NULL. */
const char *perfmap__lookup(const struct perfmap *m, uint64_t addr,
			    uint64_t *offset);

#endif
