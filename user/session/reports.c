// SPDX-License-Identifier: GPL-2.0
/*
 * A session's reports: every read of the probes goes through
 * session__read (the change since the last joins the pending window),
 * and each report prints the window since the last one, or the totals
 * (--cumulative), with --blame's charges and, at the end, the waits
 * still in progress.  The live screen takes the same reads.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "debugfetch.h"
#include "duty.h"
#include "findout.h"
#include "format.h"
#include "live.h"
#include "log.h"
#include "outfile.h"
#include "names.h"
#include "options.h"
#include "orderview.h"
#include "probes.h"
#include "recording.h"
#include "report.h"
#include "notices.h"
#include "snapshot.h"
#include "stateformat.h"
#include "target.h"
#include "threadrun.h"
#include "threadstates.h"
#include "threadtable.h"
#include "whyrows.h"
#include "session.h"

/* The windows a session reports, and where they go. */
struct reports {
	FILE *out;		/* stdout, or -o's stream */
	FILE *states_csv;	/* --states-csv's stream, or NULL */
	struct outfile *out_file, *states_file;	/* -o, --states-csv */
	struct snapshot *prev;	/* the last read: totals since attach */
	struct snapshot *pending; /* what changed since the last report */
	struct snapshot *prev_blame;	/* --blame: the last read */
	struct snapshot *prev_caused;	/* the holds' charges: the last read */
	struct threadrun *run;		/* the threads' run times */
	struct findout_known *known;	/* the findings' locks' names */
	uint64_t live_ns;		/* the live screen's last findings */
	uint64_t findings_cpu_ns;	/* this thread's CPU in findings */
	uint64_t findings_calls;	/* ... over these (polls, reports) */
	struct why *prev_why;		/* --why: the last read */
	uint64_t read_ns;	/* when prev was read */
	uint64_t read_gap_ns;	/* ... after the read before it */
	uint64_t attach_ns;	/* when counting began: the probes went live */
	uint64_t last_ns;	/* when the last report's window ended */
	uint64_t next_window;	/* the first window of the next delta report */
	unsigned int sequence;	/* reports printed */
	unsigned int explained;	/* the columns the table's legend gave */
	struct threadtable *threads;	/* --states: the kernel's table */
	struct threadstates *states;	/* --states: the accounting */
	bool group_threads;	/* --states: by name (the live screen's g) */
	struct lockorder *lock_order;	/* --lock-order, or NULL */
	struct orderview_names order_names;	/* its classes' names */
	bool keep_changes;	/* --serve: every read's change kept ... */
	struct snapshot *changes;	/* ... until taken */
};

/*
 * Where the reports go: stdout or -o's file, and --states-csv's; the
 * messages say what could not be opened.
 */
int session__reports_open(struct session *s)
{
	const struct options *opts = s->opts;
	struct reports *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	s->reports = r;
	r->group_threads = opts->group_threads;
	r->out = stdout;
	if (opts->output) {
		err = outfile__open(NULL, opts->output,
				    opts->format == FORMAT_PPROF ?
				    OUTFILE_WHOLE : OUTFILE_GROWING, &r->out_file);
		if (err)
			return err;
		r->out = outfile__stream(r->out_file);
	}
	if (opts->states_csv) {
		err = outfile__open(NULL, opts->states_csv, OUTFILE_GROWING,
				    &r->states_file);
		if (err)
			return err;
		r->states_csv = outfile__stream(r->states_file);
	}
	return 0;
}

/*
 * Closes the outputs (their errors printed) and frees the windows: 0, or
 * the first error of a write.
 */
int session__reports_close(struct session *s)
{
	struct reports *r = s->reports;
	int err, err2;

	if (!r)
		return 0;
	if (r->findings_calls)
		pr_info("findings: %.3f ms of CPU over %llu calls (run-time "
			"polls, reports: %.1f us each)",
			(double)r->findings_cpu_ns * 1e-6,
			(unsigned long long)r->findings_calls,
			(double)r->findings_cpu_ns * 1e-3 /
			(double)r->findings_calls);
	threadtable__free(r->threads);
	threadstates__free(r->states);
	snapshot__free(r->prev);
	snapshot__free(r->prev_blame);
	snapshot__free(r->prev_caused);
	threadrun__free(r->run);
	findout__known_free(r->known);
	why__free(r->prev_why);
	snapshot__free(r->pending);
	snapshot__free(r->changes);
	lockorder__free(r->lock_order);
	err = outfile__close(r->out_file);
	err2 = outfile__close(r->states_file);
	free(r);
	s->reports = NULL;
	return err ? err : err2;
}

