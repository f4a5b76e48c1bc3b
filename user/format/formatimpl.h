/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report formats format__report dispatches to, one file each:
 * formattable.c, formatjson.c, formatcsv.c (formatmeta.c: what they all
 * print of the window).  Private to format*.c.
 */
#ifndef SYNCPROF_FORMATIMPL_H
#define SYNCPROF_FORMATIMPL_H

#include <stdio.h>

#include "format.h"

int format__table(FILE *out, const struct format_config *cfg,
		  const struct format_meta *meta,
		  const struct report_rows *rows,
		  const struct row_names *names);
int format__json(FILE *out, const struct format_config *cfg,
		 const struct format_meta *meta,
		 const struct report_rows *rows,
		 const struct row_names *names);
int format__csv(FILE *out, const struct format_config *cfg,
		const struct format_meta *meta,
		const struct report_rows *rows,
		const struct row_names *names);
/* A --lock-order lock by name (its symbol) or address, sanitized. */
void format__order_lock_text(const struct format_order_lock *l, char *buf,
			     size_t len);

#endif
