// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "callgraph.h"
#include "columns.h"
#include "folded.h"
#include "format.h"
#include "hist.h"
#include "jsonout.h"
#include "locktype.h"
#include "names.h"
#include "pprof.h"
#include "rowstacks.h"
#include "srcpath.h"
#include "stateformat.h"
#include "text.h"
#include "utf8.h"
#include "why.h"

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

/*
 * The report's first line: what, how long, when it ended (wall clock);
 * a window without waits is this line alone, ending "no waits".
 */
static void print_summary(FILE *out, const struct format_meta *meta,
			  const struct report_rows *rows)
{
	char comm[64], when[48];

	text__sanitize(meta->comm ? meta->comm : "?", comm, sizeof(comm));
	if (meta->processes) {
		size_t live = 0;

		for (size_t i = 0; i < meta->n_processes; i++)
			live += !meta->processes[i].exited;
		fprintf(out, "syncprof: %zu processes (%zu running):",
			meta->n_processes, live);
		for (size_t i = 0; i < meta->n_processes && i < 8; i++) {
			text__sanitize(meta->processes[i].comm ?
					 meta->processes[i].comm : "?", comm,
					 sizeof(comm));
			fprintf(out, " %d (%s)%s", (int)meta->processes[i].pid,
				comm, i + 1 < meta->n_processes ? "," : "");
		}
		if (meta->n_processes > 8)
			fprintf(out, " ...");
		fprintf(out, "\nsyncprof: mode %s  elapsed %.2f s  rows %zu/%zu  dropped %" PRIu64,
			meta->mode, meta->elapsed_s, rows->count, rows->total,
			meta->dropped);
	} else {
		fprintf(out, "syncprof: pid %d (%s)  mode %s  elapsed %.2f s  rows %zu/%zu  dropped %" PRIu64,
			(int)meta->pid, comm, meta->mode, meta->elapsed_s,
			rows->count, rows->total, meta->dropped);
	}
	if (meta->unwind_stopped)
		fprintf(out, "  unwind-stopped %" PRIu64, meta->unwind_stopped);
	if (meta->abandoned)
		fprintf(out, "  abandoned %" PRIu64, meta->abandoned);
	format__wall_text(meta->wall_ns, when, sizeof(when));
	if (when[0])
		fprintf(out, "  at %s", when);
	if (!rows->count)
		fputs("  no waits", out);
	fputc('\n', out);
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

static void print_rule(FILE *out, int n)
{
	for (int i = 0; i < n; i++)
		fputc('-', out);
	fputc('\n', out);
}

/* A histogram line under its row in the table. */
static void table_hist_line(const char *line, void *arg)
{
	fprintf(arg, "    %s\n", line);
}

/*
 * No event row shown, some below --top: how many, and their wait, as
 * the line that would have stood before them.
 */
static void table_hidden_events(FILE *out, const struct report_rows *rows)
{
	uint64_t wait_ns = 0;
	size_t n = 0;

	for (size_t i = rows->count; i < rows->total; i++) {
		if (locktype__class_of(rows->rows[i].type) != LOCK_CLASS_EVENT)
			continue;
		n++;
		wait_ns += rows->rows[i].wait_ns;
	}
	if (n)
		fprintf(out, "Waiting for events, not for a lock: %zu more "
			"row%s (%.5f s) below --top; --top 0 or --type event "
			"shows them\n", n, n == 1 ? "" : "s",
			(double)wait_ns * 1e-9);
}

/* What differs between the table's sections. */
struct table_spec {
	const char *site_title;	/* the third column's title */
	bool processes;		/* several processes: a Process column
				   when rows are split by process */
	const char *no_site;	/* its text for address 0, NULL: the address */
	bool failed;		/* the Failed column */
	bool futile;		/* the Futile column when a row has some */
	bool futile_always;	/* ... and when none has (--why) */
	bool hold;		/* Hold Time and Average Hold */
	bool hist;		/* histograms under the rows */
	bool stacks;		/* -g: stacks under the rows */
	bool no_max;		/* no Max column (sums of parts of waits) */
};

/*
 * One section of the table: QSP's columns (the call-site column titled
 * as spec says), then the longest wait, the failed ones, and a Thread
 * and an Owner column when split by thread; its rules are as wide as
 * its lines.
 */
static int table_section(FILE *out, const struct format_config *cfg,
			 const struct table_spec *spec,
			 const struct report_rows *rows,
			 const struct row_names *names)
{
	enum callsite_style style = cfg->callsite;
	struct rowstacks stacks = { 0 };
	struct columns_layout lay;
	struct columns_spec want = {
		.site_title = spec->site_title, .max = !spec->no_max,
		.failed = spec->failed, .futile = spec->futile_always,
		.hold = spec->hold, .sort = -1,
	};
	int err = 0;
	char (*text)[TEXT_MAX] = NULL;
	char (*object)[TEXT_MAX] = NULL;
	char *line = NULL;
	size_t strip = names__source_root(rows, names), line_len;
	size_t events = report__first_event(rows);

	if (rows->count) {
		text = calloc(rows->count, sizeof(*text));
		object = calloc(rows->count, sizeof(*object));
		if (!text || !object) {
			free(text);
			free(object);
			return -ENOMEM;
		}
	}
	want.thread = rows->count && rows->rows[0].tid != REPORT_NO_TID;
	/* Several processes, rows split by process (--per-process). */
	want.process = spec->processes && !want.thread && rows->count &&
		       rows->rows[0].pid != REPORT_NO_TID;
	for (size_t i = 0; i < rows->count; i++) {
		if (!rows->rows[i].callsite && spec->no_site)
			snprintf(text[i], sizeof(text[i]), "%s", spec->no_site);
		else
			names__callsite_text(&names[i].callsite,
					      rows->rows[i].callsite, style,
					      strip, text[i], sizeof(text[i]));
		if (text__width(text[i]) > want.site_need)
			want.site_need = text__width(text[i]);
		names__object_text(&rows->rows[i], names[i].object_symbol,
				    object[i], sizeof(object[i]));
		if (text__width(object[i]) > want.object_need)
			want.object_need = text__width(object[i]);
		/* Owner, when a holder is known. */
		want.owner |= want.thread &&
			      rows->rows[i].owner_tid != REPORT_NO_TID;
		want.futile |= spec->futile && rows->rows[i].futile;
	}
	columns__layout(&want, 0, &lay);
	line_len = (size_t)lay.width * 4 + 64;
	line = malloc(line_len);
	if (!line) {
		free(text);
		free(object);
		return -ENOMEM;
	}
	columns__title(&lay, line, line_len);
	fprintf(out, "%s\n", line);
	print_rule(out, lay.width);
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];

		/* The lock rows first; a line says what the others are. */
		if (i == events) {
			columns__events_line(&lay, line, line_len);
			fprintf(out, "%s\n", line);
		}
		/* A release nobody was seen making has no thread either. */
		columns__row(&lay, r, object[i], text[i],
			     !r->callsite && spec->no_site ? "-" : NULL,
			     line, line_len);
		fprintf(out, "%s\n", line);
		if (spec->hist && hist__total(r->hist)) {
			fputs("    wait (ns)\n", out);
			hist__lines(r->hist, table_hist_line, out);
		}
		if (!spec->stacks || !cfg->symbolizer)
			continue;
		err = rowstacks__name(&stacks, cfg->symbolizer, cfg->stacktab, r);
		if (err)
			break;
		callgraph__print(out, r, &stacks,
				 names__source_root_text(rows, names, strip),
				 strip);
	}
	rowstacks__release(&stacks);
	if (events == rows->count)
		table_hidden_events(out, rows);
	print_rule(out, lay.width);
	free(line);
	free(text);
	free(object);
	return err;
}

