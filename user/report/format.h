/* SPDX-License-Identifier: GPL-2.0 */
/* Report printers: QSP's table, CSV, and one-line JSON. */
#ifndef SYNCPROF_FORMAT_H
#define SYNCPROF_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "options.h"
#include "report.h"
#include "symbolizer.h"

struct format_meta {
	pid_t pid;
	const char *comm;
	const char *mode;
	double elapsed_s;	/* length of the reported window */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint64_t dropped;	/* events lost since attach */
	uint64_t calibration_ns; /* probe time taken out of each call */
	uint64_t unwind_stopped; /* contended: walks out of libc cut short */
	unsigned int sequence;	/* 1 for the first report */
};

/* Longest Object or Call site text, with its NUL. */
#define FORMAT_TEXT_MAX 512

/* Names of one row: where the call site is, and the object's symbol. */
struct format_names {
	struct symbol_info callsite;
	const char *object_symbol;	/* NULL if unknown */
};

/*
 * Names every row through the symbolizer: call site, and the symbol of a
 * row's single object.  *out (NULL for no rows) is freed with free();
 * its strings belong to the symbolizer.
 */
int format__names(struct symbolizer *sym, const struct report_rows *rows,
		  struct format_names **out);
/* Prints one report.  names[i] belongs to rows->rows[i]. */
int format__report(FILE *out, enum output_format format,
		   enum callsite_style style, const struct format_meta *meta,
		   const struct report_rows *rows,
		   const struct format_names *names);
/* CSV's header line, once per output. */
void format__csv_header(FILE *out);
/*
 * The call site as the table shows it, in style; strip: how many leading
 * bytes of info->file are the common source root, left out.
 */
void format__callsite_text(const struct symbol_info *info, uint64_t addr,
			   enum callsite_style style, size_t strip,
			   char *buf, size_t len);
/*
 * Length of the source root the rows' absolute files share: the strip
 * that format__callsite_text leaves out of each.
 */
size_t format__source_root(const struct report_rows *rows,
			   const struct format_names *names);
/* The Object column: [N], the symbol, or the address. */
void format__object_text(const struct report_row *r, const char *symbol,
			 char *buf, size_t len);
/* Display width of a sanitized (valid UTF-8) string, in columns. */
int format__width(const char *s);
/*
 * Copies a string from the target into buf, replacing control
 * characters, escape sequences and invalid UTF-8 with '?'.
 */
void format__sanitize(const char *in, char *buf, size_t len);

#endif
