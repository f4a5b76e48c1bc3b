// SPDX-License-Identifier: GPL-2.0
/*
 * A series is keyed by program and call site: the labels never hold a
 * pid, an address that differs from one process of a program to the
 * next, or a build machine's directories.  Rows are built per process
 * (report__build's per_process, for the program's name) and by object;
 * with coalescing (the default, as the table's) objects that are
 * instances of one thing get one name, so their rows add to one series:
 * each PostgreSQL backend's own semaphore is not a series of its own.
 * Rejected: rows coalesced by report__build (a row's "N objects" changes
 * with every read, and a label that changes starts a new series); the
 * table's source root (the common directory of the rows shown changes
 * with the rows, a label may not).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locktype.h"
#include "metricnames.h"
#include "names.h"
#include "procset.h"
#include "report.h"
#include "text.h"

/* Rows as the series key them: by process (its name) and object. */
static const struct report_settings metricnames_rows = {
	.coalesce = false,
	.per_process = true,
	.sort = SORT_TOTAL,
	.top = 0,
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void metricnames__callsite(const struct symbol_info *info, uint64_t addr,
			   char *buf, size_t len)
{
	char raw[TEXT_MAX];

	if (info->function && info->file && info->line)
		snprintf(raw, sizeof(raw), "%s %s:%u", info->function,
			 base_name(info->file), info->line);
	else if (info->function)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64, info->function,
			 info->function_offset);
	else if (info->module)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64,
			 base_name(info->module), info->module_offset);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, addr);
	text__sanitize(raw, buf, len);
}

/* Whether name + at begins "+0x" and a hex digit: an instance's offset. */
static size_t offset_len(const char *p)
{
	size_t n = 3;

	if (strncmp(p, "+0x", 3) || !isxdigit((unsigned char)p[3]))
		return 0;
	while (isxdigit((unsigned char)p[n]))
		n++;
	return n;
}

void metricnames__object(const char *name, uint64_t addr, bool coalesce,
			 char *buf, size_t len)
{
	char raw[TEXT_MAX];
	size_t at = 0;

	if (!name) {
		if (coalesce)
			snprintf(raw, sizeof(raw), "(unnamed)");
		else
			snprintf(raw, sizeof(raw), "0x%" PRIx64, addr);
		text__sanitize(raw, buf, len);
		return;
	}
	if (!coalesce) {
		text__sanitize(name, buf, len);
		return;
	}
	/* The name without its instance's index and offset. */
	for (const char *p = name; *p && at + 1 < sizeof(raw);) {
		size_t off = offset_len(p);

		if (off) {
			p += off;
			continue;
		}
		if (*p == '[' && isdigit((unsigned char)p[1])) {
			const char *q = p + 1;

			while (isdigit((unsigned char)*q))
				q++;
			if (*q == ']') {
				raw[at++] = '[';
				p = q;	/* the ']' is copied next */
				continue;
			}
		}
		raw[at++] = *p++;
	}
	raw[at] = '\0';
	text__sanitize(raw, buf, len);
}

static const char *metricnames__comm(const struct procset_entry *procs,
				     size_t n, int64_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return procs[i].comm ? procs[i].comm : "?";
	return "?";
}

int metricnames__add(struct metrics *m, struct symbolizer *sym,
		     const struct snapshot *delta,
		     const struct procset_entry *procs, size_t n_procs,
		     bool coalesce)
{
	struct report_rows rows = { 0 };
	struct row_names *names = NULL;
	int err;

	if (!delta || !snapshot__count(delta))
		return 0;
	err = report__build(snapshot__entries(delta), snapshot__count(delta),
			    &metricnames_rows, &rows);
	if (!err)
		err = names__rows(sym, &rows, &names);
	for (size_t i = 0; !err && i < rows.count; i++) {
		const struct report_row *r = &rows.rows[i];
		char process[64], object[TEXT_MAX], site[TEXT_MAX];
		struct metrics_row row;

		text__sanitize(metricnames__comm(procs, n_procs, r->pid),
			       process, sizeof(process));
		metricnames__object(names[i].object_symbol, r->object,
				    coalesce, object, sizeof(object));
		metricnames__callsite(&names[i].callsite, r->callsite, site,
				      sizeof(site));
		row = (struct metrics_row){
			.process = process,
			.class = locktype__class(r->type),
			.type = locktype__name(r->type),
			.object = object,
			.callsite = site,
			.count = r->count,
			.wait_ns = r->wait_ns,
			.failed = r->failed,
			.hist = r->hist,
		};
		err = metrics__add(m, &row);
	}
	free(names);
	report__free(&rows);
	return err;
}