/* --lock-order: a lock's name, its symbol or its address. */
static void order_lock_text(const struct format_order_lock *l, char *buf,
			    size_t len)
{
	char raw[TEXT_MAX];

	if (l->object_symbol)
		snprintf(raw, sizeof(raw), "%s", l->object_symbol);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, l->object);
	text__sanitize(raw, buf, len);
}

/* Where a lock was taken; files under the rows' source root without it. */
static void order_site_text(const struct format_config *cfg,
			    const struct format_order_lock *l,
			    const char *root, size_t strip, char *buf,
			    size_t len)
{
	const char *file = l->site_info.file;
	bool under = root && file && !strncmp(file, root, strip);

	names__callsite_text(&l->site_info, l->site, cfg->callsite,
			      under ? strip : 0, buf, len);
}

/* -g: a stack of a lock-order edge, one frame a line. */
static void order_stack_lines(FILE *out, const struct format_config *cfg,
			      const char *root, size_t strip,
			      const char *title, uint64_t stack_id)
{
	const uint64_t *pcs = NULL;
	enum stacktab_end end = STACKTAB_END_STOPPED;
	uint32_t n = 0;

	if (!cfg->stacktab || !stack_id)
		return;
	stacktab__get(cfg->stacktab, stack_id, &pcs, &n, &end);
	fprintf(out, "        %s\n", title);
	for (uint32_t i = 0; i < n; i++) {
		const struct symbol_frame *frames = NULL;
		char text[TEXT_MAX];
		size_t k = 0;

		if (cfg->symbolizer)
			symbolizer__frames(cfg->symbolizer, pcs[i], true,
					   &frames, &k);
		if (!k) {
			fprintf(out, "          0x%" PRIx64 "\n", pcs[i]);
			continue;
		}
		for (size_t f = 0; f < k; f++) {
			names__frame_text(&frames[f], pcs[i], root, strip,
					   text, sizeof(text));
			fprintf(out, "          %s\n", text);
		}
	}
}

/*
 * --lock-order's section: each cycle, its locks in order, then each edge
 * with where the held lock was taken and where the next one was.
 */