/* The header lines of the CSV outputs, once each. */
void session__reports_begin(struct session *s)
{
	struct reports *r = s->reports;

	if (s->opts->format == FORMAT_CSV)
		format__csv_header(r->out);
	if (r->states_csv)
		stateformat__csv_header(r->states_csv);
}

/* Processes whose threads' run times are read between reports too. */
#define FINDINGS_POLL_PROCESSES 64

/* This thread's CPU time: what findings cost (syncprof -v). */
static void findings_clock(struct reports *r, uint64_t since_ns)
{
	r->findings_cpu_ns += clock__thread_cpu_ns() - since_ns;
	r->findings_calls++;
}

struct session_views;
static void session__findings(struct session *s,
			      const struct session_views *v,
			      uint64_t window_ns, struct findout *out);

/*
 * Counting begins at at_ns (0: now): when the probes went live (and
 * once before the attach, for a target that leaves before they do).
 */
void session__set_origin(struct session *s, uint64_t at_ns)
{
	struct reports *r = s->reports;

	r->attach_ns = r->last_ns = at_ns ? at_ns : clock__monotonic_ns();
}

/*
 * The probes are attached: the first window began at the origin, once
 * every probe that counts was in (the load, the verifier and the
 * placing of the probes count nothing, and are no part of it); with
 * --states it begins at the first read of the threads map.  *origin_ns:
 * when.
 */
int session__open_window(struct session *s, uint64_t *origin_ns)
{
	struct reports *r = s->reports;
	int err = r->states ? session__now(s, &r->attach_ns) : 0;

	if (err)
		return err;
	r->last_ns = r->read_ns = r->live_ns = r->attach_ns;
	*origin_ns = r->attach_ns;
	session__findings(s, NULL, 0, NULL);	/* the threads' start */
	return 0;
}

/* The totals since attach, as last read (NULL: none read yet). */
const struct snapshot *session__totals(const struct session *s)
{
	return s->reports->prev;
}

void session__read_span(const struct session *s, uint64_t *start_ns,
			uint64_t *read_ns)
{
	*start_ns = s->reports->attach_ns;
	*read_ns = s->reports->read_ns;
}

void session__keep_changes(struct session *s)
{
	s->reports->keep_changes = true;
}

struct snapshot *session__take_changes(struct session *s)
{
	struct snapshot *changes = s->reports->changes;

	s->reports->changes = NULL;
	return changes;
}

/*
 * Between reports: a read when the last is half a housekeeping period
 * old (exited threads' rows leave the kernel's map then).  --serve: a
 * scrape reads for itself, and each read walks every bucket of the
 * maps (a few thousand rows in a hundred thousand buckets: the largest
 * part of an idle server's CPU), so a read every SERVE_READ_S, unless
 * the maps fill: the most rows a map had at the last read, at the rate
 * they came (over at least a housekeeping period), would pass
 * 1/SERVE_READ_FILL_SHARE of --map-size in SERVE_READ_S.
 */
#define SERVE_READ_S 5.0
#define SERVE_READ_FILL_SHARE 4

static bool session__maps_filling(const struct session *s)
{
	double gap_s = fmax(s->reports->read_gap_ns * 1e-9, HOUSEKEEPING_S);

	return !s->probes || !s->reports->read_gap_ns ||
	       probes__rows_most(s->probes) * fmax(SERVE_READ_S / gap_s, 1) >
	       (double)s->opts->map_size / SERVE_READ_FILL_SHARE;
}

int session__read_between(struct session *s)
{
	double period_s = HOUSEKEEPING_S / 2;
	int err;

	if (s->opts->serve && !session__maps_filling(s))
		period_s = SERVE_READ_S;
	if (clock__monotonic_ns() - s->reports->read_ns < period_s * 1e9)
		return 0;
	err = session__read(s);
	return err ? err : 1;
}

