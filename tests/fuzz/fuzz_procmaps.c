// SPDX-License-Identifier: GPL-2.0
/*
 * procmaps: /proc/PID/maps text, well-formed or not.
 *
 * Beyond memory safety, every entry is checked against its own line: it
 * is executable exactly when the line's permission field has an 'x'
 * third, its range is not empty, and its path lies inside the line.  The
 * lines are parsed one by one, then as one file, where whatever the
 * previous line left on the stack is there to be misread.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

#define MAX_LINES 4096

static const char *const stems[] = { "libc", "libpthread", "ld-linux", "" };
#define N_STEMS (sizeof(stems) / sizeof(stems[0]))

/* The permission field as the parser's sscanf reads it. */
static bool line_exec(const char *line)
{
	char perms[5] = "";

	if (sscanf(line, "%*" SCNx64 "-%*" SCNx64 " %4s", perms) != 1)
		return false;
	return strlen(perms) >= 3 && perms[2] == 'x';
}

static void check_entry(const char *line, const char *parsed,
			const struct procmaps_entry *e)
{
	if (e->start >= e->end || e->exec != line_exec(line) ||
	    e->path < parsed || e->path > parsed + strlen(line))
		abort();
}

/* Each line alone, as procmaps__parse_line gets it (edited in place). */
static void parse_each(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *edited = strdup(lines[i]);
		struct procmaps_entry e;

		if (edited && !procmaps__parse_line(edited, &e))
			check_entry(lines[i], edited, &e);
		free(edited);
	}
}

/* The whole input as a maps file. */
static void parse_file(const uint8_t *data, size_t size, char **lines,
		       size_t n)
{
	struct procmaps *maps;
	char *buf = malloc(size);
	FILE *file;

	if (!buf)
		return;
	memcpy(buf, data, size);
	file = fmemopen(buf, size, "r");
	if (!file || procmaps__parse(file, &maps)) {
		if (file)
			fclose(file);
		free(buf);
		return;
	}
	/* It parsed: every line did, in order. */
	if (procmaps__count(maps) != n || procmaps__entry(maps, n))
		abort();
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const struct procmaps_entry *found = procmaps__find(maps, e->start);

		if (e->start >= e->end || e->exec != line_exec(lines[i]))
			abort();
		if (found && (e->start < found->start || e->start >= found->end))
			abort();
		for (size_t s = 0; s < N_STEMS; s++)
			procmaps__is_library(e->path, stems[s]);
	}
	for (size_t s = 0; s < N_STEMS; s++)
		procmaps__find_library(maps, stems[s]);
	procmaps__keep_exec_files(maps);
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!e->exec || e->path[0] != '/')
			abort();
	}
	procmaps__free(maps);
	fclose(file);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *lines[MAX_LINES];
	size_t n = 0;

	/* Lines as getline splits them; a NUL ends what the parser sees. */
	for (size_t at = 0; at < size && n < MAX_LINES;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t end = nl ? (size_t)(nl - data) + 1 : size;

		lines[n] = strndup((const char *)data + at, end - at);
		if (!lines[n])
			break;
		n++;
		at = end;
	}
	if (n < MAX_LINES) {
		parse_each(lines, n);
		if (size)
			parse_file(data, size, lines, n);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	return 0;
}
