// SPDX-License-Identifier: GPL-2.0
/*
 * The text every renderer writes: strings from the target made safe for
 * a terminal, a CSV field or JSON, their widths in columns, and
 * appending to a fixed buffer.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "text.h"
#include "utf8.h"

void text__sanitize(const char *in, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t out = 0;

	if (!len)
		return;
	while (*s && out + 1 < len) {
		enum utf8_unit kind;
		uint32_t cp;
		size_t n = utf8__unit(s, &kind, &cp);

		if (kind != UTF8_TEXT) {
			/* Each byte: a C1 control is two '?', as before. */
			buf[out++] = '?';
			s++;
			continue;
		}
		if (out + n >= len)
			break;
		memcpy(buf + out, s, n);
		out += n;
		s += n;
	}
	buf[out] = '\0';
}

void text__append(char **pos, char *end, const char *fmt, ...)
{
	size_t avail = (size_t)(end - *pos);
	va_list ap;
	int n;

	if (avail <= 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(*pos, avail, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n < avail ? (size_t)n : avail - 1;
}

int text__width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void text__csv_field(FILE *out, const char *s)
{
	size_t len;
	char *clean;

	if (!s)
		return;
	len = strlen(s) + 1;
	clean = malloc(len);
	if (!clean)
		return;
	text__sanitize(s, clean, len);
	if (!strpbrk(clean, ",\"")) {
		fputs(clean, out);
	} else {
		fputc('"', out);
		for (const char *p = clean; *p; p++) {
			if (*p == '"')
				fputc('"', out);
			fputc(*p, out);
		}
		fputc('"', out);
	}
	free(clean);
}

void text__json_string(FILE *out, const char *s)
{
	json_t *v = jsonout__string(s);

	/* Streamed JSON (Chrome traces): a string, or null. */
	if (!v || jsonout__dump(out, v))
		fputs("null", out);
	json_decref(v);
}

void text__print_folded(FILE *out, const char *s, int width, const char *sep)
{
	size_t sep_len = strlen(sep);
	bool first = true;
	int col = 0;

	while (*s) {
		const char *gap = strstr(s, sep);
		size_t len = gap ? (size_t)(gap - s) : strlen(s);
		char part[TEXT_MAX];
		int w;

		snprintf(part, sizeof(part), "%.*s", (int)len, s);
		w = text__width(part);
		if (first) {
			fputs(part, out);
			col = w;
		} else if (width > 0 && col + (int)sep_len + w > width) {
			/* A continuation: two spaces in. */
			fprintf(out, "\n  %s", part);
			col = 2 + w;
		} else {
			fprintf(out, "%s%s", sep, part);
			col += (int)sep_len + w;
		}
		first = false;
		s += len + (gap ? sep_len : 0);
	}
	fputc('\n', out);
}

void text__fit_fields(char *s, int width)
{
	char *gap = s, *keep = NULL;

	if (text__width(s) <= width)
		return;
	while ((gap = strstr(gap, "  "))) {
		char c = *gap;
		int w;

		*gap = '\0';
		w = text__width(s);
		*gap = c;
		if (w > width)
			break;
		keep = gap;
		gap += 2;
	}
	if (keep)
		*keep = '\0';
}