static void table_lock_order(FILE *out, const struct format_config *cfg,
			     const struct format_lock_order *lo,
			     const char *root, size_t strip)
{
	if (!lo->n_cycles)
		fputs("\nLock order: no cycles (no two locks taken in orders "
		      "that can deadlock)\n", out);
	else
		fprintf(out, "\nLock order: %zu cycle%s (locks taken in "
			"orders that can deadlock, whether or not they did)\n",
			lo->n_cycles, lo->n_cycles == 1 ? "" : "s");
	for (size_t i = 0; i < lo->n_cycles; i++) {
		const struct format_order_cycle *c = &lo->cycles[i];
		char name[TEXT_MAX];

		fprintf(out, "  %zu. ", i + 1);
		for (size_t k = 0; k < c->n; k++) {
			order_lock_text(&c->edges[k].held, name, sizeof(name));
			fprintf(out, "%s -> ", name);
		}
		order_lock_text(&c->edges[0].held, name, sizeof(name));
		fprintf(out, "%s\n", name);
		for (size_t k = 0; k < c->n; k++) {
			const struct format_order_edge *e = &c->edges[k];
			char held[TEXT_MAX], took[TEXT_MAX];
			char held_at[TEXT_MAX], took_at[TEXT_MAX];

			order_lock_text(&e->held, held, sizeof(held));
			order_lock_text(&e->acquired, took, sizeof(took));
			order_site_text(cfg, &e->held, root, strip, held_at,
					sizeof(held_at));
			order_site_text(cfg, &e->acquired, root, strip, took_at,
					sizeof(took_at));
			fprintf(out, "     holding %s (taken at %s), took %s at "
				"%s: %" PRIu64 " time%s, first by thread %d\n",
				held, held_at, took, took_at, e->count,
				e->count == 1 ? "" : "s", (int)e->tid);
			if (!cfg->stacks)
				continue;
			order_stack_lines(out, cfg, root, strip, "held since:",
					  e->held.stack_id);
			order_stack_lines(out, cfg, root, strip,
					  "took the next at:",
					  e->acquired.stack_id);
		}
	}
	if (lo->pairs_dropped || lo->untracked)
		fprintf(out, "  LOST: %" PRIu64 " pairs of locks (the order "
			"map was full: raise --map-size), %" PRIu64 " locks "
			"taken with %d already held, not followed\n",
			lo->pairs_dropped, lo->untracked, SP_HELD_MAX);
}

/* --why: each row's holder split, on one line under its call site. */
static void table_why_holders(FILE *out, const struct format_config *cfg,
			      const struct format_meta *meta,
			      const struct report_rows *rows,
			      const struct row_names *names)
{
	size_t strip = names__source_root(rows, names);

	fputs("\nWhy they waited: what the holder did during the waits "
	      "(s, % of the row's wait)\n", out);
	for (size_t i = 0; i < rows->count; i++) {
		struct why_row w;
		char site[TEXT_MAX];
		uint64_t sum = 0;

		if (why__row(meta->why, &rows->rows[i], meta->why_rows_by, &w))
			continue;
		for (size_t k = 0; k < SP_WHY__COUNT; k++)
			sum += w.holder[k];
		names__callsite_text(&names[i].callsite, rows->rows[i].callsite,
				     cfg->callsite, strip, site, sizeof(site));
		fprintf(out, "  %s %s:", locktype__name(rows->rows[i].type),
			site);
		for (uint32_t k = 0; k < SP_WHY__COUNT; k++)
			fprintf(out, " %s %.6f (%.0f%%)", why__state_name(k),
				(double)w.holder[k] * 1e-9,
				sum ? 100.0 * (double)w.holder[k] / (double)sum
				    : 0.0);
		fputc('\n', out);
		why__row_free(&w);
	}
}

/*
 * --why: the roots of the rows' chains, as rows of the column model (the
 * waiter's type and object, the root's release site, the waits charged
 * and their share of wait), one section per state of the last holder.
 */
static int table_why(FILE *out, const struct format_config *cfg,
		     const struct format_meta *meta,
		     const struct report_rows *rows,
		     const struct row_names *names)
{
	const struct table_spec roots = {
		.site_title = "Chain ends at", .no_site = "(not seen)",
		.no_max = true,
	};
	uint64_t cut, dropped;
	int err = 0;

	table_why_holders(out, cfg, meta, rows, names);
	for (uint32_t state = 0; !err && state < SP_WHY__COUNT; state++) {
		struct report_rows part = { 0 };
		struct row_names *part_names = NULL;

		err = why__state_rows(meta->why, rows, meta->why_rows_by,
				      state, &part);
		if (!err && part.count)
			err = names__rows(cfg->symbolizer, &part, &part_names);
		if (!err && part.count) {
			fprintf(out, "\nWhere the chains end: %s\n",
				why__state_title(state));
			err = table_section(out, cfg, &roots, &part, part_names);
		}
		free(part_names);
		free(part.rows);
	}
	why__counts(meta->why, &cut, &dropped);
	if (!err && (cut || dropped))
		fprintf(out, "  %" PRIu64 " chains ended before their root (a "
			"holder's own wait not seen, a cycle, or deeper than "
			"%d); %" PRIu64 " charges lost (a full map or a "
			"record)\n", cut, SP_WHY_DEPTH, dropped);
	return err;
}

