// SPDX-License-Identifier: GPL-2.0
/*
 * JSON output through jansson: the report is a tree of json_t built by
 * its writer (a key is one jsonout__set line), dumped on one line.
 *
 * The one thing jansson cannot write is a string that is not UTF-8, and
 * syncprof's strings come from the target: a module's path may hold any
 * byte but NUL.  Such a byte is written as \udcXX, the lone surrogate
 * Python's surrogateescape gives it, so that
 * json.loads(line)[...].encode("utf-8", "surrogateescape") (os.fsencode)
 * is the name's bytes.  DEL and the C1 controls (U+007F-U+009F) are
 * written as \u00XX, so that no report puts them on a terminal.
 *
 * Chosen: such a string is handed to jansson with each of these carried
 * as a code point of Unicode's last private-use block (U+10FE00 + control,
 * U+10FF00 + byte), and the dump's text rewrites them as their escapes.
 * A string that really holds a code point of U+10FE00-U+10FFFF has that
 * character's bytes escaped one by one, which read back as the same
 * bytes: no marker is ambiguous.  Strings without any (nearly all) go to
 * json_string() as they are.
 *
 * Rejected: json_stringn_nocheck() (jansson's dump stops at the first
 * invalid sequence and fails); JSON_ENSURE_ASCII (cannot write a lone
 * surrogate either, and makes every accented name unreadable); \u00XX for
 * a byte (reads back as another character); a second key with the bytes
 * in base64 (every reader would need to know it); a JSON writer of our own
 * (what jansson is for).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "utf8.h"

#define MARK_CONTROL	0x10fe00u	/* + code point 0x7f-0x9f */
#define MARK_BYTE	0x10ff00u	/* + byte 0x80-0xff */
#define MARK_FIRST	0x10fe00u

/*
 * What a unit needs: 0 as it is (jansson escapes C0 controls itself),
 * else the marker's base.
 */
static uint32_t needs_mark(enum utf8_unit kind, uint32_t cp)
{
	if (kind == UTF8_INVALID || cp >= MARK_FIRST)
		return MARK_BYTE;
	if (kind == UTF8_CONTROL && cp >= 0x7f)
		return MARK_CONTROL;
	return 0;
}

static size_t put_cp(char *out, uint32_t cp)
{
	/* Only markers: four bytes. */
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

json_t *jsonout__string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool plain = true;
	char *buf, *o;
	json_t *v;

	if (!s)
		return json_null();
	for (const unsigned char *q = p; *q && plain;) {
		enum utf8_unit kind;
		uint32_t cp;

		q += utf8__unit(q, &kind, &cp);
		plain = !needs_mark(kind, cp);
	}
	if (plain)
		return json_string(s);
	/* Each byte becomes at most one four-byte marker. */
	buf = malloc(strlen(s) * 4 + 1);
	if (!buf)
		return NULL;
	o = buf;
	while (*p) {
		enum utf8_unit kind;
		uint32_t cp;
		size_t n = utf8__unit(p, &kind, &cp);
		uint32_t mark = needs_mark(kind, cp);

		if (!mark) {
			memcpy(o, p, n);
			o += n;
		} else if (mark == MARK_CONTROL) {
			o += put_cp(o, MARK_CONTROL + cp);
		} else {
			/* Not UTF-8, or a marker's own range: byte by byte. */
			for (size_t i = 0; i < n; i++)
				o += put_cp(o, MARK_BYTE + p[i]);
		}
		p += n;
	}
	*o = '\0';
	v = json_string(buf);
	free(buf);
	return v;
}

json_t *jsonout__hex(bool known, uint64_t v)
{
	char buf[24];

	if (!known)
		return json_null();
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

json_t *jsonout__uint(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX
						   : (json_int_t)v);
}

json_t *jsonout__uint_or_null(bool known, uint64_t v)
{
	return known ? jsonout__uint(v) : json_null();
}

void jsonout__set(json_t *obj, const char *key, json_t *value, int *err)
{
	if (!value || json_object_set_new(obj, key, value)) {
		if (!*err)
			*err = -ENOMEM;
	}
}

void jsonout__append(json_t *arr, json_t *value, int *err)
{
	if (!value || json_array_append_new(arr, value)) {
		if (!*err)
			*err = -ENOMEM;
	}
}

int jsonout__dump(FILE *out, const json_t *v)
{
	/* Enough digits for any seconds value, without 0.1's noise. */
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	const unsigned char *p, *run;

	if (!text)
		return -ENOMEM;
	p = run = (const unsigned char *)text;
	for (; *p; p++) {
		uint32_t cp;

		/* Markers are U+10FE00-U+10FFFF: F4 8F B8-BF xx. */
		if (p[0] != 0xf4 || p[1] != 0x8f || p[2] < 0xb8 || p[2] > 0xbf)
			continue;
		cp = 0x10f000u | ((p[2] & 0x3fu) << 6) | (p[3] & 0x3fu);
		fwrite(run, 1, (size_t)(p - run), out);
		if (cp >= MARK_BYTE)
			fprintf(out, "\\udc%02x", cp - MARK_BYTE);
		else
			fprintf(out, "\\u%04x", cp - MARK_CONTROL);
		p += 3;
		run = p + 1;
	}
	fwrite(run, 1, (size_t)(p - run), out);
	free(text);
	return ferror(out) ? -EIO : 0;
}
