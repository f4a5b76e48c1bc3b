// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "folded.h"
#include "format.h"
#include "hist.h"
#include "pprof.h"
#include "rowstacks.h"
#include "srcpath.h"
#include "stateformat.h"

/*
 * Length of the valid UTF-8 sequence at s (its code point in *cp), or 0:
 * a stray byte, an overlong form, a surrogate, beyond Unicode.
 */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		*cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		*cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) ||
	    (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/* C0 and C1 controls and DEL: never written to a terminal as they are. */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

/* Length of a valid, printable UTF-8 sequence at s, or 0. */
static size_t utf8_printable_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n = utf8_decode(s, &cp);

	return n && !is_control(cp) ? n : 0;
}

void format__sanitize(const char *in, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t out = 0;

	if (!len)
		return;
	while (*s && out + 1 < len) {
		size_t n = utf8_printable_len(s);

		if (!n) {
			buf[out++] = '?';
			s++;
			continue;
		}
		if (out + n >= len)
			break;
		memcpy(buf + out, s, n);
		out += n;
		s += n;
	}
	buf[out] = '\0';
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void format__callsite_text(const struct symbol_info *info, uint64_t addr,
			   enum callsite_style style, size_t strip,
			   char *buf, size_t len)
{
	const char *file = info->file && info->line ? info->file : NULL;
	char raw[FORMAT_TEXT_MAX];

	if (file && file[0] == '/' && strlen(file) > strip)
		file += strip;
	if (file && style == CALLSITE_LINE)
		snprintf(raw, sizeof(raw), "%s:%u", file, info->line);
	else if (file && info->function && style == CALLSITE_BOTH)
		snprintf(raw, sizeof(raw), "%s (%s:%u)", info->function, file,
			 info->line);
	else if (info->function)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64, info->function,
			 info->function_offset);
	else if (file)
		snprintf(raw, sizeof(raw), "%s:%u", file, info->line);
	else if (info->module)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64,
			 basename_of(info->module), info->module_offset);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, addr);
	format__sanitize(raw, buf, len);
}

void format__frame_text(const struct symbol_frame *f, uint64_t pc,
			const char *root, size_t root_len, char *buf,
			size_t len)
{
	const struct symbol_info *info = &f->info;
	const char *file = info->file && info->line ? info->file : NULL;
	const char *inlined = f->inlined ? " [inlined]" : "";
	char raw[FORMAT_TEXT_MAX];

	if (file && root && root_len && strlen(file) > root_len &&
	    !strncmp(file, root, root_len))
		file += root_len;
	if (info->function && file)
		snprintf(raw, sizeof(raw), "%s (%s:%u)%s", info->function,
			 file, info->line, inlined);
	else if (info->function && info->module)
		snprintf(raw, sizeof(raw), "%s (%s)%s", info->function,
			 basename_of(info->module), inlined);
	else if (info->function)
		snprintf(raw, sizeof(raw), "%s%s", info->function, inlined);
	else if (file)
		snprintf(raw, sizeof(raw), "%s:%u%s", file, info->line, inlined);
	else if (info->module)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64,
			 basename_of(info->module), info->module_offset);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, pc);
	format__sanitize(raw, buf, len);
}

int format__names(struct symbolizer *sym, const struct report_rows *rows,
		  struct format_names **out)
{
	struct format_names *names = NULL;

	*out = NULL;
	if (!rows->count)
		return 0;
	names = calloc(rows->count, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < rows->count; i++) {
		symbolizer__callsite(sym, rows->rows[i].callsite,
				     &names[i].callsite);
		if (rows->rows[i].n_objects == 1)
			names[i].object_symbol = symbolizer__object(
				sym, rows->rows[i].object);
	}
	*out = names;
	return 0;
}

size_t format__source_root(const struct report_rows *rows,
			   const struct format_names *names)
{
	const char **files = calloc(rows->count ? rows->count : 1, sizeof(*files));
	size_t n = 0, strip;

	if (!files)
		return 0;
	for (size_t i = 0; i < rows->count; i++)
		if (names[i].callsite.file && names[i].callsite.line &&
		    names[i].callsite.file[0] == '/')
			files[n++] = names[i].callsite.file;
	strip = srcpath__common_dir(files, n);
	free(files);
	return strip;
}