static int format__table(FILE *out, const struct format_config *cfg,
			 const struct format_meta *meta,
			 const struct report_rows *rows,
			 const struct row_names *names)
{
	const struct table_spec waits = {
		.site_title = "Call site", .failed = true, .hold = meta->hold,
		.futile = true, .futile_always = meta->why != NULL,
		.processes = meta->processes != NULL,
		.hist = meta->hist, .stacks = cfg->stacks,
	};
	const struct table_spec releases = {
		.site_title = "Released at", .no_site = "(not seen)",
	};

	const struct table_spec waiting = { .site_title = "Call site" };
	int err;

	print_summary(out, meta, rows);
	if (meta->findings_text && rows->count)
		fputs(meta->findings_text, out);
	err = rows->count ? table_section(out, cfg, &waits, rows, names) : 0;
	if (!err && meta->dropped) {
		char drops[512];

		/* A replayed report knows how many, not why. */
		if (format__drops_total(&meta->drops))
			format__drops_text(&meta->drops, meta->map_size, drops,
					   sizeof(drops));
		else
			snprintf(drops, sizeof(drops), "DROPPED %" PRIu64
				 " events.", meta->dropped);
		fprintf(out, "%s\n", drops);
	}
	if (!err && meta->blame && meta->blame->count) {
		fputs("\nWho made them wait: where the lock was released when "
		      "each waiter woke\n", out);
		err = table_section(out, cfg, &releases, meta->blame,
				    meta->blame_names);
	}
	if (!err && meta->why)
		err = table_why(out, cfg, meta, rows, names);
	if (!err && meta->waiting && meta->waiting->count) {
		fputs("\nWaiting now: waits in progress when the report was "
		      "made (Count: threads, Wait Time: so far)\n", out);
		err = table_section(out, cfg, &waiting, meta->waiting,
				    meta->waiting_names);
	}
	if (!err && meta->lock_order) {
		size_t strip = names__source_root(rows, names);

		table_lock_order(out, cfg, meta->lock_order,
				 names__source_root_text(rows, names, strip),
				 strip);
	}
	if (!err && meta->states)
		stateformat__table(out, meta->states);
	return err;
}

/*
 * JSON: every key is in every report and every row, null when it does
 * not apply (not asked for, not known), so that the shape never changes
 * ("schema" counts its versions); jsonout.c writes the tree.
 */

static json_t *json_lock_order(const struct format_lock_order *lo,
			       const struct format_config *cfg, int *err);

/*
 * A call site: the address and where it is.  frame: the contract's
 * FRAME, which says too whether it is an inlined call (inlined).
 */
static json_t *json_site(uint64_t addr, const struct symbol_info *cs,
			 bool frame, bool inlined, int *err)
{
	json_t *o = json_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "address", jsonout__hex(true, addr), err);
	jsonout__set(o, "module", jsonout__string(cs->module), err);
	jsonout__set(o, "offset", jsonout__hex(cs->module != NULL,
					       cs->module_offset), err);
	jsonout__set(o, "function", jsonout__string(cs->function), err);
	jsonout__set(o, "file", jsonout__string(cs->file), err);
	jsonout__set(o, "line", jsonout__uint_or_null(cs->line, cs->line), err);
	if (frame)
		jsonout__set(o, "inline", json_boolean(inlined), err);
	return o;
}

static json_t *json_tid(int64_t tid)
{
	return tid == REPORT_NO_TID ? json_null() : json_integer(tid);
}

/* The keys a row of waits, of releases and of waits now begin with. */
static json_t *json_row_head(const struct report_row *r,
			     const struct row_names *n, int *err)
{
	json_t *o = json_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "type", jsonout__string(locktype__name(r->type)), err);
	jsonout__set(o, "class", jsonout__string(locktype__class(r->type)), err);
	jsonout__set(o, "object", jsonout__hex(r->n_objects == 1, r->object), err);
	jsonout__set(o, "objects", jsonout__uint(r->n_objects), err);
	jsonout__set(o, "object_symbol", jsonout__string(n->object_symbol), err);
	return o;
}

/*
 * --blame: the waits each release ended.  A release syncprof did not see
 * (release 0) is null.
 */
static json_t *json_blame(const struct report_rows *rows,
			  const struct row_names *names, int *err)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		json_t *o = json_row_head(r, &names[i], err);

		jsonout__append(list, o, err);
		if (!o)
			break;
		jsonout__set(o, "release", r->callsite ?
			     json_site(r->callsite, &names[i].callsite, true,
				       false, err) : json_null(), err);
		jsonout__set(o, "tid", json_tid(r->callsite ? r->tid
						: REPORT_NO_TID), err);
		jsonout__set(o, "count", jsonout__uint(r->count), err);
		jsonout__set(o, "wait_ns", jsonout__uint(r->wait_ns), err);
		jsonout__set(o, "avg_ns", jsonout__uint(r->count ?
					r->wait_ns / r->count : 0), err);
		jsonout__set(o, "max_ns", jsonout__uint(r->max_ns), err);
	}
	return list;
}

