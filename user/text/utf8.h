/* SPDX-License-Identifier: GPL-2.0 */
/* UTF-8 as the printers check it: strings from the target are any bytes. */
#ifndef SYNCPROF_UTF8_H
#define SYNCPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the valid UTF-8 sequence at s (its code point in *cp), or 0:
 * a stray byte, an overlong form, a surrogate, beyond Unicode.  s is
 * NUL-terminated: a sequence cut by the NUL is invalid.
 */
size_t utf8__decode(const unsigned char *s, uint32_t *cp);
/* Bytes of the first cols columns of a valid UTF-8 string. */
size_t utf8__bytes_for_cols(const char *s, int cols);
/* C0 and C1 controls and DEL: never written to a terminal as they are. */
bool utf8__is_control(uint32_t cp);

/*
 * What a string from the target holds, unit by unit: the one judgement
 * every output makes of it (the table, the live screen, CSV, folded and
 * uftrace's names print '?' for each byte of a control or invalid unit;
 * JSON and Chrome escape them, so the bytes come back: docs/output-files.md).
 */
enum utf8_unit {
	UTF8_TEXT,		/* a printable character */
	UTF8_CONTROL,		/* C0, DEL, C1: ESC, CSI, OSC's BEL, newlines */
	UTF8_INVALID,		/* one byte that is not UTF-8 */
};
/* The unit at s (*s != 0): its kind and code point (the byte if invalid). */
size_t utf8__unit(const unsigned char *s, enum utf8_unit *kind, uint32_t *cp);

#endif