const char *format__source_root_text(const struct report_rows *rows,
				     const struct format_names *names,
				     size_t strip)
{
	for (size_t i = 0; strip && i < rows->count; i++)
		if (names[i].callsite.file && names[i].callsite.line &&
		    names[i].callsite.file[0] == '/' &&
		    strlen(names[i].callsite.file) > strip)
			return names[i].callsite.file;
	return NULL;
}

int format__width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_summary(FILE *out, const struct format_meta *meta,
			  const struct report_rows *rows)
{
	char comm[64];

	format__sanitize(meta->comm ? meta->comm : "?", comm, sizeof(comm));
	if (meta->processes) {
		size_t live = 0;

		for (size_t i = 0; i < meta->n_processes; i++)
			live += !meta->processes[i].exited;
		fprintf(out, "syncprof: %zu processes (%zu running):",
			meta->n_processes, live);
		for (size_t i = 0; i < meta->n_processes && i < 8; i++) {
			format__sanitize(meta->processes[i].comm ?
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
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
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

void format__object_text(const struct report_row *r, const char *symbol,
			 char *buf, size_t len)
{
	char raw[FORMAT_TEXT_MAX];

	if (r->n_objects > 1)
		snprintf(raw, sizeof(raw), "[%12u]", r->n_objects);
	else if (symbol)
		snprintf(raw, sizeof(raw), "%s", symbol);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, r->object);
	format__sanitize(raw, buf, len);
}

/* A histogram line under its row in the table. */
static void table_hist_line(const char *line, void *arg)
{
	fprintf(arg, "    %s\n", line);
}

/* What differs between the table's sections. */
struct table_spec {
	const char *site_title;	/* the third column's title */
	bool processes;		/* several processes: a Process column
				   when rows are split by process */
	const char *no_site;	/* its text for address 0, NULL: the address */
	bool failed;		/* the Failed column */
	bool hold;		/* Hold Time and Average Hold */
	bool hist;		/* histograms under the rows */
	bool stacks;		/* -g: stacks under the rows */
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
			 const struct format_names *names)
{
	enum callsite_style style = cfg->callsite;
	struct rowstacks stacks = { 0 };
	int err = 0;
	int title_len = (int)strlen(spec->site_title);
	int callsite_len = title_len;
	int object_len = 14;
	char (*text)[FORMAT_TEXT_MAX] = NULL;
	char (*object)[FORMAT_TEXT_MAX] = NULL;
	size_t strip = format__source_root(rows, names);

	if (rows->count) {
		text = calloc(rows->count, sizeof(*text));
		object = calloc(rows->count, sizeof(*object));
		if (!text || !object) {
			free(text);
			free(object);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < rows->count; i++) {
		int w;

		if (!rows->rows[i].callsite && spec->no_site)
			snprintf(text[i], sizeof(text[i]), "%s", spec->no_site);
		else
			format__callsite_text(&names[i].callsite,
					      rows->rows[i].callsite, style,
					      strip, text[i], sizeof(text[i]));
		w = format__width(text[i]);
		if (w > callsite_len)
			callsite_len = w;
		format__object_text(&rows->rows[i], names[i].object_symbol,
				    object[i], sizeof(object[i]));
		w = format__width(object[i]);
		if (w > object_len)
			object_len = w;
	}
	int rspace = callsite_len - title_len;
	bool per_thread = rows->count && rows->rows[0].tid != REPORT_NO_TID;
	bool owners = false;	/* Owner, when a holder is known */
	bool per_process = spec->processes && !per_thread && rows->count &&
			   rows->rows[0].pid != REPORT_NO_TID;

	for (size_t i = 0; per_thread && i < rows->count; i++)
		owners |= rows->rows[i].owner_tid != REPORT_NO_TID;
	/* QSP's 79 columns with a 9-column call site and a 14-column object. */
	int width = 70 + callsite_len + object_len - 14 + 14 +
		    (spec->failed ? 12 : 0) + (spec->hold ? 34 : 0) +
		    (per_thread ? 10 : 0) + (owners ? 10 : 0) +
		    (per_process ? 10 : 0);

	fprintf(out, "Type     %*s  %s%*s  Wait Time (s)         Count  "
		"Average (us)      Max (us)%s%s%s%s\n", object_len + 2, "Object",
		spec->site_title, rspace, "", spec->failed ? "      Failed" : "",
		spec->hold ? "  Hold Time (s)  Average Hold (us)" : "",
		per_thread ? "    Thread" : per_process ? "   Process" : "",
		owners ? "     Owner" : "");
	print_rule(out, width);
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];

		fprintf(out, "%-9s  %*s%s", report__type_name(r->type),
			object_len - format__width(object[i]), "", object[i]);
		fprintf(out, "  %s%*s  %13.5f  %12" PRIu64, text[i],
			callsite_len - format__width(text[i]), "",
			(double)r->wait_ns * 1e-9, r->count);
		if (r->count)
			fprintf(out, "  %12.2f", (double)report__counted_ns(r) /
						 (double)r->count * 1e-3);
		else
			fprintf(out, "  %12s", "-");
		fprintf(out, "  %12.2f", (double)r->max_ns * 1e-3);
		if (spec->failed)
			fprintf(out, "  %10" PRIu64, r->failed);
		if (spec->hold)
			fprintf(out, "  %13.5f", (double)r->hold_ns * 1e-9);
		if (spec->hold && r->hold_count)
			fprintf(out, "  %17.2f", (double)r->hold_ns /
						 (double)r->hold_count * 1e-3);
		else if (spec->hold)
			fprintf(out, "  %17s", "-");
		if (per_thread && !r->callsite && spec->no_site)
			fprintf(out, "  %8s", "-");	/* nobody seen */
		else if (per_thread && !r->tid)
			fprintf(out, "  %8s", "exited");	/* folded: fold.c */
		else if (per_thread)
			fprintf(out, "  %8" PRId64, r->tid);
		else if (per_process)
			fprintf(out, "  %8" PRId64, r->pid);
		if (owners && r->owner_tid != REPORT_NO_TID)
			fprintf(out, "  %8" PRId64, r->owner_tid);
		else if (owners)
			fprintf(out, "  %8s", "-");
		fputc('\n', out);
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
				 format__source_root_text(rows, names, strip),
				 strip);
	}
	rowstacks__release(&stacks);
	print_rule(out, width);
	free(text);
	free(object);
	return err;
}

static int format__table(FILE *out, const struct format_config *cfg,
			 const struct format_meta *meta,
			 const struct report_rows *rows,
			 const struct format_names *names)
{
	const struct table_spec waits = {
		.site_title = "Call site", .failed = true, .hold = meta->hold,
		.processes = meta->processes != NULL,
		.hist = meta->hist, .stacks = cfg->stacks,
	};
	const struct table_spec releases = {
		.site_title = "Released at", .no_site = "(not seen)",
	};

	const struct table_spec waiting = { .site_title = "Call site" };
	int err;

	print_summary(out, meta, rows);
	err = table_section(out, cfg, &waits, rows, names);
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
	if (!err && meta->blame) {
		fputs("\nWho made them wait: where the lock was released when "
		      "each waiter woke\n", out);
		err = table_section(out, cfg, &releases, meta->blame,
				    meta->blame_names);
	}
	if (!err && meta->waiting && meta->waiting->count) {
		fputs("\nWaiting now: waits in progress when the report was "
		      "made (Count: threads, Wait Time: so far)\n", out);
		err = table_section(out, cfg, &waiting, meta->waiting,
				    meta->waiting_names);
	}
	if (!err && meta->states)
		stateformat__table(out, meta->states);
	return err;
}

/*
 * JSON string or null.  Valid UTF-8 is written as it is, control
 * characters as \uXXXX escapes of their code points; a byte that is not
 * UTF-8 (a file name in another encoding) as \udcXX, the lone surrogate
 * Python's surrogateescape gives it, so that file names round-trip:
 * json.loads(line)[...].encode("utf-8", "surrogateescape") is the name's
 * bytes (os.fsencode does the same).  Rejected: \u00XX (it reads as
 * U+00XX, another character), a second field with the bytes in base64.
 */
static void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*p) {
		uint32_t cp;
		size_t n = utf8_decode(p, &cp);

		if (!n) {
			fprintf(out, "\\udc%02x", *p++);
		} else if (cp == '"' || cp == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (is_control(cp)) {
			fprintf(out, "\\u%04x", cp);
			p += n;
		} else {
			fwrite(p, 1, n, out);
			p += n;
		}
	}
	fputc('"', out);
}

