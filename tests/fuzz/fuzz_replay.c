// SPDX-License-Identifier: GPL-2.0
/*
 * replay: a recording directory as `syncprof --replay DIR` reads it,
 * whoever wrote it: syncprof.meta, syncprof.names and syncprof.events are
 * the input's three parts (two little-endian 16-bit lengths first: the
 * meta's and the names', the rest is the event log).  Each input is
 * replayed as JSON, as a cumulative table and as CSV, and into a Chrome
 * trace, by the real replay__run; any of them may refuse it (-EINVAL),
 * none may crash, leak, hang or print JSON that does not parse.
 *
 * A byte of a name that is not UTF-8 is written as the lone surrogate
 * \udcXX (see user/text/jsonout.c), which Python reads and jansson
 * refuses; the check reads each such escape as U+FFFD, and nothing else.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "log.h"
#include "options.h"
#include "replay.h"

static char dir[64];

static void put(const char *name, const uint8_t *data, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
}

/* The line with each \udc80-\udcff escape made \ufffd, in place. */
static void surrogates_as_replacement(char *line)
{
	bool in_string = false;

	for (char *p = line; *p; p++) {
		if (*p == '"') {
			in_string = !in_string;
			continue;
		}
		if (!in_string || *p != '\\')
			continue;
		if (p[1] == 'u' && (p[2] == 'd' || p[2] == 'D') &&
		    (p[3] == 'c' || p[3] == 'C') && strchr("89abcdefABCDEF", p[4]) &&
		    p[4] && p[5])
			memcpy(p + 2, "fffd", 4);
		p++;	/* the escaped character, a quote or backslash too */
	}
}

static void replay(const char *format, const char *extra, bool json)
{
	char chrome[96];
	char *argv[10] = { "syncprof", "--replay", dir, "-f", (char *)format };
	int argc = 5;
	struct options opts;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	snprintf(chrome, sizeof(chrome), "%s.json", dir);
	if (extra)
		argv[argc++] = (char *)extra;
	if (!json) {
		argv[argc++] = "--chrome";
		argv[argc++] = chrome;
	}
	if (options__parse(&opts, argc, argv))
		abort();
	out = open_memstream(&text, &len);
	if (!out)
		abort();
	replay__run(&opts, out);
	fclose(out);
	/* Every line it printed is one JSON object. */
	for (char *line = text, *next; json && line && *line; line = next) {
		json_t *j;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		surrogates_as_replacement(line);
		j = json_loads(line, 0, NULL);
		if (!j)
			abort();
		json_decref(j);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t meta, names;

	if (!dir[0]) {
		strcpy(dir, "/tmp/syncprof-fuzz-replay-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		log__set_level(LOG_ERROR - 1);
	}
	if (size < 4)
		return 0;
	meta = (size_t)data[0] | (size_t)data[1] << 8;
	names = (size_t)data[2] | (size_t)data[3] << 8;
	data += 4;
	size -= 4;
	if (meta > size || names > size - meta)
		return 0;
	put("syncprof.meta", data, meta);
	put("syncprof.names", data + meta, names);
	put("syncprof.events", data + meta + names, size - meta - names);
	replay("json", NULL, true);
	replay("table", "--cumulative", false);
	replay("csv", "-T", false);
	return 0;
}