/*
 * --states: the threads map filled from /proc, the scheduler tracepoints
 * attached, and /proc read again for the threads created in between.
 */
int session__states_start(struct session *s)
{
	struct reports *r = s->reports;
	pid_t pid = target__pid(s->target);
	bool totals = s->opts->cumulative ||
		      live__applies(s->opts, isatty(STDOUT_FILENO));
	int err = threadstates__new(totals, &r->states);

	size_t n_procs = 0;
	const struct procset_entry *procs = session__processes(s, &n_procs);

	if (!err)
		err = threadtable__new(probes__threads_fd(s->probes), pid,
				       &r->threads);
	/* Several (--why): every process followed so far; forks later are
	   added by the programs as they fork. */
	for (size_t i = 0; !err && i < n_procs; i++)
		if (!procs[i].exited)
			err = threadtable__add_pid(r->threads, procs[i].pid);
	if (!err)
		err = threadtable__sync(r->threads, clock__monotonic_ns());
	if (!err) {
		int attach = probes__attach_states(s->probes);

		if (attach)
			return attach;	/* it said why */
		err = threadtable__sync(r->threads, clock__monotonic_ns());
	}
	if (err)
		pr_err("cannot follow the threads of PID %d: %s", (int)pid,
		       strerror(-err));
	return err;
}

int session__lock_order_start(struct session *s)
{
	struct reports *r = s->reports;

	r->order_names = (struct orderview_names){ s->symbolizer,
						    session__space(s) };
	return lockorder__new(probes__lock_order_fd(s->probes),
			      orderview__named, &r->order_names,
			      &r->lock_order);
}

/*
 * --lock-order: the pairs the kernel has seen so far, into the graph,
 * and its cycles named.  Every report shows every cycle since attach.
 */
static int session__lock_order(struct session *s,
			       struct format_lock_order *view)
{
	struct reports *r = s->reports;
	int err = lockorder__read(r->lock_order);

	if (err) {
		pr_err("cannot read the lock order: %s", strerror(-err));
		return err;
	}
	err = orderview__build(r->lock_order, &r->order_names, view);
	if (!err)
		probes__lock_order_drops(s->probes, &view->pairs_dropped,
					 &view->untracked);
	return err;
}

void session__drops(struct session *s, struct format_drops *out)
{
	struct probes_drops d;

	probes__drops(s->probes, &d);
	*out = (struct format_drops){
		.map_full = d.map_full, .no_storage = d.no_storage,
		.nested = d.nested, .skipped = d.skipped, .ring = d.ring,
		.blame_full = d.blame_full, .caused_full = d.caused_full,
	};
}

/* --states: one read of the threads map into the accounting, at *now_ns. */
int session__read_states(struct session *s, uint64_t *now_ns)
{
	struct reports *r = s->reports;
	const struct thread_sample *samples;
	size_t n;
	int err = threadtable__read(r->threads, &samples, &n, now_ns);

	if (!err)
		err = threadstates__update(r->states, samples, n, *now_ns);
	return err;
}

/* The end of a window: the threads map's read when --states runs. */
int session__now(struct session *s, uint64_t *now_ns)
{
	struct reports *r = s->reports;
	if (r->states)
		return session__read_states(s, now_ns);
	*now_ns = clock__monotonic_ns();
	return 0;
}

/* Rows of a view (NULL: none), named. */
static int session__rows(struct session *s, const struct snapshot *view,
			 const struct report_settings *settings,
			 struct report_rows *rows, struct row_names **names)
{
	const char *news;
	int err = 0;

	*rows = (struct report_rows){ 0 };
	*names = NULL;
	if (view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), settings, rows);
	if (!err)
		err = names__rows(s->symbolizer, rows, names);
	for (size_t i = 0; !err && i < rows->count; i++) {
		const struct symbol_info *cs = &(*names)[i].callsite;
		const char *text = cs->function ? NULL :
			notices__offsets(s->notices, cs->module);

		if (text)
			pr_warn("%s", text);
	}
	news = err ? NULL : debugfetch__news(s->fetch);
	if (news && notices__debuginfod(s->notices, news))
		pr_warn("%s", news);
	if (err)
		report__free(rows);
	return err;
}

