// SPDX-License-Identifier: GPL-2.0
/*
 * perfmap: a /tmp/perf-PID.map as a target may write it, well-formed or
 * not.  Beyond memory safety: every name handed out is a string that
 * ends, every offset is within the address looked up, and every line's
 * start as the parser reads it resolves when its entry is one of the
 * last 8 to start at or before it (the lookup's window for overlaps).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmap.h"

static void lookup(const struct perfmap *m, uint64_t addr)
{
	uint64_t offset = 0;
	const char *name = perfmap__lookup(m, addr, &offset);

	if (name && (offset > addr || strlen(name) > (size_t)1 << 30))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perfmap *m;
	char *text = malloc(size + 1);

	if (!text || (!m && perfmap__new(getpid(), &m))) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	perfmap__parse(m, text, size);
	/* Each line's start and end, and a few addresses around them. */
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t end = nl ? (size_t)(nl - data) + 1 : size;
		char line[128];
		uint64_t start, len;

		snprintf(line, sizeof(line), "%.*s", (int)(end - at),
			 (const char *)data + at);
		at = end;
		if (sscanf(line, "%" SCNx64 " %" SCNx64, &start, &len) != 2)
			continue;
		lookup(m, start);
		lookup(m, start - 1);
		lookup(m, start + len);
		lookup(m, start + len - 1);
	}
	lookup(m, 0);
	lookup(m, UINT64_MAX);
	return 0;
}
