// SPDX-License-Identifier: GPL-2.0
/*
 * What every report format says of its window: the wall-clock time it
 * ended, and the events lost (format.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "array.h"
#include "formatimpl.h"
#include "text.h"

void format__wall_text(uint64_t wall_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(wall_ns / 1000000000u);
	struct tm tm;
	char date[32], zone[8];

	if (!len)
		return;
	buf[0] = '\0';
	if (!wall_ns || !localtime_r(&secs, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) ||
	    !strftime(zone, sizeof(zone), "%z", &tm) || strlen(zone) != 5)
		return;
	/* %z is +hhmm; ISO 8601's extended form is +hh:mm. */
	snprintf(buf, len, "%s.%03u%.3s:%s", date,
		 (unsigned int)(wall_ns / 1000000u % 1000u), zone, zone + 3);
}

uint64_t format__drops_total(const struct format_drops *d)
{
	return d->map_full + d->no_storage + d->nested + d->skipped + d->ring;
}

void format__drops_text(const struct format_drops *d, unsigned int map_size,
			char *buf, size_t len)
{
	const struct {
		uint64_t n;
		const char *what;
	} causes[] = {
		{ d->map_full, "new rows beyond the kernel's row table "
			       "(--map-size %u: raise it)" },
		{ d->no_storage, "calls without per-thread state "
				 "(kernel memory)" },
		{ d->nested, "lock calls nested more than 4 deep in a thread" },
		{ d->skipped, "probe runs the kernel skipped (another BPF "
			      "program was running on the CPU)" },
	};
	uint64_t total = format__drops_total(d);
	size_t at;

	if (!len)
		return;
	buf[0] = '\0';
	if (!total)
		return;
	at = (size_t)snprintf(buf, len, "DROPPED %" PRIu64 " events:", total);
	for (size_t i = 0; i < ARRAY_SIZE(causes); i++) {
		char what[128];

		if (!causes[i].n || at >= len)
			continue;
		snprintf(what, sizeof(what), causes[i].what, map_size);
		at += (size_t)snprintf(buf + at, len - at, " %" PRIu64 " %s;",
				       causes[i].n, what);
	}
	if (total > d->ring && at < len)
		at += (size_t)snprintf(buf + at, len - at,
				       " the counts are short by these.");
	if (d->ring && at < len)
		snprintf(buf + at, len - at, " %" PRIu64 " waits are counted but "
			 "left out of the recording (its ring buffer was full: "
			 "raise --ring-size).", d->ring);
}

/* A lock of a lock-order cycle by name, or by address. */
void format__order_lock_text(const struct format_order_lock *l, char *buf,
			     size_t len)
{
	char raw[TEXT_MAX];

	if (l->object_symbol)
		snprintf(raw, sizeof(raw), "%s", l->object_symbol);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, l->object);
	text__sanitize(raw, buf, len);
}
