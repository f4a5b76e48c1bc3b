// SPDX-License-Identifier: GPL-2.0
/*
 * Each recorded wait carries the report window it was counted in, the
 * row it was added to and what it added (count or failure, wait, its
 * candidate maximum), so one pass over the log rebuilds, per report the
 * live run printed, the snapshot that report was made from; the report
 * path (report__build, format__report) is the live one.  The numbers are
 * the live ones when nothing was dropped; waits lost to a full ring are
 * missing here (the report's dropped says how many), and a wait that ended
 * within microseconds of a report being read may fall in the next one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome.h"
#include "evlog.h"
#include "findout.h"
#include "format.h"
#include "log.h"
#include "outfile.h"
#include "recmeta.h"
#include "recnames.h"
#include "hist.h"
#include "replay.h"
#include "report.h"
#include "snapshot.h"

/* Entries added between merges of a report's snapshot. */
#define REPLAY_SEAL_EVERY 65536

struct replay {
	const struct options *opts;
	struct recmeta meta;
	struct recnames *names;
	struct evlog_reader *log;
	int log_fd;
	int stopped;		/* syncprof.stop's errno, or 0 */
	struct snapshot **windows;	/* per report: its own waits */
	size_t *unsealed;
	unsigned int explained;	/* the columns the table's legend gave */
};

/* Why the recording stopped, if syncprof said (recmeta.h): an errno. */
static int replay__stop_reason(const char *dir)
{
	char path[4096], text[32] = "";
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_STOP_NAME);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n > 0 && sscanf(text, "%d", &err) != 1)
		err = 0;
	return err > 0 ? err : 0;
}

static int replay__open(struct replay *r, const char *dir)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_NAME);
	err = recmeta__load(path, &r->meta);
	if (err) {
		if (err == -ENOENT)
			pr_err("%s is not a syncprof recording (no %s)", dir,
			       RECMETA_NAME);
		else
			pr_err("cannot read %s: %s", path, err == -EINVAL ?
			       "not a recording this syncprof reads" :
			       strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, RECNAMES_NAME);
	err = recnames__load(path, &r->names);
	if (err) {
		pr_err("cannot read %s: %s", path, err == -EINVAL ?
		       "not a names file this syncprof reads" : strerror(-err));
		return err;
	}
	r->stopped = replay__stop_reason(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, EVLOG_NAME);
	r->log_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->log_fd < 0) {
		err = -errno;
		pr_err("cannot read %s: %s", path, strerror(-err));
		return err;
	}
	err = evlog__reader_new(r->log_fd, &r->log);
	if (err)
		pr_err("cannot read %s: %s", path, err == -EINVAL ?
		       "not an event log this syncprof reads" : strerror(-err));
	return err;
}

/* The report whose windows hold `window`, or -1. */
static long replay__report_of(const struct recmeta *m, uint32_t window)
{
	size_t lo = 0, hi = m->n_reports;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->reports[mid].last_window < window)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n_reports && m->reports[lo].first_window <= window)
		return (long)lo;
	return -1;
}

/*
 * A wait as the kernel added it to its row: an ending wait (counted or
 * failed) also goes into the row's histogram, at its whole acquisition
 * (max_ns), as stats_add() puts it.
 */
static int replay__add(struct replay *r, size_t report,
		       const struct sp_wait_event *e)
{
	uint64_t wait = e->end_ns - e->start_ns;
	bool failed = e->flags & SP_EVENT_FAILED;
	const struct sp_value v = {
		.count = e->flags & SP_EVENT_COUNTED ? 1 : 0,
		.wait_ns = wait,
		.max_ns = e->max_ns,
		.failed = failed ? 1 : 0,
		.failed_ns = failed ? e->max_ns : 0,
		.window_max_ns = e->max_ns,
	};
	int err = snapshot__add(r->windows[report], &e->key, &v, 1, 0);

	if (!err && (e->flags & (SP_EVENT_COUNTED | SP_EVENT_FAILED))) {
		struct sp_hist hist = { { 0 } };

		hist.slot[hist__slot(e->max_ns)] = 1;
		err = snapshot__add_hist(r->windows[report], &e->key, &hist);
	}

	if (!err && ++r->unsealed[report] >= REPLAY_SEAL_EVERY) {
		snapshot__seal(r->windows[report]);
		r->unsealed[report] = 0;
	}
	return err;
}