/* The waits in progress: per row, how many and their time so far. */
static json_t *json_waiting(const struct report_rows *rows,
			    const struct row_names *names, int *err)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		json_t *o = json_row_head(r, &names[i], err);

		jsonout__append(list, o, err);
		if (!o)
			break;
		jsonout__set(o, "callsite", json_site(r->callsite,
			     &names[i].callsite, false, false, err), err);
		jsonout__set(o, "tid", json_tid(r->tid), err);
		jsonout__set(o, "count", jsonout__uint(r->count), err);
		jsonout__set(o, "wait_ns", jsonout__uint(r->wait_ns), err);
		jsonout__set(o, "max_ns", jsonout__uint(r->max_ns), err);
	}
	return list;
}

/* Non-empty buckets as [lower_ns, count]. */
static json_t *json_hist(const uint64_t slots[SP_HIST_SLOTS], int *err)
{
	json_t *list = json_array();

	for (size_t k = 0; list && k < SP_HIST_SLOTS; k++) {
		if (slots[k])
			jsonout__append(list, json_pack("[II]",
				(json_int_t)hist__lower(k), (json_int_t)slots[k]), err);
	}
	return list;
}

static json_t *json_quantile(const struct report_row *r, double q)
{
	uint64_t v;

	if (!hist__quantile(r->hist, q, r->max_ns, &v))
		return json_null();
	return jsonout__uint(v);
}

/*
 * --why: the row's wait by the holder's state, and the roots of its
 * chains: {"frame": FRAME (null: release not seen), "state", "wait_ns",
 * "waits", "pid"}, largest first.  "unknown_ns": the wait no holder's
 * clock covers (no owner known, or a wait a signal interrupted);
 * "woken_ns": from the holder's release to the waiter's return.
 */
static json_t *json_why(const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_row *r, int *err)
{
	json_t *o = json_object(), *holder = json_object();
	json_t *roots = json_array();
	struct why_row w;

	if (!o || !holder || !roots || why__row(meta->why, r,
						 meta->why_rows_by, &w)) {
		json_decref(o);
		json_decref(holder);
		json_decref(roots);
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(holder, "running_ns",
		     jsonout__uint(w.holder[SP_WHY_RUNNING]), err);
	jsonout__set(holder, "runnable_ns",
		     jsonout__uint(w.holder[SP_WHY_RUNNABLE]), err);
	jsonout__set(holder, "lock_ns", jsonout__uint(w.holder[SP_WHY_LOCK]),
		     err);
	jsonout__set(holder, "sleep_ns", jsonout__uint(w.holder[SP_WHY_SLEEP]),
		     err);
	jsonout__set(holder, "unknown_ns",
		     jsonout__uint(w.holder[SP_WHY_UNKNOWN]), err);
	jsonout__set(holder, "woken_ns",
		     jsonout__uint(w.holder[SP_WHY_WOKEN]), err);
	for (size_t i = 0; i < w.n_roots; i++) {
		const struct why_root *root = &w.roots[i];
		struct symbol_info info = { 0 };
		json_t *e = json_object();

		jsonout__append(roots, e, err);
		if (!e)
			break;
		if (root->site)
			symbolizer__callsite(cfg->symbolizer, root->site, &info);
		jsonout__set(e, "frame", root->site ?
			     json_site(root->site, &info, true, false, err) :
			     json_null(), err);
		jsonout__set(e, "state",
			     jsonout__string(why__state_name(root->state)), err);
		jsonout__set(e, "wait_ns", jsonout__uint(root->ns), err);
		jsonout__set(e, "waits", jsonout__uint(root->waits), err);
		jsonout__set(e, "pid", root->pid ? json_integer(root->pid)
						 : json_null(), err);
	}
	why__row_free(&w);
	jsonout__set(o, "holder", holder, err);
	jsonout__set(o, "roots", roots, err);
	return o;
}

static json_t *json_row(const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_row *r,
			const struct row_names *n, int *err)
{
	json_t *o = json_row_head(r, n, err);
	bool hold = meta->hold;

	if (!o)
		return NULL;
	jsonout__set(o, "callsite", json_site(r->callsite, &n->callsite, false,
					      false, err), err);
	/* Several processes: the row's process; null when rows merge. */
	jsonout__set(o, "pid", json_tid(r->pid), err);
	jsonout__set(o, "tid", json_tid(r->tid), err);
	/* Who held the lock: per-thread rows only, null when not known. */
	jsonout__set(o, "owner_tid", json_tid(r->tid == REPORT_NO_TID ?
					      REPORT_NO_TID : r->owner_tid), err);
	jsonout__set(o, "count", jsonout__uint(r->count), err);
	jsonout__set(o, "wait_ns", jsonout__uint(r->wait_ns), err);
	jsonout__set(o, "avg_ns", jsonout__uint_or_null(r->count, r->count ?
			report__counted_ns(r) / r->count : 0), err);
	jsonout__set(o, "max_ns", jsonout__uint(r->max_ns), err);
	jsonout__set(o, "failed", jsonout__uint(r->failed), err);
	jsonout__set(o, "failed_ns", jsonout__uint(r->failed_ns), err);
	/* Futile wakeups: 0 where the mode sees none (docs/why.md). */
	jsonout__set(o, "futile", jsonout__uint(r->futile), err);
	jsonout__set(o, "hist", json_hist(r->hist, err), err);
	jsonout__set(o, "p50_ns", json_quantile(r, 0.50), err);
	jsonout__set(o, "p99_ns", json_quantile(r, 0.99), err);
	/* --hold: the holds of the locks the row took; null without. */
	jsonout__set(o, "holds", jsonout__uint_or_null(hold, r->hold_count), err);
	jsonout__set(o, "hold_ns", jsonout__uint_or_null(hold, r->hold_ns), err);
	jsonout__set(o, "hold_avg_ns", jsonout__uint_or_null(hold && r->hold_count,
			r->hold_count ? r->hold_ns / r->hold_count : 0), err);
	jsonout__set(o, "hold_max_ns", jsonout__uint_or_null(hold, r->hold_max_ns),
		     err);
	jsonout__set(o, "stacks", format__json_stacks(r, cfg, err), err);
	/* --why: null without. */
	jsonout__set(o, "why", meta->why ? json_why(cfg, meta, r, err)
					 : json_null(), err);
	return o;
}

/* What syncprof cannot see in the target: always a list. */
static json_t *json_notices(const struct format_meta *meta, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < meta->n_notices; i++)
		jsonout__append(list, jsonout__string(meta->notices[i]), err);
	return list;
}