static void json_hex_or_null(FILE *out, bool known, uint64_t v)
{
	if (known)
		fprintf(out, "\"0x%" PRIx64 "\"", v);
	else
		fputs("null", out);
}

/*
 * A call site: the address and where it is.  inlined: NULL for a call
 * site, else "true" or "false" for the contract's FRAME, which says too
 * whether it is an inlined call.
 */
static void json_site(FILE *out, uint64_t addr, const struct symbol_info *cs,
		      const char *inlined)
{
	fputs("{\"address\": ", out);
	json_hex_or_null(out, true, addr);
	fputs(", \"module\": ", out);
	json_string(out, cs->module);
	fputs(", \"offset\": ", out);
	json_hex_or_null(out, cs->module != NULL, cs->module_offset);
	fputs(", \"function\": ", out);
	json_string(out, cs->function);
	fputs(", \"file\": ", out);
	json_string(out, cs->file);
	if (cs->line)
		fprintf(out, ", \"line\": %u", cs->line);
	else
		fputs(", \"line\": null", out);
	if (inlined)
		fprintf(out, ", \"inline\": %s", inlined);
	fputc('}', out);
}

/*
 * --blame: the waits each release ended.  A release syncprof did not see
 * (release 0) is null.
 */
static void json_blame(FILE *out, const struct report_rows *rows,
		       const struct format_names *names)
{
	fprintf(out, ", \"blame_total\": %zu, \"blame\": [", rows->total);
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];

		fputs(i ? ", {\"type\": " : "{\"type\": ", out);
		json_string(out, report__type_name(r->type));
		fputs(", \"object\": ", out);
		json_hex_or_null(out, r->n_objects == 1, r->object);
		fprintf(out, ", \"objects\": %u, \"object_symbol\": ", r->n_objects);
		json_string(out, names[i].object_symbol);
		fputs(", \"release\": ", out);
		if (r->callsite)
			json_site(out, r->callsite, &names[i].callsite, "false");
		else
			fputs("null", out);
		if (r->tid == REPORT_NO_TID || !r->callsite)
			fputs(", \"tid\": null", out);
		else
			fprintf(out, ", \"tid\": %" PRId64, r->tid);
		fprintf(out, ", \"count\": %" PRIu64 ", \"wait_ns\": %" PRIu64
			", \"avg_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 "}",
			r->count, r->wait_ns, r->count ? r->wait_ns / r->count : 0,
			r->max_ns);
	}
	fputc(']', out);
}