/* What one report shows, over one window. */
struct session_views {
	const struct snapshot *rows;	/* NULL: nothing read since a reset */
	const struct snapshot *blame;	/* --blame's charges, or NULL */
	const struct why *why;		/* --why's charges, or NULL */
	const struct snapshot *waiting;	/* waits in progress at its end */
	const struct snapshot *caused;	/* the holds' charges, or NULL */
};

/*
 * What to fix first in the window v shows (window_ns long), weighing
 * each thread by its run time since the last call (v NULL: only that
 * sample, at the first window's start).  A failure leaves the findings
 * out, with a warning.
 */
static void session__findings(struct session *s,
			      const struct session_views *v,
			      uint64_t window_ns, struct findout *out)
{
	struct reports *r = s->reports;
	struct findings_thread *threads = NULL;
	size_t n_threads = 0, alive = 0, n_procs = 0, n_pids = 1;
	const struct procset_entry *procs = session__process_names(s, &n_procs);
	pid_t one = target__pid(s->target), *pids = &one;
	uint64_t cpu0 = clock__thread_cpu_ns();
	int err = 0;

	if (s->opts->serve && !v)
		return;		/* --serve prints no report to judge */
	if (!r->run && (err = threadrun__new(&r->run)))
		goto out;
	if (!r->known && !(r->known = findout__known_new())) {
		err = -ENOMEM;
		goto out;
	}
	if (n_procs) {
		pids = calloc(n_procs, sizeof(*pids));
		if (!pids) {
			err = -ENOMEM;
			goto out;
		}
		n_pids = 0;
		for (size_t i = 0; i < n_procs; i++)
			if (!procs[i].exited)
				pids[n_pids++] = procs[i].pid;
	}
	if (!v && out) {
		/*
		 * A poll between reports keeps the run times of threads
		 * that exit before the report; with many processes (--all)
		 * only the reports read them.
		 */
		if (n_pids <= FINDINGS_POLL_PROCESSES)
			err = threadrun__poll(r->run, pids, n_pids);
	}
	else
		err = threadrun__sample(r->run, pids, n_pids, window_ns,
					&threads, &n_threads, &alive);
	if (pids != &one)
		free(pids);
	if (!err && v && out)
		err = findout__build(v->rows, v->caused ? v->caused : v->blame,
				     v->why, s->opts->mode == MODE_FULL, threads, n_threads, window_ns,
				     s->symbolizer, r->known, out);
	free(threads);
out:
	if (err)
		pr_warn("cannot judge what to fix first: %s", strerror(-err));
	findings_clock(r, cpu0);
}

/*
 * Prints one report of the waits counted in windows [first_window,
 * last_window], and notes it for --replay; stacks: -g's stacks under the
 * table's rows; with --states, the thread states of the window since the
 * span's start (their CSV file too).
 */
