/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of a recording (syncprof.names): every distinct span (type,
 * object, call site, stack) its waits fall in, every call site with its
 * module, function, file and line, every object with its symbol; taken
 * from the symbolizer when the recording ends, so a recording names its
 * waits after the target is gone, on another machine too.
 *
 * A span's label is what uftrace and Chrome show: "type object @ site",
 * e.g. "mutex queue_lock @ server.c:118", the site as the table's line
 * style names it (function+0xoff without debug info).
 */
#ifndef SYNCPROF_RECNAMES_H
#define SYNCPROF_RECNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolizer.h"
#include "syncprof.h"

#define RECNAMES_NAME	"syncprof.names"

struct recnames;

struct recnames_span {
	uint64_t object;
	uint64_t callsite;
	uint64_t stack_id;
	uint32_t type;		/* enum sp_lock_type */
};

int recnames__new(struct recnames **out);
void recnames__free(struct recnames *n);
/* Collects the span of a wait's key (duplicates are merged). */
int recnames__add(struct recnames *n, const struct sp_key *key);
/* Names every span's call site and object; labels them. */
int recnames__resolve(struct recnames *n, struct symbolizer *sym);
/* The file's text; write errors are the stream's (outfile.h). */
void recnames__write(struct recnames *n, FILE *f);
/* -EINVAL: not a names file this version reads. */
int recnames__load(const char *path, struct recnames **out);

size_t recnames__count(struct recnames *n);
/* The index of key's span, or -1 when it was never added. */
long recnames__find(struct recnames *n, const struct sp_key *key);
const struct recnames_span *recnames__span(struct recnames *n, size_t i);
/* The spans' order: QSP's (object, call site, type), then the stack. */
int recnames__span_cmp(const void *a, const void *b);
/* The label of span i (after resolve or load); never NULL. */
const char *recnames__label(struct recnames *n, size_t i);
/* Where a call site is; -ENOENT (info zeroed) when the recording lacks it. */
int recnames__callsite(struct recnames *n, uint64_t addr,
		       struct symbol_info *info);
/* The call site as the labels show it ("server.c:118"). */
const char *recnames__callsite_text(struct recnames *n, uint64_t addr);
/* The symbol of an object ("name" or "name+0xoff"), or NULL. */
const char *recnames__object(struct recnames *n, uint64_t addr);

#endif