/* --hold: the holds of the locks the row took. */
static void json_hold(FILE *out, const struct report_row *r)
{
	fprintf(out, ", \"holds\": %" PRIu64 ", \"hold_ns\": %" PRIu64,
		r->hold_count, r->hold_ns);
	if (r->hold_count)
		fprintf(out, ", \"hold_avg_ns\": %" PRIu64,
			r->hold_ns / r->hold_count);
	else
		fputs(", \"hold_avg_ns\": null", out);
	fprintf(out, ", \"hold_max_ns\": %" PRIu64, r->hold_max_ns);
}

/* The waits in progress: per row, how many and their time so far. */
static void json_waiting(FILE *out, const struct report_rows *rows,
			 const struct format_names *names)
{
	fputs(", \"waiting\": [", out);
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];

		fputs(i ? ", {\"type\": " : "{\"type\": ", out);
		json_string(out, report__type_name(r->type));
		fputs(", \"object\": ", out);
		json_hex_or_null(out, r->n_objects == 1, r->object);
		fprintf(out, ", \"objects\": %u, \"object_symbol\": ", r->n_objects);
		json_string(out, names[i].object_symbol);
		fputs(", \"callsite\": ", out);
		json_site(out, r->callsite, &names[i].callsite, NULL);
		if (r->tid == REPORT_NO_TID)
			fputs(", \"tid\": null", out);
		else
			fprintf(out, ", \"tid\": %" PRId64, r->tid);
		fprintf(out, ", \"count\": %" PRIu64 ", \"wait_ns\": %" PRIu64
			", \"max_ns\": %" PRIu64 "}", r->count, r->wait_ns,
			r->max_ns);
	}
	fputc(']', out);
}

