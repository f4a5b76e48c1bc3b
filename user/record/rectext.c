// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "rectext.h"

void rectext__field(FILE *out, const char *s)
{
	if (!s) {
		fputc('-', out);
		return;
	}
	if (!strcmp(s, "-")) {
		fputs("\\-", out);
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '\\': fputs("\\\\", out); break;
		case '\t': fputs("\\t", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Unescapes field in place; NULL for "-", or (char *)-1 if malformed. */
static char *rectext__unescape(char *field)
{
	char *in = field, *out = field;

	if (!strcmp(field, "-"))
		return NULL;
	while (*in) {
		if (*in != '\\') {
			*out++ = *in++;
			continue;
		}
		switch (in[1]) {
		case '\\': *out++ = '\\'; break;
		case 't': *out++ = '\t'; break;
		case 'n': *out++ = '\n'; break;
		case 'r': *out++ = '\r'; break;
		case '-': *out++ = '-'; break;
		default: return (char *)-1;
		}
		in += 2;
	}
	*out = '\0';
	return field;
}

int rectext__split(char *line, char **fields, size_t max)
{
	size_t n = 0, len = strlen(line);
	char *p = line;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	for (;;) {
		char *tab = strchr(p, '\t');

		if (n == max)
			return -EINVAL;
		if (tab)
			*tab = '\0';
		fields[n] = rectext__unescape(p);
		if (fields[n] == (char *)-1)
			return -EINVAL;
		n++;
		if (!tab)
			return (int)n;
		p = tab + 1;
	}
}