/* Several processes: each followed one, named as it is now; else null. */
static json_t *json_processes(const struct format_meta *meta, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < meta->n_processes; i++) {
		const struct procset_entry *pr = &meta->processes[i];
		json_t *o = json_object();

		if (!o) {
			*err = -ENOMEM;
			break;
		}
		jsonout__set(o, "pid", json_integer(pr->pid), err);
		jsonout__set(o, "comm", jsonout__string(pr->comm), err);
		jsonout__set(o, "exited", json_boolean(pr->exited), err);
		jsonout__append(list, o, err);
	}
	return list;
}

json_t *format__json_report(const struct format_config *cfg,
			    const struct format_meta *meta,
			    const struct report_rows *rows,
			    const struct row_names *names, int *err)
{
	const struct format_drops *d = &meta->drops;
	json_t *o = json_object(), *list = json_array();
	char when[48];

	if (!o || !list) {
		json_decref(o);
		json_decref(list);
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "schema", json_integer(JSONOUT_SCHEMA), err);
	jsonout__set(o, "pid", json_integer(meta->pid), err);
	jsonout__set(o, "comm", jsonout__string(meta->comm), err);
	jsonout__set(o, "mode", jsonout__string(meta->mode), err);
	jsonout__set(o, "elapsed_s", json_real(meta->elapsed_s), err);
	jsonout__set(o, "start_ns", jsonout__uint(meta->start_ns), err);
	jsonout__set(o, "end_ns", jsonout__uint(meta->end_ns), err);
	/* The window's end by the wall clock; null when not known (an
	 * older recording, replayed). */
	format__wall_text(meta->wall_ns, when, sizeof(when));
	jsonout__set(o, "time", when[0] ? json_string(when) : json_null(), err);
	jsonout__set(o, "time_ns", jsonout__uint_or_null(meta->wall_ns,
							 meta->wall_ns), err);
	jsonout__set(o, "dropped", jsonout__uint(meta->dropped), err);
	jsonout__set(o, "sequence", jsonout__uint(meta->sequence), err);
	jsonout__set(o, "calibration_ns", jsonout__uint(meta->calibration_ns), err);
	jsonout__set(o, "calibration_site_ns", json_pack("{sIsI}",
		"emulated", (json_int_t)meta->calibration_emulated_ns,
		"stepped", (json_int_t)meta->calibration_stepped_ns), err);
	jsonout__set(o, "unwind_stopped", jsonout__uint(meta->unwind_stopped), err);
	jsonout__set(o, "abandoned", jsonout__uint(meta->abandoned), err);
	jsonout__set(o, "stacks_late", json_pack("{sIsI}",
		"finished", (json_int_t)meta->late_finished,
		"cut", (json_int_t)meta->late_cut), err);
	jsonout__set(o, "dropped_causes", json_pack("{sIsIsIsIsI}",
		"map_full", (json_int_t)d->map_full,
		"no_storage", (json_int_t)d->no_storage,
		"nested", (json_int_t)d->nested,
		"skipped", (json_int_t)d->skipped,
		"ring", (json_int_t)d->ring), err);
	jsonout__set(o, "map_size", jsonout__uint(meta->map_size), err);
	jsonout__set(o, "rows_total", jsonout__uint(rows->total), err);
	jsonout__set(o, "notices", json_notices(meta, err), err);
	jsonout__set(o, "processes", meta->processes ?
		     json_processes(meta, err) : json_null(), err);
	jsonout__set(o, "rows", list, err);
	for (size_t i = 0; i < rows->count && !*err; i++)
		jsonout__append(list, json_row(cfg, meta, &rows->rows[i],
					       &names[i], err), err);
	/* What to fix first: null when not judged (an older recording). */
	jsonout__set(o, "findings", meta->findings_json ?
		     json_incref(meta->findings_json) : json_null(), err);
	/* --states: "threads" and "sched_missed", null without. */
	stateformat__json(o, meta->states, err);
	/* --blame: null without. */
	jsonout__set(o, "blame_total", meta->blame ?
		     jsonout__uint(meta->blame->total) : json_null(), err);
	jsonout__set(o, "blame", meta->blame ?
		     json_blame(meta->blame, meta->blame_names, err) :
		     json_null(), err);
	/* --why: chains cut short, charges lost; null without. */
	{
		uint64_t cut, dropped;

		why__counts(meta->why, &cut, &dropped);
		jsonout__set(o, "why_chains_cut", jsonout__uint_or_null(
				     meta->why != NULL, cut), err);
		jsonout__set(o, "why_dropped", jsonout__uint_or_null(
				     meta->why != NULL, dropped), err);
	}
	/* --lock-order: the cycles since attach; null without. */
	jsonout__set(o, "lock_order", meta->lock_order ?
		     json_lock_order(meta->lock_order, cfg, err) :
		     json_null(), err);
	jsonout__set(o, "lock_order_lost", meta->lock_order ?
		     json_pack("{s:I,s:I}",
			       "pairs", (json_int_t)meta->lock_order->pairs_dropped,
			       "untracked", (json_int_t)meta->lock_order->untracked) :
		     json_null(), err);
	/* null when none were read (a replayed recording has none). */
	jsonout__set(o, "waiting", meta->waiting ?
		     json_waiting(meta->waiting, meta->waiting_names, err) :
		     json_null(), err);
	return o;
}

