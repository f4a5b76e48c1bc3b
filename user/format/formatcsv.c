// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonout.h"
#include "locktype.h"
#include "text.h"

#include "formatimpl.h"

static const char csv_columns[] =
	"report,pid,start_ns,end_ns,dropped,type,object,objects,object_symbol,"
	"callsite,module,offset,function,file,line,tid,count,wait_ns,avg_ns,"
	"max_ns,failed,owner_tid,time_ns,address,class,futile,finding,"
	"finding_impact_pct";

void format__csv_header(FILE *out)
{
	fprintf(out, "%s\n", csv_columns);
}

/*
 * The best finding about the row's lock (its type and object, as JSON's
 * "findings" name them), or NULL: the row's finding and
 * finding_impact_pct columns.  Coalesced rows ([N]) have no one object.
 */
static json_t *row_finding(const struct format_meta *meta,
			   const struct report_row *r)
{
	char object[32];
	size_t i;
	json_t *f;

	if (!meta->findings_json || r->n_objects != 1)
		return NULL;
	snprintf(object, sizeof(object), "0x%" PRIx64, r->object);
	json_array_foreach(meta->findings_json, i, f) {
		const char *type = json_string_value(json_object_get(f, "type"));
		const char *addr = json_string_value(
			json_object_get(f, "object_address"));

		if (type && addr && !strcmp(type, locktype__name(r->type)) &&
		    !strcmp(addr, object))
			return f;
	}
	return NULL;
}

/*
 * callsite is the table's text (file:line, in --callsite's style, under
 * the same source root); the address has a column of its own, and class
 * (lock or event) follows it.  Rows in the table's order: lock rows first.
 */
int format__csv(FILE *out, const struct format_config *cfg,
		const struct format_meta *meta,
		const struct report_rows *rows,
		const struct row_names *names)
{
	size_t strip = names__source_root(rows, names);

	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		const struct symbol_info *cs = &names[i].callsite;
		char site[TEXT_MAX];

		/* Several processes: the row's, empty when it merges them. */
		fprintf(out, "%u,", meta->sequence);
		if (!meta->processes)
			fprintf(out, "%d", (int)meta->pid);
		else if (r->pid != REPORT_NO_TID)
			fprintf(out, "%" PRId64, r->pid);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,",
			meta->start_ns, meta->end_ns, meta->dropped,
			locktype__name(r->type));
		if (r->n_objects == 1)
			fprintf(out, "0x%" PRIx64, r->object);
		fprintf(out, ",%u,", r->n_objects);
		text__csv_field(out, names[i].object_symbol);
		fputc(',', out);
		names__callsite_text(cs, r->callsite, cfg->callsite, strip,
				     site, sizeof(site));
		text__csv_field(out, site);
		fputc(',', out);
		text__csv_field(out, cs->module);
		fputc(',', out);
		if (cs->module)
			fprintf(out, "0x%" PRIx64, cs->module_offset);
		fputc(',', out);
		text__csv_field(out, cs->function);
		fputc(',', out);
		text__csv_field(out, cs->file);
		fputc(',', out);
		if (cs->line)
			fprintf(out, "%u", cs->line);
		fputc(',', out);
		if (r->tid != REPORT_NO_TID)
			fprintf(out, "%" PRId64, r->tid);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",", r->count, r->wait_ns);
		if (r->count)
			fprintf(out, "%" PRIu64, report__counted_ns(r) / r->count);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",", r->max_ns, r->failed);
		if (r->owner_tid != REPORT_NO_TID)
			fprintf(out, "%" PRId64, r->owner_tid);
		/* The window's end by the wall clock, as JSON's time_ns. */
		fputc(',', out);
		if (meta->wall_ns)
			fprintf(out, "%" PRIu64, meta->wall_ns);
		fprintf(out, ",0x%" PRIx64 ",%s,%" PRIu64 ",", r->callsite,
			locktype__class(r->type), r->futile);
		json_t *f = row_finding(meta, r);

		if (f)
			fprintf(out, "%s,%.1f", json_string_value(
					json_object_get(f, "category")),
				json_real_value(json_object_get(f, "impact_pct")));
		else
			fputc(',', out);
		fputc('\n', out);
	}
	return 0;
}
