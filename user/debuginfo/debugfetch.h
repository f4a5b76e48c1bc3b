/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug files of stripped modules from debuginfod servers
 * (DEBUGINFOD_URLS), with elfutils' client: a time limit per module, the
 * client's cache, and a sentence when a fetch was slow or failed.
 */
#ifndef SYNCPROF_DEBUGFETCH_H
#define SYNCPROF_DEBUGFETCH_H

#include <stddef.h>
#include <stdint.h>

struct debugfetch;

/* How long one module's fetch may take, unless DEBUGINFOD_MAXTIME says. */
#define DEBUGFETCH_LIMIT_S 10.0

/*
 * *out NULL when DEBUGINFOD_URLS is unset or empty, or elfutils' client
 * library cannot be loaded (said on stderr).  limit_s: how long one
 * module's fetch may take; elfutils' DEBUGINFOD_MAXTIME (seconds), when
 * set, takes its place.
 */
int debugfetch__new(double limit_s, struct debugfetch **out);
void debugfetch__free(struct debugfetch *f);
/*
 * The debug file of the module with this build ID: an open fd, and its
 * path in *path (malloc'ed); or -errno (-EFBIG: past the size limit,
 * which module_size, the module's own, sets; -ENOEXEC: the reply was not
 * the debug file, and is removed from the cache).  module names it in
 * sentences.
 */
int debugfetch__find(struct debugfetch *f, const unsigned char *id,
		     size_t len, const char *module, uint64_t module_size,
		     char **path);
/*
 * What the fetches so far call for saying (slow, failed, given up), one
 * sentence, when it changed since the last call; else NULL.
 */
const char *debugfetch__news(struct debugfetch *f);

#endif