static int format__json(FILE *out, const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_rows *rows,
			const struct row_names *names)
{
	int err = 0;
	json_t *o = format__json_report(cfg, meta, rows, names, &err);

	if (!err)
		err = jsonout__dump(out, o);
	if (!err && fputc('\n', out) == EOF)
		err = -EIO;
	json_decref(o);
	return err;
}

static const char *const stack_end_names[] = {
	[STACKTAB_END_COMPLETE] = "complete",
	[STACKTAB_END_TRUNCATED] = "truncated",
	[STACKTAB_END_STOPPED] = "stopped",
};

/*
 * The frames of one return address (looked up at pc - 1, as "callsite"
 * is): its inlined calls first, each a frame of its own.
 */
static void json_frames_at(json_t *list, struct symbolizer *sym, uint64_t pc,
			   int *err)
{
	const struct symbol_info unknown = { 0 };
	const struct symbol_frame *frames = NULL;
	size_t n = 0;

	if (sym)
		symbolizer__frames(sym, pc, true, &frames, &n);
	if (!n)
		jsonout__append(list, json_site(pc, &unknown, true, false, err),
				err);
	for (size_t k = 0; k < n; k++)
		jsonout__append(list, json_site(pc, &frames[k].info, true,
						frames[k].inlined, err), err);
}

/* --lock-order: one lock of an edge. */
static json_t *json_order_lock(const struct format_order_lock *l,
			       const struct format_config *cfg, int *err)
{
	json_t *o = json_object(), *stack = json_null();
	char name[TEXT_MAX];

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	order_lock_text(l, name, sizeof(name));
	jsonout__set(o, "object", jsonout__string(name), err);
	jsonout__set(o, "address", jsonout__hex(true, l->object), err);
	jsonout__set(o, "type", jsonout__string(locktype__name(l->type)),
		     err);
	jsonout__set(o, "frame", json_site(l->site, &l->site_info, true, false,
					   err), err);
	if (cfg->stacktab && l->stack_id) {
		const uint64_t *pcs = NULL;
		enum stacktab_end end = STACKTAB_END_STOPPED;
		uint32_t n = 0;

		json_decref(stack);
		stack = json_array();
		stacktab__get(cfg->stacktab, l->stack_id, &pcs, &n, &end);
		for (uint32_t i = 0; stack && i < n; i++)
			json_frames_at(stack, cfg->symbolizer, pcs[i], err);
	}
	jsonout__set(o, "stack", stack, err);
	return o;
}