/* Non-empty buckets as [lower_ns, count], and quantile estimates. */
static void json_hist(FILE *out, const uint64_t slots[SP_HIST_SLOTS],
		      uint64_t max_ns)
{
	static const struct { const char *name; double q; } quantiles[] = {
		{ "p50_ns", 0.50 }, { "p99_ns", 0.99 },
	};
	bool first = true;

	fputs(", \"hist\": [", out);
	for (size_t k = 0; k < SP_HIST_SLOTS; k++) {
		if (!slots[k])
			continue;
		fprintf(out, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ",
			hist__lower(k), slots[k]);
		first = false;
	}
	fputc(']', out);
	for (size_t i = 0; i < sizeof(quantiles) / sizeof(quantiles[0]); i++) {
		uint64_t v;

		if (hist__quantile(slots, quantiles[i].q, max_ns, &v))
			fprintf(out, ", \"%s\": %" PRIu64, quantiles[i].name, v);
		else
			fprintf(out, ", \"%s\": null", quantiles[i].name);
	}
}

/*
 * Several processes: "processes", each with its name now; and "notices",
 * things said once on stderr too.
 */
static void json_processes(FILE *out, const struct format_meta *meta)
{
	if (meta->processes) {
		fputs(", \"processes\": [", out);
		for (size_t i = 0; i < meta->n_processes; i++) {
			const struct format_process *pr = &meta->processes[i];

			fprintf(out, "%s{\"pid\": %d, \"comm\": ", i ? ", " : "",
				(int)pr->pid);
			json_string(out, pr->comm);
			fprintf(out, ", \"exited\": %s}",
				pr->exited ? "true" : "false");
		}
		fputc(']', out);
	}
	if (meta->n_notices) {
		fputs(", \"notices\": [", out);
		for (size_t i = 0; i < meta->n_notices; i++) {
			fputs(i ? ", " : "", out);
			json_string(out, meta->notices[i]);
		}
		fputc(']', out);
	}
}

