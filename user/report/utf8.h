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

#endif