static int session__print(struct session *s, const struct session_views *v,
			  const struct report_settings *settings, bool stacks,
			  enum states_span span, uint64_t start_ns,
			  uint64_t end_ns, uint64_t first_window,
			  uint64_t last_window)
{
	struct reports *r = s->reports;
	struct states_report states = { 0 };
	struct row_names *names = NULL, *blame_names = NULL;
	struct row_names *waiting_names = NULL;
	struct report_rows rows = { 0 }, blame_rows = { 0 };
	struct report_rows waiting_rows = { 0 };
	struct format_lock_order order = { 0 };
	struct findout findings = { 0 };
	char *findings_text = NULL;
	size_t findings_len = 0;
	json_t *findings_json = NULL;
	struct format_drops drops;
	uint64_t dropped;
	int err;

	session__findings(s, v, end_ns - start_ns, &findings);
	{
		uint64_t cpu0 = clock__thread_cpu_ns();
		FILE *text = open_memstream(&findings_text, &findings_len);
		int jerr = 0;

		if (text) {
			findout__table(text, &findings, s->opts->callsite);
			fclose(text);
		}
		findings_json = findout__json(&findings, &jerr);
		if (jerr) {
			json_decref(findings_json);
			findings_json = NULL;
		}
		r->findings_cpu_ns += clock__thread_cpu_ns() - cpu0;
	}
	session__drops(s, &drops);
	dropped = format__drops_total(&drops);
	/* Without --sort, the rows go by impact, as the findings. */
	struct report_settings by_impact = *settings;

	if (!s->opts->sort_given && by_impact.sort == SORT_TOTAL) {
		by_impact.weigh = findout__weigh;
		by_impact.weigh_ctx = &findings;
	}
	err = session__rows(s, v->rows, &by_impact, &rows, &names);
	if (!err && s->opts->blame)
		err = session__rows(s, v->blame, settings, &blame_rows,
				    &blame_names);
	if (!err)
		err = session__rows(s, v->waiting, settings, &waiting_rows,
				    &waiting_names);
	if (!err && r->lock_order)
		err = session__lock_order(s, &order);
	if (!err && r->states) {
		err = threadstates__report(r->states, span, r->group_threads,
					   &states);
		states.sched_missed = probes__sched_missed(s->probes);
	}
	if (err) {
		free(names);
		free(blame_names);
		free(waiting_names);
		orderview__free(&order);
		report__free(&waiting_rows);
		threadstates__free_report(&states);
		report__free(&rows);
		report__free(&blame_rows);
		findout__free(&findings);
		free(findings_text);
		json_decref(findings_json);
		return err;
	}
	size_t n_notices = 0;
	size_t n_procs = 0;
	const struct procset_entry *procs = session__processes(s, &n_procs);
	const struct session_calibration *cal = &s->calibration;
	struct probes_late_stats late;
	char scope[256];

	probes__late_stats(s->probes, &late);
	session__notice_children(s, session__totals(s));
	session__scope(s, scope, sizeof(scope));
	struct format_duty duty = { 0 };

	if (s->duty) {
		struct duty_times t;

		duty__times(s->duty, end_ns, &t);
		duty = (struct format_duty){
			.pct = t.pct, .on_ns = t.on_ns, .off_ns = t.off_ns,
			.cut = t.cut, .switch_ns = t.switch_ns,
			.attached_ns = t.attached_ns, .switches = t.switches,
			.kept = t.kept,
		};
	}
	const struct format_meta meta = {
		.pid = target__pid(s->target),
		.comm = session__comm(s),
		.scope = scope,
		.processes = procs,
		.n_processes = n_procs,
		.mode = options__mode_name(s->opts->mode),
		.elapsed_s = (double)(end_ns - start_ns) * 1e-9,
		.start_ns = start_ns,
		.end_ns = end_ns,
		.wall_ns = clock__wall_of(end_ns),
		.dropped = dropped,
		.drops = drops,
		.map_size = s->opts->map_size,
		.calibration_ns = cal->ns,
		.calibration_emulated_ns = cal->site_ns[SP_SITE_EMULATED],
		.calibration_stepped_ns = cal->site_ns[SP_SITE_STEPPED],
		.unwind_stopped = probes__unwind_stopped(s->probes),
		.abandoned = probes__abandoned(s->probes),
		.late_finished = late.finished,
		.late_cut = late.cut,
		.sequence = ++r->sequence,
		.states = r->states ? &states : NULL,
		.hist = s->opts->hist,
		.hold = s->opts->hold,
		.blame = s->opts->blame ? &blame_rows : NULL,
		.blame_names = blame_names,
		.why = v->why,
		.why_rows_by = settings,
		/* Read for the last report only: null in the others. */
		.waiting = v->waiting ? &waiting_rows : NULL,
		.waiting_names = waiting_names,
		.lock_order = r->lock_order ? &order : NULL,
		.what_if = s->what_if,
		.findings_text = findings_text,
		.findings_json = findings_json,
		.notices = notices__list(s->notices, &n_notices),
		.n_notices = n_notices,
		.duty = s->duty ? &duty : NULL,
	};
	const struct format_config cfg = {
		.format = s->opts->format,
		.callsite = s->opts->callsite,
		.stacks = stacks,
		.symbolizer = s->symbolizer,
		.stacktab = s->stacks,
		.width = outfile__terminal_cols(r->out),
		.explained = &r->explained,
	};
	err = format__report(r->out, &cfg, &meta, &rows, names);
	if (r->out_file)	/* names the file, once; a profile put in place */
		err = outfile__commit(r->out_file) ?: err;
	if (!err && s->recording) {
		char *json_text = findings_json ?
				  json_dumps(findings_json, JSON_COMPACT) : NULL;
		char *weights = by_impact.weigh ?
				findout__weights_text(&findings) : NULL;
		const struct recmeta_report note = {
			.sequence = meta.sequence,
			.first_window = (uint32_t)first_window,
			.last_window = (uint32_t)last_window,
			.start_ns = start_ns,
			.end_ns = end_ns,
			.dropped = dropped,
			.unwind_stopped = meta.unwind_stopped,
			.abandoned = meta.abandoned,
			.map_full = drops.map_full,
			.no_storage = drops.no_storage,
			.nested = drops.nested,
			.skipped = drops.skipped,
			.ring = drops.ring,
			.wall_ns = meta.wall_ns,
			.findings_text = findings_text,
			.findings_json = json_text,
			.weights = weights,
		};

		err = recording__note_report(s->recording, &note);
		free(json_text);
		free(weights);
	}
	if (!err && r->states_csv) {
		stateformat__csv(r->states_csv, meta.sequence, meta.pid, &states);
		err = outfile__flush(r->states_file);
	}
	if (dropped && s->opts->format != FORMAT_TABLE) {
		char text[512];

		format__drops_text(&drops, s->opts->map_size, text, sizeof(text));
		pr_warn("%s", text);
	}
	free(names);
	free(blame_names);
	free(waiting_names);
	orderview__free(&order);
	report__free(&rows);
	threadstates__free_report(&states);
	report__free(&blame_rows);
	report__free(&waiting_rows);
	findout__free(&findings);
	free(findings_text);
	json_decref(findings_json);
	return err;
}