static int format__json(FILE *out, const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_rows *rows,
			const struct format_names *names)
{
	fprintf(out, "{\"pid\": %d, \"comm\": ", (int)meta->pid);
	json_string(out, meta->comm);
	fputs(", \"mode\": ", out);
	json_string(out, meta->mode);
	fprintf(out, ", \"elapsed_s\": %.6f, \"start_ns\": %" PRIu64
		", \"end_ns\": %" PRIu64 ", \"dropped\": %" PRIu64
		", \"sequence\": %u, \"calibration_ns\": %" PRIu64
		", \"calibration_site_ns\": {\"emulated\": %" PRIu64
		", \"stepped\": %" PRIu64 "}"
		", \"unwind_stopped\": %" PRIu64 ", \"abandoned\": %" PRIu64
		", \"dropped_causes\": {\"map_full\": %" PRIu64
		", \"no_storage\": %" PRIu64 ", \"nested\": %" PRIu64
		", \"skipped\": %" PRIu64 ", \"ring\": %" PRIu64 "}"
		", \"map_size\": %u, \"rows_total\": %zu, \"rows\": [",
		meta->elapsed_s, meta->start_ns, meta->end_ns, meta->dropped,
		meta->sequence, meta->calibration_ns,
		meta->calibration_emulated_ns, meta->calibration_stepped_ns,
		meta->unwind_stopped,
		meta->abandoned, meta->drops.map_full, meta->drops.no_storage,
		meta->drops.nested, meta->drops.skipped, meta->drops.ring,
		meta->map_size,
		rows->total);
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		const struct symbol_info *cs = &names[i].callsite;

		fputs(i ? ", {\"type\": " : "{\"type\": ", out);
		json_string(out, report__type_name(r->type));
		fputs(", \"object\": ", out);
		json_hex_or_null(out, r->n_objects == 1, r->object);
		fprintf(out, ", \"objects\": %u, \"object_symbol\": ", r->n_objects);
		json_string(out, names[i].object_symbol);
		fputs(", \"callsite\": ", out);
		json_site(out, r->callsite, cs, NULL);
		if (r->pid == REPORT_NO_TID)
			fputs(", \"pid\": null", out);
		else
			fprintf(out, ", \"pid\": %" PRId64, r->pid);
		if (r->tid == REPORT_NO_TID) {
			fputs(", \"tid\": null", out);
		} else {
			fprintf(out, ", \"tid\": %" PRId64, r->tid);
			/* Per-thread rows only: who held the lock. */
			if (r->owner_tid == REPORT_NO_TID)
				fputs(", \"owner_tid\": null", out);
			else
				fprintf(out, ", \"owner_tid\": %" PRId64,
					r->owner_tid);
		}
		fprintf(out, ", \"count\": %" PRIu64 ", \"wait_ns\": %" PRIu64,
			r->count, r->wait_ns);
		if (r->count)
			fprintf(out, ", \"avg_ns\": %" PRIu64,
				report__counted_ns(r) / r->count);
		else
			fputs(", \"avg_ns\": null", out);
		fprintf(out, ", \"max_ns\": %" PRIu64 ", \"failed\": %" PRIu64
			", \"failed_ns\": %" PRIu64, r->max_ns, r->failed,
			r->failed_ns);
		json_hist(out, r->hist, r->max_ns);
		if (meta->hold)
			json_hold(out, r);
		format__json_stacks(out, r, cfg);
		fputc('}', out);
	}
	fputc(']', out);
	json_processes(out, meta);
	if (meta->states) {
		fputs(", ", out);
		stateformat__json(out, meta->states);
	}
	if (meta->blame)
		json_blame(out, meta->blame, meta->blame_names);
	/* Only when there are: a recording, replayed, has none to show. */
	if (meta->waiting && meta->waiting->count)
		json_waiting(out, meta->waiting, meta->waiting_names);
	fputs("}\n", out);
	return 0;
}

static const char *const stack_end_names[] = {
	[STACKTAB_END_COMPLETE] = "complete",
	[STACKTAB_END_TRUNCATED] = "truncated",
	[STACKTAB_END_STOPPED] = "stopped",
};

static void json_frame(FILE *out, uint64_t pc, const struct symbol_info *info,
		       bool inlined)
{
	json_site(out, pc, info, inlined ? "true" : "false");
}

/*
 * The frames of one return address (looked up at pc - 1, as "callsite"
 * is): its inlined calls first, each a frame of its own.
 */
static void json_frames_at(FILE *out, struct symbolizer *sym, uint64_t pc,
			   bool first)
{
	const struct symbol_info unknown = { 0 };
	const struct symbol_frame *frames = NULL;
	size_t n = 0;

	if (sym)
		symbolizer__frames(sym, pc, true, &frames, &n);
	if (!n) {
		fputs(first ? "" : ", ", out);
		json_frame(out, pc, &unknown, false);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		fputs(first && !k ? "" : ", ", out);
		json_frame(out, pc, &frames[k].info, frames[k].inlined);
	}
}

void format__json_stacks(FILE *out, const struct report_row *r,
			 const struct format_config *cfg)
{
	fputs(", \"stacks\": [", out);
	for (size_t i = 0; cfg->stacktab && i < r->n_stacks; i++) {
		const struct report_stack *st = &r->stacks[i];
		const uint64_t *frames = NULL;
		enum stacktab_end end = STACKTAB_END_STOPPED;
		uint32_t n = 0;

		/* A stack whose frames were lost (full map) has none. */
		stacktab__get(cfg->stacktab, st->stack_id, &frames, &n, &end);
		fputs(i ? ", {\"frames\": [" : "{\"frames\": [", out);
		for (uint32_t f = 0; f < n; f++)
			json_frames_at(out, cfg->symbolizer, frames[f], !f);
		fprintf(out, "], \"end\": \"%s\", \"count\": %" PRIu64
			", \"wait_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64
			", \"failed\": %" PRIu64 "}",
			end <= STACKTAB_END_STOPPED ? stack_end_names[end] : "stopped",
			st->count, st->wait_ns, st->max_ns, st->failed);
	}
	fputc(']', out);
}