/* One pass over the waits: each into the snapshot of its report. */
static int replay__read(struct replay *r)
{
	size_t n = r->meta.n_reports;
	struct sp_wait_event e;
	int got, err = 0;

	r->windows = calloc(n, sizeof(*r->windows));
	r->unsealed = calloc(n, sizeof(*r->unsealed));
	if (!r->windows || !r->unsealed)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		err = snapshot__new(&r->windows[i]);
	evlog__rewind(r->log);
	while (!err && (got = evlog__read(r->log, &e)) > 0) {
		long report;

		if (e.flags & SP_EVENT_LOST_ONLY)
			continue;
		report = replay__report_of(&r->meta, e.window);
		if (report >= 0)
			err = replay__add(r, (size_t)report, &e);
		/* Cut short: the rest's report ends with its last wait. */
		if (report >= 0 && r->meta.partial && (size_t)report == n - 1 &&
		    e.end_ns > r->meta.reports[n - 1].end_ns)
			r->meta.reports[n - 1].end_ns = e.end_ns;
	}
	if (!err && got < 0)
		err = got;
	for (size_t i = 0; !err && i < n; i++)
		snapshot__seal(r->windows[i]);
	if (!err && evlog__torn(r->log)) {
		/* Cut in the middle of a wait's record: that wait is lost. */
		r->meta.lost++;
		if (n)
			r->meta.reports[n - 1].dropped++;
	}
	return err;
}

static void replay__callsite(void *ctx, uint64_t addr,
			     struct symbol_info *out)
{
	recnames__callsite(ctx, addr, out);
}

static const char *replay__object(void *ctx, const struct report_row *row)
{
	return recnames__object(ctx, row->object);
}

/* The rows named from the recording, as names__rows names a live run's. */
static int replay__names(struct replay *r, const struct report_rows *rows,
			 struct row_names **out)
{
	const struct names_source src = {
		replay__callsite, replay__object, r->names,
	};

	return names__rows_from(&src, rows, out);
}

static int replay__print(struct replay *r, FILE *out,
			 const struct snapshot *view,
			 const struct recmeta_report *rep, uint64_t start_ns)
{
	struct findout weights = { 0 };
	json_t *findings = rep->findings_json ?
			   json_loads(rep->findings_json, 0, NULL) : NULL;
	/* The run's threads' weights: the rows in the order it printed. */
	bool weighed = !r->opts->sort_given && r->opts->sort == SORT_TOTAL &&
		       !findout__weights_parse(rep->weights, &weights) &&
		       weights.n_threads;
	const struct report_settings settings = {
		.coalesce = r->opts->coalesce,
		.per_thread = r->opts->per_thread,
		.sort = r->opts->sort,
		.top = r->opts->top,
		.weigh = weighed ? findout__weigh : NULL,
		.weigh_ctx = &weights,
	};
	const struct format_meta meta = {
		.pid = r->meta.pid,
		.comm = r->meta.comm,
		.mode = r->meta.mode,
		.elapsed_s = (double)(rep->end_ns - start_ns) * 1e-9,
		.start_ns = start_ns,
		.end_ns = rep->end_ns,
		.wall_ns = rep->wall_ns,
		.dropped = rep->dropped,
		.drops = {
			.map_full = rep->map_full, .no_storage = rep->no_storage,
			.nested = rep->nested, .skipped = rep->skipped,
			.ring = rep->ring,
		},
		.map_size = r->meta.map_size,
		.calibration_ns = r->meta.calibration_ns,
		.calibration_emulated_ns = r->meta.calibration_emulated_ns,
		.calibration_stepped_ns = r->meta.calibration_stepped_ns,
		.unwind_stopped = rep->unwind_stopped,
		.abandoned = rep->abandoned,
		.sequence = rep->sequence,
		.findings_text = rep->findings_text,
		.findings_json = findings,
	};
	struct row_names *names = NULL;
	struct report_rows rows = { 0 };
	int err = report__build(snapshot__entries(view), snapshot__count(view),
				&settings, &rows);

	if (!err)
		err = replay__names(r, &rows, &names);
	/* A recording keeps call sites, not stacks: no stacks to show. */
	const struct format_config cfg = {
		.format = r->opts->format,
		.callsite = r->opts->callsite,
		.width = outfile__terminal_cols(out),
		.explained = &r->explained,
	};

	if (!err)
		err = format__report(out, &cfg, &meta, &rows, names);
	free(names);
	report__free(&rows);
	json_decref(findings);
	findout__free(&weights);
	return err;
}

