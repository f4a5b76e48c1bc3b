// SPDX-License-Identifier: GPL-2.0
/*
 * Complete events rather than begin/end pairs: half the size, and a lost
 * begin or end can never leave a span open.  Times are microseconds with
 * three decimals (the format's unit, to the nanosecond), CLOCK_MONOTONIC
 * like the reports' start_ns and end_ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "chrome.h"
#include "locktype.h"
#include "report.h"
#include "text.h"

struct chrome_out {
	FILE *out;
	pid_t pid;
	bool first;		/* no event written yet: no comma */
	uint32_t *tids;		/* threads seen, sorted */
	size_t n_tids, cap_tids;
	uint32_t last_tid;
};

static void chrome__us(FILE *out, const char *key, uint64_t ns)
{
	fprintf(out, "\"%s\":%" PRIu64 ".%03u", key, ns / 1000,
		(unsigned int)(ns % 1000));
}

static void chrome__begin(struct chrome_out *c)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
}

static int chrome__see(struct chrome_out *c, uint32_t tid)
{
	size_t lo = 0, hi = c->n_tids;

	if (c->n_tids && tid == c->last_tid)
		return 0;
	c->last_tid = tid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->tids[mid] == tid)
			return 0;
		if (c->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (array__grow(&c->tids, &c->cap_tids, c->n_tids + 1, sizeof(*c->tids)))
		return -ENOMEM;
	memmove(&c->tids[lo + 1], &c->tids[lo], (c->n_tids - lo) * sizeof(*c->tids));
	c->tids[lo] = tid;
	c->n_tids++;
	return 0;
}

static void chrome__lost(struct chrome_out *c, const struct sp_wait_event *e)
{
	chrome__begin(c);
	fprintf(c->out, "{\"name\":\"waits lost\",\"cat\":\"syncprof\","
		"\"ph\":\"i\",\"s\":\"t\",");
	chrome__us(c->out, "ts", e->lost_ns);
	fprintf(c->out, ",\"pid\":%d,\"tid\":%u,\"args\":{\"lost\":%u}}",
		(int)c->pid, e->key.tid, e->lost);
}

static void chrome__wait(struct chrome_out *c, struct recnames *names,
			 const struct sp_wait_event *e)
{
	const struct sp_key *k = &e->key;
	struct symbol_info site;
	long span = recnames__find(names, k);
	FILE *out = c->out;

	recnames__callsite(names, k->callsite, &site);
	chrome__begin(c);
	fputs("{\"name\":", out);
	text__json_string(out, span >= 0 ? recnames__label(names, (size_t)span)
					   : "?");
	fputs(",\"cat\":", out);
	text__json_string(out, locktype__name(k->type));
	fputs(",\"ph\":\"X\",", out);
	chrome__us(out, "ts", e->start_ns);
	fputc(',', out);
	chrome__us(out, "dur", e->end_ns - e->start_ns);
	fprintf(out, ",\"pid\":%d,\"tid\":%u,\"args\":{\"type\":",
		(int)c->pid, k->tid);
	text__json_string(out, locktype__name(k->type));
	fprintf(out, ",\"object\":\"0x%" PRIx64 "\",\"object_symbol\":",
		(uint64_t)k->object);
	text__json_string(out, recnames__object(names, k->object));
	fputs(",\"callsite\":", out);
	text__json_string(out, recnames__callsite_text(names, k->callsite));
	fprintf(out, ",\"address\":\"0x%" PRIx64 "\",\"function\":",
		(uint64_t)k->callsite);
	text__json_string(out, site.function);
	fputs(",\"file\":", out);
	text__json_string(out, site.file);
	if (site.line)
		fprintf(out, ",\"line\":%u", site.line);
	else
		fputs(",\"line\":null", out);
	if (k->owner_tid)
		fprintf(out, ",\"owner_tid\":%u", k->owner_tid);
	else
		fputs(",\"owner_tid\":null", out);
	fprintf(out, ",\"wait_ns\":%" PRIu64 ",\"counted\":%s,\"failed\":%s}}",
		(uint64_t)(e->end_ns - e->start_ns),
		e->flags & SP_EVENT_COUNTED ? "true" : "false",
		e->flags & SP_EVENT_FAILED ? "true" : "false");
}

static void chrome__name(struct chrome_out *c, const char *what, uint32_t tid,
			 const char *name)
{
	char fallback[32];

	if (!name || !*name) {
		snprintf(fallback, sizeof(fallback), "thread %u", tid);
		name = fallback;
	}
	chrome__begin(c);
	fprintf(c->out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
		"\"args\":{\"name\":", what, (int)c->pid, tid);
	text__json_string(c->out, name);
	fputs("}}", c->out);
}

int chrome__export(FILE *out, const struct recmeta *meta,
		   struct recnames *names, struct evlog_reader *events)
{
	struct chrome_out c = { .out = out, .pid = meta->pid, .first = true };
	struct sp_wait_event e;
	uint64_t waits = 0, lost = 0;
	int got, err = 0;

	fputs("{\"traceEvents\":[", out);
	chrome__name(&c, "process_name", (uint32_t)meta->pid, meta->comm);
	evlog__rewind(events);
	while ((got = evlog__read(events, &e)) > 0) {
		err = chrome__see(&c, e.key.tid);
		if (err)
			break;
		if (e.lost) {
			chrome__lost(&c, &e);
			lost += e.lost;
		}
		if (!(e.flags & SP_EVENT_LOST_ONLY)) {
			chrome__wait(&c, names, &e);
			waits++;
		}
	}
	if (got < 0 && !err)
		err = got;
	for (size_t i = 0; i < c.n_tids; i++)
		chrome__name(&c, "thread_name", c.tids[i],
			     recmeta__thread_comm(meta, c.tids[i]));
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"syncprof\","
	      "\"comm\":", out);
	text__json_string(out, meta->comm);
	fprintf(out, ",\"pid\":%d,\"mode\":", (int)meta->pid);
	text__json_string(out, meta->mode);
	fprintf(out, ",\"waits\":%" PRIu64 ",\"lost\":%" PRIu64 "}}\n", waits,
		lost);
	free(c.tids);
	if (!err && (ferror(out) || fflush(out)))
		err = -EIO;
	return err;
}
