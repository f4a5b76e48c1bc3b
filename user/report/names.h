/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of rows and frames, as text: what every renderer of rows
 * (format.c's table, CSV and JSON, folded, pprof, the call graph, the
 * live screen, the recording) prints for a call site, a lock, a frame.
 */
#ifndef SYNCPROF_NAMES_H
#define SYNCPROF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "report.h"
#include "symbolizer.h"

/* Names of one row: where the call site is, and the object's symbol. */
struct row_names {
	struct symbol_info callsite;
	const char *object_symbol;	/* NULL if unknown */
};

/*
 * Names every row through the symbolizer: call site, and the symbol of a
 * row's single object.  *out (NULL for no rows) is freed with free();
 * its strings belong to the symbolizer.
 */
int names__rows(struct symbolizer *sym, const struct report_rows *rows,
		struct row_names **out);
/*
 * Where rows' names come from when not from a symbolizer (--replay: the
 * recording's names): a call site's, and the symbol of a row's single
 * object (NULL: none).
 */
struct names_source {
	void (*callsite)(void *ctx, uint64_t addr, struct symbol_info *out);
	const char *(*object)(void *ctx, const struct report_row *row);
	void *ctx;
};
/* names__rows through src. */
int names__rows_from(const struct names_source *src,
		     const struct report_rows *rows, struct row_names **out);
/*
 * The call site as the table shows it, in style; strip: how many leading
 * bytes of info->file are the common source root, left out.
 */
void names__callsite_text(const struct symbol_info *info, uint64_t addr,
			  enum callsite_style style, size_t strip,
			  char *buf, size_t len);
/*
 * Length of the source root the rows' absolute files share: the strip
 * that names__callsite_text leaves out of each.
 */
size_t names__source_root(const struct report_rows *rows,
			  const struct row_names *names);
/*
 * The text of that root: the first strip bytes of a row's file; NULL
 * when strip is 0.
 */
const char *names__source_root_text(const struct report_rows *rows,
				    const struct row_names *names,
				    size_t strip);
/*
 * One stack frame at pc as -g prints it: "function (file:line)",
 * "function (module)", "module+0xoff" or "0xpc"; " [inlined]" after an
 * inlined call's frame.  Files under root (root_len bytes; NULL: none)
 * are printed without it.
 */
void names__frame_text(const struct symbol_frame *f, uint64_t pc,
		       const char *root, size_t root_len, char *buf,
		       size_t len);
/* The Object column: [N], the symbol, or the address. */
void names__object_text(const struct report_row *r, const char *symbol,
			char *buf, size_t len);

#endif