static int replay__reports(struct replay *r, FILE *out)
{
	struct snapshot *total = NULL, *merged;
	int err = replay__read(r);

	if (err) {
		pr_err("cannot read the recorded waits: %s", strerror(-err));
		return err;
	}
	if (r->opts->format == FORMAT_CSV)
		format__csv_header(out);
	for (size_t i = 0; !err && i < r->meta.n_reports; i++) {
		const struct recmeta_report *rep = &r->meta.reports[i];

		if (!r->opts->cumulative) {
			err = replay__print(r, out, r->windows[i], rep,
					    rep->start_ns);
			continue;
		}
		err = snapshot__merge(total, r->windows[i], &merged);
		if (err)
			break;
		snapshot__free(total);
		total = merged;
		err = replay__print(r, out, total, rep, r->meta.attach_ns);
	}
	snapshot__free(total);
	if (err)
		pr_err("%s", strerror(-err));
	return err;
}

/*
 * A recording with no report noted, or cut short after its last: one
 * report of the rest (its end: the last checkpoint's, or a later wait's).
 */
static int replay__rest(struct replay *r)
{
	size_t n = r->meta.n_reports;
	const struct recmeta_report *last = n ? &r->meta.reports[n - 1] : NULL;
	const struct recmeta_report rest = {
		.sequence = last ? last->sequence + 1 : 1,
		.first_window = last ? last->last_window + 1 : 0,
		.last_window = UINT32_MAX,
		.start_ns = last ? last->end_ns : r->meta.attach_ns,
		.end_ns = r->meta.end_ns,
		.dropped = last ? 0 : r->meta.lost,
		.ring = last ? 0 : r->meta.lost,
	};

	if (last && last->last_window == UINT32_MAX)
		return 0;
	if (r->meta.partial && (r->stopped == ENOSPC || r->stopped == EDQUOT))
		pr_warn("%s was cut short by a full disk (%s): syncprof could "
			"not write more of it; it is read up to its last whole "
			"record, and waits after that were not recorded",
			r->opts->replay_dir, strerror(r->stopped));
	else if (r->meta.partial && r->stopped)
		pr_warn("%s was cut short: syncprof could not write more of it "
			"(%s); it is read up to its last whole record, and waits "
			"after that were not recorded", r->opts->replay_dir,
			strerror(r->stopped));
	else if (r->meta.partial)
		pr_warn("%s was cut short: syncprof stopped before it finished "
			"it (killed?); it is read up to its last whole record, "
			"and waits after that were not recorded", r->opts->replay_dir);
	return recmeta__add_report(&r->meta, &rest);
}

int replay__run(const struct options *opts, FILE *out)
{
	struct replay r = { .opts = opts, .log_fd = -1 };
	int err = replay__open(&r, opts->replay_dir);

	if (!err && (!r.meta.n_reports || r.meta.partial))
		err = replay__rest(&r);
	if (!err && opts->chrome) {
		struct outfile *f = NULL;

		err = outfile__open(NULL, opts->chrome, OUTFILE_WHOLE, &f);
		if (!err)
			err = chrome__export(outfile__stream(f), &r.meta,
					     r.names, r.log);
		if (!err) {
			err = outfile__close(f);
		} else if (f) {
			pr_err("cannot write %s: %s", opts->chrome,
			       strerror(-err));
			outfile__discard(f);
		}
	}
	if (!err)
		err = replay__reports(&r, out);
	for (size_t i = 0; r.windows && i < r.meta.n_reports; i++)
		snapshot__free(r.windows[i]);
	free(r.windows);
	free(r.unsealed);
	evlog__reader_free(r.log);
	if (r.log_fd >= 0)
		close(r.log_fd);
	recnames__free(r.names);
	recmeta__clear(&r.meta);
	return err;
}