static const char csv_columns[] =
	"report,pid,start_ns,end_ns,dropped,type,object,objects,object_symbol,"
	"callsite,module,offset,function,file,line,tid,count,wait_ns,avg_ns,"
	"max_ns,failed,owner_tid";

void format__csv_header(FILE *out)
{
	fprintf(out, "%s\n", csv_columns);
}

/*
 * A path in CSV: its bytes as they are (a file name may hold any byte
 * but NUL), quoted as RFC 4180 says when it holds a comma, a quote, a
 * CR or a LF; read back as bytes (Python: errors="surrogateescape").
 */
static void csv_path_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* A CSV field, whole: sanitized, quoted when it holds a comma or a quote. */
static void csv_field(FILE *out, const char *s)
{
	size_t len;
	char *clean;

	if (!s)
		return;
	len = strlen(s) + 1;
	clean = malloc(len);
	if (!clean)
		return;
	format__sanitize(s, clean, len);
	if (!strpbrk(clean, ",\"")) {
		fputs(clean, out);
	} else {
		fputc('"', out);
		for (const char *p = clean; *p; p++) {
			if (*p == '"')
				fputc('"', out);
			fputc(*p, out);
		}
		fputc('"', out);
	}
	free(clean);
}

void format__csv_field(FILE *out, const char *s)
{
	csv_field(out, s);
}

static int format__csv(FILE *out, const struct format_meta *meta,
		       const struct report_rows *rows,
		       const struct format_names *names)
{
	for (size_t i = 0; i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		const struct symbol_info *cs = &names[i].callsite;

		/* Several processes: the row's, empty when it merges them. */
		fprintf(out, "%u,", meta->sequence);
		if (!meta->processes)
			fprintf(out, "%d", (int)meta->pid);
		else if (r->pid != REPORT_NO_TID)
			fprintf(out, "%" PRId64, r->pid);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,",
			meta->start_ns, meta->end_ns, meta->dropped,
			report__type_name(r->type));
		if (r->n_objects == 1)
			fprintf(out, "0x%" PRIx64, r->object);
		fprintf(out, ",%u,", r->n_objects);
		csv_field(out, names[i].object_symbol);
		fprintf(out, ",0x%" PRIx64 ",", r->callsite);
		csv_path_field(out, cs->module);
		fputc(',', out);
		if (cs->module)
			fprintf(out, "0x%" PRIx64, cs->module_offset);
		fputc(',', out);
		csv_field(out, cs->function);
		fputc(',', out);
		csv_path_field(out, cs->file);
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
		fputc('\n', out);
	}
	return 0;
}

int format__report(FILE *out, const struct format_config *cfg,
		   const struct format_meta *meta,
		   const struct report_rows *rows,
		   const struct format_names *names)
{
	int err;

	switch (cfg->format) {
	case FORMAT_TABLE:
		err = format__table(out, cfg, meta, rows, names);
		break;
	case FORMAT_CSV:
		err = format__csv(out, meta, rows, names);
		break;
	case FORMAT_JSON:
		err = format__json(out, cfg, meta, rows, names);
		break;
	case FORMAT_FOLDED:
		err = folded__print(out, cfg->symbolizer, cfg->stacktab, rows,
				    names);
		break;
	case FORMAT_PPROF:
		err = pprof__print(out, cfg->symbolizer, cfg->stacktab, meta,
				   rows, names);
		break;
	default:
		err = -EINVAL;
	}
	if (!err && fflush(out))
		err = -errno;
	return err;
}

void format__json_string(FILE *out, const char *s)
{
	json_string(out, s);
}
