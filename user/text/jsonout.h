/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON values built with jansson, and written on one line with the
 * escapes syncprof's strings need (see jsonout.c).
 */
#ifndef SYNCPROF_JSONOUT_H
#define SYNCPROF_JSONOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* Version of the report's shape: "schema" in every JSON report. */
#define JSONOUT_SCHEMA 1

/*
 * A string from the target or a file name (NULL: null).  Any bytes:
 * what is not UTF-8 is written as Python's surrogateescape reads it
 * back (\udcXX), DEL and the C1 controls as \u00XX.
 */
json_t *jsonout__string(const char *s);
/* "0x..." when known, else null. */
json_t *jsonout__hex(bool known, uint64_t v);
/* An unsigned count or time (json_int_t is signed: capped at its max). */
json_t *jsonout__uint(uint64_t v);
/* v when known, else null. */
json_t *jsonout__uint_or_null(bool known, uint64_t v);
/*
 * Sets key to value in obj, taking the value (NULL counts as a failed
 * allocation); the first failure stays in *err (0 or -ENOMEM), so a
 * writer sets its keys one a line and checks once.
 */
void jsonout__set(json_t *obj, const char *key, json_t *value, int *err);
/* Appends value to the array arr, as jsonout__set. */
void jsonout__append(json_t *arr, json_t *value, int *err);
/* Writes v on one line (", " and ": " between items), no newline. */
int jsonout__dump(FILE *out, const json_t *v);

#endif