/* The waits in progress now; a failure leaves them out, with a warning. */
static struct snapshot *session__waiting(struct session *s, uint64_t now_ns)
{
	struct snapshot *waiting = NULL;
	int err = probes__read_waiting(s->probes, now_ns, &waiting);

	if (err)
		pr_warn("cannot read the waits in progress: %s", strerror(-err));
	session__rekey(s, waiting);
	return waiting;
}

/* Reads the probes: the change since the read before joins pending.
   Every read goes through here, reports or not (see fold.c). */
int session__read(struct session *s)
{
	struct reports *r = s->reports;
	struct snapshot *snap, *delta = NULL, *sum = NULL;
	int err;

	/* Several: told exits and first waits first (folded rows are named
	   as they go).  No probes: the target exited before they attached. */
	if (s->probes && session__space(s))
		session__take_events(s);
	err = s->probes ? probes__read(s->probes, &snap) : snapshot__new(&snap);
	if (err)
		return err;
	/* The window ends as the counts are read: a call that ends while
	   the stacks are read after them is the next window's. */
	{
		uint64_t before = r->read_ns;

		err = session__now(s, &r->read_ns);
		r->read_gap_ns = r->read_ns - before;
	}
	/* keys canonical already: probes__set_stacks */
	if (!err && s->probes)
		err = probes__read_stacks(s->probes, snap, s->stacks);
	err = err ? err : snapshot__follow(&r->pending, snap);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	/* --duty: scaled at the report (duty__scale), not at each read. */
	err = snapshot__delta(snap, r->prev, &delta);
	if (!err && r->keep_changes) {
		struct snapshot *changes = NULL;

		err = snapshot__merge(r->changes, delta, &changes);
		if (!err) {
			snapshot__free(r->changes);
			r->changes = changes;
		}
	}
	if (!err)
		err = snapshot__merge(r->pending, delta, &sum);
	snapshot__free(delta);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	snapshot__free(r->pending);
	r->pending = sum;
	snapshot__free(r->prev);
	r->prev = snap;
	/* The threads' run times, read while they live. */
	session__findings(s, NULL, 0, &(struct findout){ 0 });
	/* The read's arrays go back: the RSS is what the rows need.  It
	   trims every arena, the server's threads' too: after a storm of
	   1,600 short programs under --all --serve, a malloc_trim(0) from
	   outside gave nothing more back (VmRSS 129.8 -> 133.4 MB), so the
	   threads' arenas are left as they are (no M_ARENA_MAX). */
	malloc_trim(0);
	return 0;
}

