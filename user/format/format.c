// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "folded.h"
#include "pprof.h"

#include "formatimpl.h"

/* pprof's "process" label: a pid's name among the report's processes. */
static const char *format__process_name(const void *ctx, pid_t pid)
{
	const struct format_meta *meta = ctx;

	for (size_t i = 0; i < meta->n_processes; i++)
		if (meta->processes[i].pid == pid)
			return meta->processes[i].comm;
	return NULL;
}

int format__report(FILE *out, const struct format_config *cfg,
		   const struct format_meta *meta,
		   const struct report_rows *rows,
		   const struct row_names *names)
{
	int err;

	switch (cfg->format) {
	case FORMAT_TABLE:
		err = format__table(out, cfg, meta, rows, names);
		break;
	case FORMAT_CSV:
		err = format__csv(out, cfg, meta, rows, names);
		break;
	case FORMAT_JSON:
		err = format__json(out, cfg, meta, rows, names);
		break;
	case FORMAT_FOLDED:
		err = folded__print(out, cfg->symbolizer, cfg->stacktab, rows,
				    names);
		break;
	case FORMAT_PPROF:
		err = pprof__print(out, cfg->symbolizer, cfg->stacktab,
				   &(const struct pprof_window){
					   .pid = meta->pid,
					   .comm = meta->comm,
					   .scope = meta->scope,
					   .mode = meta->mode,
					   .start_ns = meta->start_ns,
					   .end_ns = meta->end_ns,
					   .process_name = format__process_name,
					   .process_ctx = meta,
					   .why = meta->why,
					   .why_rows_by = meta->why_rows_by },
				   rows, names);
		break;
	default:
		err = -EINVAL;
	}
	if (!err && fflush(out))
		err = -errno;
	return err;
}
