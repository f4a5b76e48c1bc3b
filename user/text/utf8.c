// SPDX-License-Identifier: GPL-2.0
#include "utf8.h"

size_t utf8__decode(const unsigned char *s, uint32_t *cp)
{
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		*cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		*cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) ||
	    (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

bool utf8__is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

size_t utf8__unit(const unsigned char *s, enum utf8_unit *kind, uint32_t *cp)
{
	size_t n = utf8__decode(s, cp);

	if (!n) {
		*kind = UTF8_INVALID;
		*cp = s[0];
		return 1;
	}
	*kind = utf8__is_control(*cp) ? UTF8_CONTROL : UTF8_TEXT;
	return n;
}

size_t utf8__bytes_for_cols(const char *s, int cols)
{
	size_t i = 0;
	int c = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;	/* inside a character */
		if (c == cols)
			break;
		c++;
	}
	return i;
}
