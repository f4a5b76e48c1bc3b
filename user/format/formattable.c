// SPDX-License-Identifier: GPL-2.0
/*
 * The table, QSP's shape: the summary line, each section's rows under
 * their columns (columns.c), the lock-order cycles and --why's holders.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callgraph.h"
#include "columns.h"
#include "hist.h"
#include "locktype.h"
#include "stateformat.h"
#include "text.h"
#include "whatifout.h"

#include "formatimpl.h"

/*
 * What to fix first (findout's block, a line each): each line folded at
 * the terminal's width as the summary is, between words.
 */
static void table_findings(FILE *out, const char *text, int width)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)len, text);
		text__print_folded(out, line, width, " ");
		text += len + (nl ? 1 : 0);
	}
}

/*
 * The report's first line: what, how long, when it ended (wall clock);
 * a window without waits is this line alone, ending "no waits".
 */
static void print_summary(FILE *out, const struct format_meta *meta,
			  const struct report_rows *rows, int width)
{
	char comm[64], when[48], line[1024];
	char *pos = line, *end = line + sizeof(line);

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
		fputc('\n', out);
		text__append(&pos, end, "syncprof: mode %s  elapsed %.2f s  rows %zu/%zu  dropped %" PRIu64,
			     meta->mode, meta->elapsed_s, rows->count, rows->total,
			     meta->dropped);
	} else {
		text__append(&pos, end, "syncprof: pid %d (%s)  mode %s  elapsed %.2f s  rows %zu/%zu  dropped %" PRIu64,
			     (int)meta->pid, comm, meta->mode, meta->elapsed_s,
			     rows->count, rows->total, meta->dropped);
	}
	if (meta->unwind_stopped)
		text__append(&pos, end, "  unwind-stopped %" PRIu64, meta->unwind_stopped);
	if (meta->abandoned)
		text__append(&pos, end, "  abandoned %" PRIu64, meta->abandoned);
	if (meta->duty)
		text__append(&pos, end, "  duty %u%% ~estimated", meta->duty->pct);
	format__wall_text(meta->wall_ns, when, sizeof(when));
	if (when[0])
		text__append(&pos, end, "  at %s", when);
	if (!rows->count)
		text__append(&pos, end, "  no waits");
	/* A terminal's width: the fields on as many lines as it takes. */
	text__print_folded(out, line, width, "  ");
}

/*
 * --duty: what the ~ on the header line means.  The sums are estimates,
 * the means and maxima measured (docs/modes.md).
 */
static void table_duty_legend(FILE *out, const struct format_duty *d)
{
	double on, all;

	if (!d)
		return;
	on = (double)d->on_ns * 1e-9;
	all = (double)(d->on_ns + d->off_ns) * 1e-9;
	fprintf(out, "~ --duty %u%%: the probes were on %.2f s of %.2f s "
		"(sampled; attached %.2f s); Count, Total Wait, Total Hold and "
		"the failures are estimates (what they saw x%.2f), the "
		"averages, percentiles and maxima measured in the samples; "
		"%" PRIu64 " calls or holds cut by a switch off, not counted\n",
		d->pct, on, all, (double)d->attached_ns * 1e-9,
		on > 0 ? all / on : 1.0, d->cut);
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
		want.failed_seen |= rows->rows[i].failed != 0;
	}
	if (cfg->width > 0)
		columns__fit(&want, rows, object, text);
	columns__layout(&want, cfg->width, &lay);
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
	/* What the titles do not say, the first time they are shown. */
	columns__legend(&lay, cfg->explained, line, line_len);
	if (line[0])
		fprintf(out, "%s\n", line);
	free(line);
	free(text);
	free(object);
	return err;
}

/* --lock-order: a lock's name, its symbol or its address. */
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
			format__order_lock_text(&c->edges[k].held, name, sizeof(name));
			fprintf(out, "%s -> ", name);
		}
		format__order_lock_text(&c->edges[0].held, name, sizeof(name));
		fprintf(out, "%s\n", name);
		for (size_t k = 0; k < c->n; k++) {
			const struct format_order_edge *e = &c->edges[k];
			char held[TEXT_MAX], took[TEXT_MAX];
			char held_at[TEXT_MAX], took_at[TEXT_MAX];

			format__order_lock_text(&e->held, held, sizeof(held));
			format__order_lock_text(&e->acquired, took, sizeof(took));
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

int format__table(FILE *out, const struct format_config *cfg,
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

	print_summary(out, meta, rows, cfg->width);
	if (meta->findings_text && rows->count)
		table_findings(out, meta->findings_text, cfg->width);
	err = rows->count ? table_section(out, cfg, &waits, rows, names) : 0;
	if (!err)
		table_duty_legend(out, meta->duty);
	if (!err && meta->dropped) {
		char drops[512];

		/* A replayed report knows how many, not why. */
		if (format__drops_total(&meta->drops))
			format__drops_text(&meta->drops, meta->map_size, drops,
					   sizeof(drops));
		else
			snprintf(drops, sizeof(drops), "DROPPED %" PRIu64
				 " events.", meta->dropped);
		text__print_folded(out, drops, cfg->width, " ");
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
		fputc('\n', out);
		text__print_folded(out, "Waiting now: waits in progress when "
				   "the report was made (Count: threads, Wait "
				   "Time: so far)", cfg->width, " ");
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
	if (!err && meta->what_if)
		whatifout__table(out, meta->what_if);
	return err;
}