int session__read_apart(struct session *s)
{
	struct reports *r = s->reports;
	struct snapshot *pending = r->pending;
	int err;

	r->pending = NULL;
	err = session__read(s);
	snapshot__free(r->pending);
	r->pending = pending;
	return err;
}

/*
 * The stacks cut by a table read late, finished with the tables read
 * since; the last report's read gives up on the rest (counted).
 */
static int session__finish_late(struct session *s, bool final)
{
	int err = probes__finish_late(s->probes, s->stacks, final);

	if (err)
		pr_warn("cannot finish the stacks cut by late tables: %s",
			strerror(-err));
	return err == -ENOMEM ? err : 0;
}

/*
 * One report of the window since the last; the last report of the run
 * (final) also lists the waits still in progress.  Interval reports do
 * not: those waits are counted in the window where they end, and a
 * recording replays the same reports (--replay) without knowing them.
 */
int session__report(struct session *s, bool final)
{
	struct reports *r = s->reports;
	const struct report_settings settings = {
		.coalesce = s->opts->coalesce,
		.per_thread = s->opts->per_thread,
		.per_process = s->opts->per_process || !s->follow,
		.sort = s->opts->sort,
		.top = s->opts->top,
		.stacks = s->stacks,
	};
	struct snapshot *blame = NULL, *blame_delta = NULL, *waiting = NULL;
	struct snapshot *caused = NULL, *caused_delta = NULL;
	struct why *why = NULL, *why_delta = NULL;
	struct session_views views;
	uint64_t closed;
	int err = session__finish_late(s, final);

	if (!err)
		err = session__read(s);
	if (!err)
		err = session__read_charges(s, &blame, &why, &caused);
	if (err)
		return err;
	closed = s->probes ? probes__window(s->probes) - 1 : 0;
	if (final && s->probes)
		waiting = session__waiting(s, r->read_ns);
	if (final)
		session__notice_off_cpu(s, session__totals(s), waiting);
	if (s->opts->cumulative) {
		struct snapshot *all = NULL;

		if (s->duty && !snapshot__merge(NULL, r->prev, &all))
			duty__scale(s->duty, all, r->read_ns, true, false);
		views = (struct session_views){ all ? all : r->prev, blame, why,
						waiting, caused };
		err = session__print(s, &views, &settings, s->opts->stacks,
				     STATES_SINCE_ORIGIN, r->attach_ns,
				     r->read_ns, 0, closed);
		snapshot__free(all);
	} else {
		duty__scale(s->duty, r->pending, r->read_ns, false, true);
		if (blame)
			err = snapshot__delta(blame, r->prev_blame, &blame_delta);
		if (!err && why)
			err = why__delta(why, r->prev_why, &why_delta);
		if (!err && caused)
			err = snapshot__delta(caused, r->prev_caused,
					      &caused_delta);
		views = (struct session_views){ r->pending, blame_delta,
						why_delta, waiting,
						caused_delta };
		if (!err)
			err = session__print(s, &views, &settings,
					     s->opts->stacks, STATES_SINCE_MARK,
					     r->last_ns, r->read_ns,
					     r->next_window, closed);
		snapshot__free(blame_delta);
		snapshot__free(caused_delta);
		why__free(why_delta);
	}
	snapshot__free(waiting);
	r->next_window = closed + 1;
	if (r->states)
		threadstates__mark(r->states);
	snapshot__free(r->pending);
	r->pending = NULL;
	snapshot__free(r->prev_blame);
	r->prev_blame = blame;
	snapshot__free(r->prev_caused);
	r->prev_caused = caused;
	why__free(r->prev_why);
	r->prev_why = why;
	r->last_ns = r->read_ns;
	return err;
}

/*
 * The live screen's line of what to fix first, from the refresh's
 * window (delta) and the holds' charges since the last refresh.
 */