/* The contract's "lock_order": one entry per cycle; [] when none. */
static json_t *json_lock_order(const struct format_lock_order *lo,
			       const struct format_config *cfg, int *err)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < lo->n_cycles; i++) {
		const struct format_order_cycle *c = &lo->cycles[i];
		json_t *o = json_object(), *names = json_array();
		json_t *edges = json_array();

		jsonout__append(list, o, err);
		if (!o || !names || !edges) {
			json_decref(names);
			json_decref(edges);
			*err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < c->n; k++) {
			const struct format_order_edge *e = &c->edges[k];
			json_t *edge = json_object();
			char name[TEXT_MAX];

			order_lock_text(&e->held, name, sizeof(name));
			jsonout__append(names, jsonout__string(name), err);
			jsonout__append(edges, edge, err);
			if (!edge)
				break;
			jsonout__set(edge, "held", json_order_lock(&e->held,
				     cfg, err), err);
			jsonout__set(edge, "acquired", json_order_lock(
				     &e->acquired, cfg, err), err);
			jsonout__set(edge, "count", jsonout__uint(e->count), err);
			jsonout__set(edge, "pid", json_integer(e->pid), err);
			jsonout__set(edge, "tid", json_integer(e->tid), err);
		}
		jsonout__set(o, "objects", names, err);
		jsonout__set(o, "edges", edges, err);
	}
	return list;
}

json_t *format__json_stacks(const struct report_row *r,
			    const struct format_config *cfg, int *err)
{
	json_t *list;

	/* No stacks kept (--stack-depth 0, a recording without them). */
	if (!cfg->stacktab)
		return json_null();
	list = json_array();
	for (size_t i = 0; list && i < r->n_stacks; i++) {
		const struct report_stack *st = &r->stacks[i];
		const uint64_t *frames = NULL;
		enum stacktab_end end = STACKTAB_END_STOPPED;
		json_t *o = json_object(), *fl = json_array();
		uint32_t n = 0;

		jsonout__append(list, o, err);
		if (!o || !fl) {
			json_decref(fl);
			*err = -ENOMEM;
			break;
		}
		/* A stack whose frames were lost (full map) has none. */
		stacktab__get(cfg->stacktab, st->stack_id, &frames, &n, &end);
		for (uint32_t f = 0; f < n; f++)
			json_frames_at(fl, cfg->symbolizer, frames[f], err);
		jsonout__set(o, "frames", fl, err);
		jsonout__set(o, "end", json_string(end <= STACKTAB_END_STOPPED ?
			     stack_end_names[end] : "stopped"), err);
		jsonout__set(o, "count", jsonout__uint(st->count), err);
		jsonout__set(o, "wait_ns", jsonout__uint(st->wait_ns), err);
		jsonout__set(o, "max_ns", jsonout__uint(st->max_ns), err);
		jsonout__set(o, "failed", jsonout__uint(st->failed), err);
	}
	return list;
}

static const char csv_columns[] =
	"report,pid,start_ns,end_ns,dropped,type,object,objects,object_symbol,"
	"callsite,module,offset,function,file,line,tid,count,wait_ns,avg_ns,"
	"max_ns,failed,owner_tid,time_ns,address,class,futile";

void format__csv_header(FILE *out)
{
	fprintf(out, "%s\n", csv_columns);
}

/*
 * callsite is the table's text (file:line, in --callsite's style, under
 * the same source root); the address has a column of its own, and class
 * (lock or event) follows it.  Rows in the table's order: lock rows first.
 */
static int format__csv(FILE *out, const struct format_config *cfg,
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
		fprintf(out, ",0x%" PRIx64 ",%s,%" PRIu64 "\n", r->callsite,
			locktype__class(r->type), r->futile);
	}
	return 0;
}

/* pprof's "process" label: a pid's name among the report's processes. */
static const char *format__process_name(const void *ctx, pid_t pid)
{
	const struct format_meta *meta = ctx;

	for (size_t i = 0; i < meta->n_processes; i++)
		if (meta->processes[i].pid == pid)
			return meta->processes[i].comm;
	return NULL;
}

int format__report(FILE *out, const struct format_config *cfg,
		   const struct format_meta *meta,
		   const struct report_rows *rows,
		   const struct row_names *names)
{
	int err;

	switch (cfg->format) {
	case FORMAT_TABLE:
		err = format__table(out, cfg, meta, rows, names);
		break;
	case FORMAT_CSV:
		err = format__csv(out, cfg, meta, rows, names);
		break;
	case FORMAT_JSON:
		err = format__json(out, cfg, meta, rows, names);
		break;
	case FORMAT_FOLDED:
		err = folded__print(out, cfg->symbolizer, cfg->stacktab, rows,
				    names);
		break;
	case FORMAT_PPROF:
		err = pprof__print(out, cfg->symbolizer, cfg->stacktab,
				   &(const struct pprof_window){
					   .pid = meta->pid,
					   .comm = meta->comm,
					   .mode = meta->mode,
					   .start_ns = meta->start_ns,
					   .end_ns = meta->end_ns,
					   .process_name = format__process_name,
					   .process_ctx = meta,
					   .why = meta->why,
					   .why_rows_by = meta->why_rows_by },
				   rows, names);
		break;
	default:
		err = -EINVAL;
	}
	if (!err && fflush(out))
		err = -errno;
	return err;
}

