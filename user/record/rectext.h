/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The line format of a recording's text files (syncprof.meta,
 * syncprof.names): fields separated by tabs, one record per line.  A
 * field is escaped so that any string survives: '\' '\t' '\n' '\r' become
 * "\\" "\t" "\n" "\r"; NULL is "-", and a string that is "-" is "\-".
 */
#ifndef SYNCPROF_RECTEXT_H
#define SYNCPROF_RECTEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s (NULL allowed) as one escaped field. */
void rectext__field(FILE *out, const char *s);
/*
 * Splits line (changed in place; a trailing newline is dropped) into at
 * most max fields and unescapes each: fields[i] points into line, or is
 * NULL for "-".  Returns the number of fields, or -EINVAL for a bad
 * escape or more than max fields.
 */
int rectext__split(char *line, char **fields, size_t max);

#endif