static void session__live_findings(struct session *s,
				   const struct snapshot *delta)
{
	struct reports *r = s->reports;
	struct snapshot *caused = NULL, *caused_delta = NULL;
	struct findout findings = { 0 };
	char line[512];

	if (s->probes && s->opts->mode == MODE_CONTENDED &&
	    !probes__read_caused(s->probes, &caused)) {
		session__rekey_blame(s, caused);
		if (snapshot__delta(caused, r->prev_caused, &caused_delta))
			caused_delta = NULL;
		snapshot__free(r->prev_caused);
		r->prev_caused = caused;
	}
	const struct session_views v = {
		.rows = delta, .caused = caused_delta,
	};

	session__findings(s, &v, r->read_ns > r->live_ns ?
			  r->read_ns - r->live_ns : 0, &findings);
	r->live_ns = r->read_ns;
	findout__line(&findings, line, sizeof(line));
	live__set_findings(s->live, line);
	findout__free(&findings);
	snapshot__free(caused_delta);
}

/* The live screen: a refresh, read into the screen instead of printed. */
int session__refresh(struct session *s)
{
	struct reports *r = s->reports;
	struct format_drops drops;
	struct snapshot *delta;
	int err = session__read(s);

	if (err)
		return err;
	delta = r->pending;
	r->pending = NULL;
	r->last_ns = r->read_ns;
	duty__scale(s->duty, delta, r->read_ns, false, true);
	session__drops(s, &drops);
	if (session__space(s)) {
		size_t n;

		session__processes(s, &n);
		live__set_processes(s->live, n, session__alive(s));
	}
	if (r->lock_order) {
		err = lockorder__read(r->lock_order);
		if (err)
			return err;
		live__set_lock_cycles(s->live,
				      (long)lockorder__cycles(r->lock_order));
	}
	if (s->opts->why) {
		struct why *why = NULL;

		err = probes__read_why(s->probes, &why);
		session__rekey_why(s, why);
		if (err) {
			snapshot__free(delta);
			return err;
		}
		live__set_why(s->live, why);
	}
	session__live_findings(s, delta);
	return live__update(s->live, r->prev, delta, r->last_ns, &drops);
}

/*
 * Ends the live screen with one last refresh, restores the terminal, and
 * prints the totals since attach (or the last reset) as a table, with the
 * settings the keys left.
 */
int session__live_end(struct session *s)
{
	struct reports *r = s->reports;
	struct report_settings settings = { .top = s->opts->top };
	const struct snapshot *totals;
	struct snapshot *blame = NULL, *waiting, *caused = NULL;
	struct why *why = NULL;
	struct session_views views;
	uint64_t since_ns;
	int err = session__refresh(s);

	live__end(s->live);
	if (!err)
		err = session__read_charges(s, &blame, &why, &caused);
	if (err)
		return err;
	waiting = session__waiting(s, r->last_ns);
	totals = live__totals(s->live, &settings, &since_ns);
	/*
	 * A reset ('r') is not in the windows: --replay shows since attach;
	 * the blame covers the run since attach too.
	 */
	r->group_threads = live__group_threads(s->live);
	views = (struct session_views){ totals, blame, why, waiting, caused };
	err = session__print(s, &views, &settings, live__stacks_shown(s->live),
			     STATES_SINCE_ORIGIN, since_ns, r->last_ns, 0,
			     probes__window(s->probes) - 1);
	snapshot__free(blame);
	snapshot__free(caused);
	why__free(why);
	snapshot__free(waiting);
	return err;
}

/* --interval on a terminal: the live screen, or plain reports without one. */
void session__live_start(struct session *s)
{
	struct reports *r = s->reports;
	char cmdline[256];
	int err;

	if (target__cmdline(s->target, cmdline, sizeof(cmdline)))
		snprintf(cmdline, sizeof(cmdline), "%s", target__comm(s->target));
	const struct live_config cfg = {
		.pid = target__pid(s->target),
		.cmdline = cmdline,
		.mode = options__mode_name(s->opts->mode),
		.interval_s = s->opts->interval_s,
		.cumulative = s->opts->cumulative,
		.sort = s->opts->sort,
		.coalesce = s->opts->coalesce,
		.per_thread = s->opts->per_thread,
		.callsite = s->opts->callsite,
		.stacks = s->opts->stacks,
		.symbolizer = s->symbolizer,
		.stacktab = s->stacks,
		.attach_ns = r->attach_ns,
		.states = r->states,
		.group_threads = s->opts->group_threads,
		.map_size = s->opts->map_size,
		.why = s->opts->why,
	};
	err = live__new(&cfg, &s->live);
	if (err)
		pr_warn("no live screen (%s); printing reports instead",
			strerror(-err));
}
