/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text every renderer writes (report/, states/, record/): strings
 * from the target made safe, measured in columns, and written as CSV and
 * JSON fields.  Below the renderers: it includes none of them.
 */
#ifndef SYNCPROF_TEXT_H
#define SYNCPROF_TEXT_H

#include <stdio.h>

/* Longest Object or Call site text, with its NUL. */
#define TEXT_MAX 512

/*
 * Copies a string from the target into buf, replacing control
 * characters, escape sequences and invalid UTF-8 with '?'.
 */
void text__sanitize(const char *in, char *buf, size_t len);
/* Display width of a sanitized (valid UTF-8) string, in columns. */
int text__width(const char *s);
/* snprintf at *pos, never past end - 1; *pos stays on the NUL. */
void text__append(char **pos, char *end, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Prints line s (no newline in it) and a newline, in lines at most width
 * columns wide (0: one line) broken at sep: "  " between a summary's
 * fields, " " between words; a continuation starts with two spaces.  A
 * part wider than width stays whole, on a line of its own.
 */
void text__print_folded(FILE *out, const char *s, int width,
			const char *sep);
/*
 * Cuts s, in place, after its last field (fields part at two spaces)
 * that ends within width columns, so that no field is cut; the first
 * field stays whatever its width.
 */
void text__fit_fields(char *s, int width);
/*
 * A CSV field, whole: sanitized as the table is (a module or file path
 * from the target may hold ESC or OSC, and CSV is read on terminals too;
 * JSON is the output that keeps a path's bytes), then quoted as RFC 4180
 * says when it holds a comma or a quote.
 */
void text__csv_field(FILE *out, const char *s);
/* A JSON string (or null for NULL); bytes not printable as UTF-8 are escaped. */
void text__json_string(FILE *out, const char *s);

#endif
