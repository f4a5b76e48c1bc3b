// SPDX-License-Identifier: GPL-2.0
/*
 * syncprof's lifecycle, linear: parse, check the host, find or launch the
 * target, load and attach the probes, let a launched target go, then one
 * poll loop over signals, the target's pidfd and the report timers, a
 * final report, and one cleanup path in reverse order.
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "calibrate.h"
#include "condprobe.h"
#include "debugfetch.h"
#include "format.h"
#include "hostcheck.h"
#include "libcmodel.h"
#include "live.h"
#include "log.h"
#include "outfile.h"
#include "options.h"
#include "probes.h"
#include "procset.h"
#include "procspace.h"
#include "readiness.h"
#include "recording.h"
#include "replay.h"
#include "report.h"
#include "skiplist.h"
#include "notices.h"
#include "snapshot.h"
#include "stacktab.h"
#include "stateformat.h"
#include "symbolizer.h"
#include "target.h"
#include "threadstates.h"
#include "threadtable.h"

struct session {
	const struct options *opts;
	struct target *target;
	struct probes *probes;
	struct symbolizer *symbolizer;
	struct debugfetch *fetch;	/* debuginfod, or NULL */
	struct stacktab *stacks;	/* the stacks the probes read, by id */
	struct libcmodel *libc;	/* contended mode: the target's libc */
	struct skiplist *skip;	/* --skip */
	struct notices *notices;	/* what syncprof cannot see in it */
	struct snapshot *prev;	/* the last read: totals since attach */
	struct snapshot *pending; /* what changed since the last report */
	uint64_t read_ns;	/* when prev was read */
	struct snapshot *prev_blame;	/* --blame: the last read */
	struct live *live;	/* the live screen, or NULL */
	struct recording *recording;	/* --record, --chrome; or NULL */
	uint64_t next_window;	/* the first window of the next delta report */
	struct threadtable *threads;	/* --states: the kernel's table */
	struct threadstates *states;	/* --states: the accounting */
	bool group_threads;	/* --states: by name (the live screen's g) */
	FILE *out;
	FILE *states_csv;	/* --states-csv, or NULL */
	struct outfile *out_file, *states_file;	/* -o, --states-csv */
	uint64_t attach_ns;
	uint64_t calibration_ns;
	uint64_t calibration_site_ns[SP_SITE__COUNT];
	uint64_t last_ns;
	unsigned int sequence;
	/* Several processes (several --pid, --children); else NULL. */
	struct procset *procs;
	struct procspace *space;
	bool root_exited;	/* the first target's pidfd said so */
	bool notice_children;	/* the --children notice was given */
	struct probes_proc_event *naming;	/* events whose names wait */
	size_t n_naming, naming_cap;
};

/* Several processes: an address of pid, as reports key it. */
static uint64_t session__translate(void *ctx, pid_t pid, uint64_t addr)
{
	struct session *s = ctx;

	return procspace__canonical(s->space, pid, addr);
}

static void session__rekey_one(void *ctx, struct sp_key *key)
{
	struct session *s = ctx;
	pid_t pid = (pid_t)key->pid;

	key->callsite = procspace__canonical(s->space, pid, key->callsite);
	key->object = procspace__canonical(s->space, pid, key->object);
}

/* The first target's name now: after an exec, its new program's. */
static const char *session__comm(struct session *s)
{
	size_t n;
	const struct format_process *list =
		s->procs ? procset__list(s->procs, &n) : NULL;

	return list && n ? list[0].comm : target__comm(s->target);
}

/* A snapshot's rows of several processes, merged by module and offset. */
static void session__rekey(struct session *s, struct snapshot *snap)
{
	if (s->space && snap)
		snapshot__rekey(snap, session__rekey_one, s);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void session__drops(struct session *s, struct format_drops *out)
{
	struct probes_drops d;

	probes__drops(s->probes, &d);
	*out = (struct format_drops){
		.map_full = d.map_full, .no_storage = d.no_storage,
		.nested = d.nested, .skipped = d.skipped, .ring = d.ring,
	};
}

/* --states: one read of the threads map into the accounting, at *now_ns. */
static int session__read_states(struct session *s, uint64_t *now_ns)
{
	const struct thread_sample *samples;
	size_t n;
	int err = threadtable__read(s->threads, &samples, &n, now_ns);

	if (!err)
		err = threadstates__update(s->states, samples, n, *now_ns);
	return err;
}

/* The end of a window: the threads map's read when --states runs. */
static int session__now(struct session *s, uint64_t *now_ns)
{
	if (s->states)
		return session__read_states(s, now_ns);
	*now_ns = monotonic_ns();
	return 0;
}

/*
 * The target has children, --children was not given, and it shows no
 * lock activity itself: the work is likely in the children.  Said once
 * on stderr, and in the JSON reports from then on.
 */
static void session__notice_children(struct session *s)
{
	const struct snapshot_entry *e;
	const char *text;
	pid_t *kids = NULL;
	size_t n_kids = 0, cap = 0;

	if (s->opts->children || s->notice_children || !s->prev ||
	    !s->notices)
		return;
	e = snapshot__entries(s->prev);
	for (size_t i = 0; i < snapshot__count(s->prev); i++)
		if (e[i].count || e[i].wait_ns || e[i].failed)
			return;
	for (size_t i = 0; i < s->opts->n_pids || (!i && s->opts->command);
	     i++) {
		pid_t pid = s->opts->command ? target__pid(s->target)
					     : s->opts->pids[i];

		procset__children(pid, &kids, &n_kids, &cap);
		if (s->opts->command)
			break;
	}
	free(kids);
	if (!n_kids)
		return;
	s->notice_children = true;
	text = notices__children(s->notices);
	if (text)
		log__notice("%s", text);
}

/* Rows of a view (NULL: none), named. */
static int session__rows(struct session *s, const struct snapshot *view,
			 const struct report_settings *settings,
			 struct report_rows *rows, struct format_names **names)
{
	const char *news;
	int err = 0;

	*rows = (struct report_rows){ 0 };
	*names = NULL;
	if (view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), settings, rows);
	if (!err)
		err = format__names(s->symbolizer, rows, names);
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
	const struct snapshot *waiting;	/* waits in progress at its end */
};

/* A CLOCK_MONOTONIC time (the programs' clock) by the wall clock. */
static uint64_t wall_of(uint64_t mono_ns)
{
	struct timespec mono, real;
	uint64_t mono_now, real_now;

	if (clock_gettime(CLOCK_MONOTONIC, &mono) ||
	    clock_gettime(CLOCK_REALTIME, &real))
		return 0;
	mono_now = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	real_now = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
	return real_now - (mono_now > mono_ns ? mono_now - mono_ns : 0);
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
	struct states_report states = { 0 };
	struct format_names *names = NULL, *blame_names = NULL;
	struct format_names *waiting_names = NULL;
	struct report_rows rows = { 0 }, blame_rows = { 0 };
	struct report_rows waiting_rows = { 0 };
	struct format_drops drops;
	uint64_t dropped;
	int err;

	session__drops(s, &drops);
	dropped = format__drops_total(&drops);
	err = session__rows(s, v->rows, settings, &rows, &names);
	if (!err && s->opts->blame)
		err = session__rows(s, v->blame, settings, &blame_rows,
				    &blame_names);
	if (!err)
		err = session__rows(s, v->waiting, settings, &waiting_rows,
				    &waiting_names);
	if (!err && s->states) {
		err = threadstates__report(s->states, span, s->group_threads,
					   &states);
		states.sched_missed = probes__sched_missed(s->probes);
	}
	if (err) {
		free(names);
		free(blame_names);
		free(waiting_names);
		report__free(&waiting_rows);
		threadstates__free_report(&states);
		report__free(&rows);
		report__free(&blame_rows);
		return err;
	}
	size_t n_notices = 0;
	size_t n_procs = 0;
	const struct format_process *procs =
		s->space ? procset__list(s->procs, &n_procs) : NULL;

	session__notice_children(s);
	const struct format_meta meta = {
		.pid = target__pid(s->target),
		.comm = session__comm(s),
		.processes = procs,
		.n_processes = n_procs,
		.mode = options__mode_name(s->opts->mode),
		.elapsed_s = (double)(end_ns - start_ns) * 1e-9,
		.start_ns = start_ns,
		.end_ns = end_ns,
		.wall_ns = wall_of(end_ns),
		.dropped = dropped,
		.drops = drops,
		.map_size = s->opts->map_size,
		.calibration_ns = s->calibration_ns,
		.calibration_emulated_ns = s->calibration_site_ns[SP_SITE_EMULATED],
		.calibration_stepped_ns = s->calibration_site_ns[SP_SITE_STEPPED],
		.unwind_stopped = probes__unwind_stopped(s->probes),
		.abandoned = probes__abandoned(s->probes),
		.sequence = ++s->sequence,
		.states = s->states ? &states : NULL,
		.hist = s->opts->hist,
		.hold = s->opts->hold,
		.blame = s->opts->blame ? &blame_rows : NULL,
		.blame_names = blame_names,
		/* Read for the last report only: null in the others. */
		.waiting = v->waiting ? &waiting_rows : NULL,
		.waiting_names = waiting_names,
		.notices = notices__list(s->notices, &n_notices),
		.n_notices = n_notices,
	};
	const struct format_config cfg = {
		.format = s->opts->format,
		.callsite = s->opts->callsite,
		.stacks = stacks,
		.symbolizer = s->symbolizer,
		.stacktab = s->stacks,
	};
	err = format__report(s->out, &cfg, &meta, &rows, names);
	if (s->out_file)	/* names the file, once; a profile put in place */
		err = outfile__commit(s->out_file) ?: err;
	if (!err && s->recording) {
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
		};

		err = recording__note_report(s->recording, &note);
	}
	if (!err && s->states_csv) {
		stateformat__csv(s->states_csv, meta.sequence, meta.pid, &states);
		err = outfile__flush(s->states_file);
	}
	if (dropped && s->opts->format != FORMAT_TABLE) {
		char text[512];

		format__drops_text(&drops, s->opts->map_size, text, sizeof(text));
		pr_warn("%s", text);
	}
	free(names);
	free(blame_names);
	free(waiting_names);
	report__free(&rows);
	threadstates__free_report(&states);
	report__free(&blame_rows);
	report__free(&waiting_rows);
	return err;
}

/*
 * --object: an address, or the extent of a variable named in the
 * target's symbol tables.  [*start, *end); *end 0 without --object.
 */
static int session__filter_object(struct session *s, uint64_t *start,
				  uint64_t *end)
{
	const char *arg = s->opts->object;
	uint64_t size = 0;
	char *rest;
	int err;

	*start = *end = 0;
	if (!arg)
		return 0;
	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) {
		errno = 0;
		*start = strtoull(arg, &rest, 16);
		if (errno || rest == arg + 2 || *rest || !*start) {
			pr_err("invalid --object '%s': expected an address "
			       "(0x...) or a variable's name", arg);
			return -EINVAL;
		}
		*end = *start + 1;
		return 0;
	}
	err = symbolizer__find_object(s->symbolizer, arg, start, &size);
	if (err == -ENOENT)
		pr_err("--object '%s': no global or static variable of that "
		       "name in the target's symbol tables (give its address, "
		       "0x...)", arg);
	else if (err == -ENOTUNIQ)
		pr_err("--object '%s': a variable of that name is in several "
		       "modules; give its address (0x...)", arg);
	else if (err)
		pr_err("--object '%s': cannot read the target's symbols: %s",
		       arg, strerror(-err));
	if (err)
		return err;
	*end = *start + (size ? size : 1);
	pr_info("--object %s: 0x%" PRIx64 "-0x%" PRIx64, arg, *start, *end);
	return 0;
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

/*
 * Reads the probes: the change since the read before joins pending.
 * Every read goes through here, reports or not (see fold.c).
 */
static int session__read(struct session *s)
{
	struct snapshot *snap, *delta = NULL, *sum = NULL;
	int err;

	/* No probes: the target exited before they were attached. */
	err = s->probes ? probes__read(s->probes, &snap) : snapshot__new(&snap);
	if (err)
		return err;
	if (s->probes)
		err = probes__read_stacks(s->probes, snap, s->stacks);
	if (!err)
		err = session__now(s, &s->read_ns);
	session__rekey(s, snap);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	err = snapshot__delta(snap, s->prev, &delta);
	if (!err)
		err = snapshot__merge(s->pending, delta, &sum);
	snapshot__free(delta);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	snapshot__free(s->pending);
	s->pending = sum;
	snapshot__free(s->prev);
	s->prev = snap;
	return 0;
}

/*
 * One report of the window since the last; the last report of the run
 * (final) also lists the waits still in progress.  Interval reports do
 * not: those waits are counted in the window where they end, and a
 * recording replays the same reports (--replay) without knowing them.
 */
static int session__report(struct session *s, bool final)
{
	const struct report_settings settings = {
		.coalesce = s->opts->coalesce,
		.per_thread = s->opts->per_thread,
		.per_process = s->opts->per_process || !s->procs,
		.sort = s->opts->sort,
		.top = s->opts->top,
	};
	struct snapshot *blame = NULL, *blame_delta = NULL, *waiting = NULL;
	struct session_views views;
	uint64_t closed;
	int err = session__read(s);

	if (!err && s->probes && s->opts->blame)
		err = probes__read_blame(s->probes, &blame);
	session__rekey(s, blame);
	if (err)
		return err;
	closed = s->probes ? probes__window(s->probes) - 1 : 0;
	if (final && s->probes)
		waiting = session__waiting(s, s->read_ns);
	if (s->opts->cumulative) {
		views = (struct session_views){ s->prev, blame, waiting };
		err = session__print(s, &views, &settings, s->opts->stacks,
				     STATES_SINCE_ORIGIN, s->attach_ns,
				     s->read_ns, 0, closed);
	} else {
		if (blame)
			err = snapshot__delta(blame, s->prev_blame, &blame_delta);
		views = (struct session_views){ s->pending, blame_delta,
						waiting };
		if (!err)
			err = session__print(s, &views, &settings,
					     s->opts->stacks, STATES_SINCE_MARK,
					     s->last_ns, s->read_ns,
					     s->next_window, closed);
		snapshot__free(blame_delta);
	}
	snapshot__free(waiting);
	s->next_window = closed + 1;
	if (s->states)
		threadstates__mark(s->states);
	snapshot__free(s->pending);
	s->pending = NULL;
	snapshot__free(s->prev_blame);
	s->prev_blame = blame;
	s->last_ns = s->read_ns;
	return err;
}

/* The live screen: a refresh, read into the screen instead of printed. */
static int session__refresh(struct session *s)
{
	struct format_drops drops;
	struct snapshot *delta;
	int err = session__read(s);

	if (err)
		return err;
	delta = s->pending;
	s->pending = NULL;
	s->last_ns = s->read_ns;
	session__drops(s, &drops);
	if (s->space) {
		size_t n;

		procset__list(s->procs, &n);
		live__set_processes(s->live, n, procset__alive(s->procs));
	}
	return live__update(s->live, s->prev, delta, s->last_ns, &drops);
}

/*
 * Ends the live screen with one last refresh, restores the terminal, and
 * prints the totals since attach (or the last reset) as a table, with the
 * settings the keys left.
 */
static int session__live_end(struct session *s)
{
	struct report_settings settings = { .top = s->opts->top };
	const struct snapshot *totals;
	struct snapshot *blame = NULL, *waiting;
	struct session_views views;
	uint64_t since_ns;
	int err = session__refresh(s);

	live__end(s->live);
	if (!err && s->opts->blame)
		err = probes__read_blame(s->probes, &blame);
	session__rekey(s, blame);
	if (err)
		return err;
	waiting = session__waiting(s, s->last_ns);
	totals = live__totals(s->live, &settings, &since_ns);
	/*
	 * A reset ('r') is not in the windows: --replay shows since attach;
	 * the blame covers the run since attach too.
	 */
	s->group_threads = live__group_threads(s->live);
	views = (struct session_views){ totals, blame, waiting };
	err = session__print(s, &views, &settings, live__stacks_shown(s->live),
			     STATES_SINCE_ORIGIN, since_ns, s->last_ns, 0,
			     probes__window(s->probes) - 1);
	snapshot__free(blame);
	snapshot__free(waiting);
	return err;
}

/* --interval on a terminal: the live screen, or plain reports without one. */
static void session__live_start(struct session *s)
{
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
		.attach_ns = s->attach_ns,
		.states = s->states,
		.group_threads = s->opts->group_threads,
		.map_size = s->opts->map_size,
	};
	err = live__new(&cfg, &s->live);
	if (err)
		pr_warn("no live screen (%s); printing reports instead",
			strerror(-err));
}

/*
 * A library was loaded or unloaded, or the target exec'ed.  Names first:
 * a library dlopen'ed for a moment, or a program that runs for a moment
 * after an exec, must be read before it is gone (tables first left a
 * short program's rows unnamed); until its tables are read, its waits
 * are walked by file (bpf/unwind.bpf.h) and walked again as they end.
 */
static void session__modules_changed(struct session *s)
{
	int err;

	/* Several: tables first, a new program's first waits need them. */
	if (!s->space)
		symbolizer__refresh(s->symbolizer);
	err = probes__sync_modules(s->probes);
	if (s->space)
		symbolizer__refresh(s->symbolizer);
	if (err)
		pr_warn("cannot update the unwind tables: %s", strerror(-err));
}

/* Arms fd to fire after `seconds`, and every `seconds` if periodic; 0 stops it. */
static int timer_set(int fd, double seconds, bool periodic)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = (time_t)seconds;
	its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (seconds > 0 && !its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (periodic)
		its.it_interval = its.it_value;
	return timerfd_settime(fd, 0, &its, NULL) ? -errno : 0;
}

static int timer_new(double seconds, bool periodic)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int err;

	if (fd < 0)
		return -errno;
	err = timer_set(fd, seconds, periodic);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Puts a new timer into a poll slot; 0 or -errno. */
static int loop_timer(struct pollfd *slot, double seconds, bool periodic)
{
	int fd = timer_new(seconds, periodic);

	if (fd < 0)
		return fd;
	slot->fd = fd;
	return 0;
}

enum {
	FD_SIGNAL, FD_TARGET, FD_EVENTS, FD_KEYS,
	FD_INTERVAL, FD_DURATION, FD_MODULES, FD_STATES, /* timers, ours to close */
	FD_HOUSEKEEPING,
	FD__COUNT
};

/* --states: threads the kernel's table holds, dead ones until read. */
#define STATES_MAX_THREADS 8192

/* How often the module list is re-read when the loader cannot be watched. */
#define MODULES_REFRESH_S 1.0
/*
 * --states: how often the threads map is read between reports, so the
 * entries of threads that died leave it (and a thread-churning target
 * does not fill it before a long interval ends).
 */
#define STATES_DRAIN_S 1.0

/*
 * How often the probes are read between reports (the rows of exited
 * threads leave the kernel's map then) and the probes' thread is checked
 * without an event saying so.
 */
#define HOUSEKEEPING_S 1.0

/*
 * Full mode: the probes follow the target's threads when the one they
 * are attached through exits (see probes__follow_threads).
 */
static void session__follow_threads(struct session *s)
{
	uint64_t gap_ns;
	pid_t tid = probes__follow_threads(s->probes, &gap_ns);

	if (tid < 0)
		pr_warn("PID %d: the thread the probes were attached through "
			"exited, and they cannot be attached through another "
			"(%s); calls are no longer counted",
			(int)target__pid(s->target), strerror(-tid));
	else if (tid && gap_ns)
		pr_warn("PID %d: the thread the probes were attached through "
			"exited; they follow thread %d from %.0f ms later (calls "
			"in between were not counted)",
			(int)target__pid(s->target), (int)tid, (double)gap_ns * 1e-6);
	else if (tid)
		pr_warn("PID %d: the thread the probes were attached through "
			"exited; they follow thread %d from up to %.0f s later "
			"(calls in between were not counted)",
			(int)target__pid(s->target), (int)tid, HOUSEKEEPING_S);
}

/*
 * A process joins the run (--children: forked; a --pid, or found at
 * start): its unwind tables loaded; names come after (see
 * session__process_events).
 */
static bool session__add_process(struct session *s, pid_t pid, pid_t parent,
				 const char *comm)
{
	int err;

	if (!procset__add(s->procs, pid, parent, comm) || !s->space)
		return false;
	err = probes__add_process(s->probes, pid);
	if (!err)
		err = probes__sync_process(s->probes, pid);
	if (err && err != -ENOENT && err != -ESRCH)
		pr_warn("PID %d: cannot load its unwind tables (%s); its waits "
			"are counted, named inside libc", (int)pid,
			strerror(-err));
	pr_info("following PID %d%s", (int)pid, parent ? " (forked)" : "");
	return true;
}

/* Its addresses, for names and merged rows; the parent's layout first. */
static void session__name_process(struct session *s, pid_t pid, pid_t parent)
{
	int err;

	/* The parent too: what it mapped since, what it unmapped. */
	if (parent)
		procspace__update(s->space, parent, 0);
	err = procspace__update(s->space, pid, parent);
	if (err && err != -ENOENT && err != -ESRCH)
		pr_warn("PID %d: cannot read its mappings (%s); some of its "
			"waits may go unnamed", (int)pid, strerror(-err));
}

static void session__sync_process(struct session *s, pid_t pid)
{
	int err = probes__sync_process(s->probes, pid);

	if (err && err != -ENOENT && err != -ESRCH)
		pr_warn("PID %d: cannot load its unwind tables: %s", (int)pid,
			strerror(-err));
}

/*
 * What happened to the followed processes since the last events: the
 * kernel's tables now, for every event (a new process's first waits are
 * walked with them); names are queued for session__name_processes.
 */
static void session__process_events(struct session *s)
{
	size_t n;
	const struct probes_proc_event *ev = probes__proc_events(s->probes, &n);

	for (size_t i = 0; i < n; i++) {
		pid_t pid = ev[i].pid;

		switch (ev[i].type) {
		case SP_MODULE_EVENT_FORK:
			session__add_process(s, pid, ev[i].parent, ev[i].comm);
			break;
		case SP_MODULE_EVENT_EXEC:
			procset__exec(s->procs, pid, ev[i].comm);
			if (s->space)
				session__sync_process(s, pid);
			break;
		case SP_MODULE_EVENT_LOAD:
			/* Several: this process's tables, not all of them. */
			if (s->space)
				session__sync_process(s, pid);
			break;
		case SP_MODULE_EVENT_EXIT:
			procset__exited(s->procs, pid);
			pr_info("PID %d exited", (int)pid);
			break;
		default:
			break;
		}
		if (s->space && !array__grow(&s->naming, &s->naming_cap,
					     s->n_naming + 1,
					     sizeof(*s->naming)))
			s->naming[s->n_naming++] = ev[i];
	}
}

/*
 * The names of the processes the events were about, once the tables are
 * done (a symbolizer per new program takes tens of milliseconds, which
 * the next process's tables should not wait for).
 */
static void session__name_processes(struct session *s)
{
	for (size_t i = 0; i < s->n_naming; i++) {
		const struct probes_proc_event *ev = &s->naming[i];

		switch (ev->type) {
		case SP_MODULE_EVENT_FORK:
			session__name_process(s, ev->pid, ev->parent);
			break;
		case SP_MODULE_EVENT_EXEC:
			procspace__exec(s->space, ev->pid);
			break;
		case SP_MODULE_EVENT_LOAD:
			procspace__update(s->space, ev->pid, 0);
			break;
		case SP_MODULE_EVENT_EXIT:
			procspace__exited(s->space, ev->pid);
			probes__forget_process(s->probes, ev->pid);
			break;
		default:
			break;
		}
	}
	s->n_naming = 0;
}

/* --children: the descendants the targets have now, followed from now. */
static void session__add_descendants(struct session *s, pid_t root)
{
	pid_t *kids = NULL;
	size_t n = 0, cap = 0;

	procset__children(root, &kids, &n, &cap);
	for (size_t i = 0; i < n; i++) {
		if (!session__add_process(s, kids[i], root, NULL))
			continue;
		session__name_process(s, kids[i], 0);
		session__add_descendants(s, kids[i]);
	}
	free(kids);
}

/* The target is gone: its exit status, and no more /proc reads. */
static void session__target_exited(struct session *s)
{
	/* Its PID may be reused: no more /proc reads for names. */
	if (s->symbolizer)
		symbolizer__freeze(s->symbolizer);
	if (s->root_exited)
		return;
	s->root_exited = true;
	if (target__reap(s->target))
		pr_warn("cannot collect PID %d's exit status",
			(int)target__pid(s->target));
}

/*
 * Takes the kernel's events: tables for every process event that came
 * meanwhile, then names.  A batch taken is processed before the next is
 * (taking one replaces the last); after 8, the rest waits in the ring
 * for the next poll.  What else was seen is returned.
 */
static unsigned int session__take_events(struct session *s)
{
	unsigned int seen = probes__consume_events(s->probes);

	for (int round = 0; seen & PROBES_EVENT_PROCESSES; round++) {
		session__process_events(s);
		seen &= ~PROBES_EVENT_PROCESSES;
		if (round == 7)
			break;
		seen |= probes__consume_events(s->probes);
	}
	if (s->space)
		session__name_processes(s);
	return seen;
}

/* Runs until the duration ends, a signal comes or the target exits. */
static int session__loop(struct session *s, int signal_fd)
{
	struct pollfd fds[FD__COUNT];
	int err = 0;

	for (int i = 0; i < FD__COUNT; i++)
		fds[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
	fds[FD_SIGNAL].fd = signal_fd;
	fds[FD_TARGET].fd = target__pidfd(s->target);
	fds[FD_EVENTS].fd = probes__events_fd(s->probes);
	fds[FD_KEYS].fd = s->live ? live__input_fd(s->live) : -1;
	if (s->opts->interval_s > 0)
		err = loop_timer(&fds[FD_INTERVAL], s->opts->interval_s, true);
	if (!err && s->opts->duration_s > 0)
		err = loop_timer(&fds[FD_DURATION], s->opts->duration_s, false);
	/* Polling the module list is the fallback for no loader watch. */
	if (!err && fds[FD_EVENTS].fd < 0)
		err = loop_timer(&fds[FD_MODULES], MODULES_REFRESH_S, true);
	if (!err && s->states)
		err = loop_timer(&fds[FD_STATES], STATES_DRAIN_S, true);
	if (!err)
		err = loop_timer(&fds[FD_HOUSEKEEPING], HOUSEKEEPING_S, true);
	if (err)
		goto out;
	for (;;) {
		uint64_t ticks;

		if (poll(fds, FD__COUNT, -1) < 0) {
			if (errno != EINTR) {
				err = -errno;
				break;
			}
			/* SIGWINCH: the live screen's KEY_RESIZE is waiting. */
			if (!s->live)
				continue;
			for (int i = 0; i < FD__COUNT; i++)
				fds[i].revents = 0;
		}
		if (fds[FD_SIGNAL].revents) {
			struct signalfd_siginfo info;

			if (read(signal_fd, &info, sizeof(info)) == sizeof(info))
				pr_info("stopping on signal %u", info.ssi_signo);
			break;
		}
		if (fds[FD_TARGET].revents) {
			pr_info("PID %d exited", (int)target__pid(s->target));
			if (!s->space) {
				session__target_exited(s);
				break;
			}
			/* Several: the others go on; its status now. */
			procset__exited(s->procs, target__pid(s->target));
			if (target__reap(s->target))
				pr_warn("cannot collect PID %d's exit status",
					(int)target__pid(s->target));
			s->root_exited = true;
			fds[FD_TARGET].fd = -1;
		}
		if (fds[FD_DURATION].revents)
			break;
		if (fds[FD_EVENTS].revents) {
			unsigned int seen = session__take_events(s);

			if (seen & PROBES_EVENT_THREAD_EXIT)
				session__follow_threads(s);
			/* Several: per process above; names refreshed here. */
			if ((seen & PROBES_EVENT_MODULES) && s->space)
				symbolizer__refresh(s->symbolizer);
			else if (seen & PROBES_EVENT_MODULES)
				session__modules_changed(s);
		}
		if (s->space && !procset__alive(s->procs)) {
			pr_info("every followed process exited");
			session__target_exited(s);
			break;
		}
		if (fds[FD_HOUSEKEEPING].revents &&
		    read(fds[FD_HOUSEKEEPING].fd, &ticks, sizeof(ticks)) > 0) {
			session__follow_threads(s);
			/* Exited threads' rows out of the map, between reports. */
			if (monotonic_ns() - s->read_ns >= HOUSEKEEPING_S * 1e9 / 2)
				err = session__read(s);
			if (!err)
				session__notice_children(s);
			if (!err && s->recording)
				err = recording__checkpoint(s->recording,
							    s->symbolizer);
			if (err)
				break;
		}
		if (fds[FD_MODULES].revents &&
		    read(fds[FD_MODULES].fd, &ticks, sizeof(ticks)) > 0)
			session__modules_changed(s);
		if (fds[FD_STATES].revents &&
		    read(fds[FD_STATES].fd, &ticks, sizeof(ticks)) > 0) {
			uint64_t now;

			err = session__read_states(s, &now);
			if (err)
				break;
		}
		if (fds[FD_INTERVAL].revents &&
		    read(fds[FD_INTERVAL].fd, &ticks, sizeof(ticks)) > 0) {
			err = s->live ? session__refresh(s)
				      : session__report(s, false);
			if (err)
				break;
		}
		if (fds[FD_KEYS].revents & (POLLHUP | POLLERR | POLLNVAL))
			fds[FD_KEYS].fd = -1;	/* the terminal is gone: SIGHUP */
		if (s->live) {
			int act = live__handle_input(s->live);

			if (act < 0) {
				err = act;
				break;
			}
			if (act & LIVE_QUIT)
				break;
			if (act & LIVE_RETIME)
				err = timer_set(fds[FD_INTERVAL].fd,
						live__interval(s->live), true);
			if (!err && (act & LIVE_REFRESH))
				err = session__refresh(s);
			if (err)
				break;
		}
	}
out:
	for (int i = FD_INTERVAL; i < FD__COUNT; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	return err;
}

/* Takes the stop signals through a signalfd; *saved: the caller's state. */
static int signals_block(int *signal_fd, struct target_signals *saved)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &saved->mask))
		return -errno;
	/* A closed reader is an error from write, not a silent death. */
	saved->pipe_ignored = signal(SIGPIPE, SIG_IGN) == SIG_IGN;
	*signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return *signal_fd < 0 ? -errno : 0;
}

/* How one kind of site was measured, for the message. */
static void calibration_text(const struct calibration *cal,
			     enum sp_site_kind kind, char *buf, size_t len)
{
	const struct calibrate_sample *sm = &cal->sample[kind];

	if (!cal->measured[kind])
		snprintf(buf, len, "%.2f us (not measured: the smaller figure)",
			 cal->by_site[kind] * 1e-3);
	else
		snprintf(buf, len, "%.2f us (calls %.2f-%.2f us, quartile "
			 "%.2f, median %.2f)", cal->by_site[kind] * 1e-3,
			 sm->min_ns * 1e-3, sm->max_ns * 1e-3,
			 sm->quartile_ns * 1e-3, sm->median_ns * 1e-3);
}

static void calibrate_probes(struct session *s, uint64_t *by_site)
{
	char emulated[160], stepped[160];
	struct calibration cal;
	int err = calibrate__run(s->opts->probe_at_entry, &cal);

	if (err) {
		pr_warn("cannot calibrate the probes (%s); waits include "
			"their own time", strerror(-err));
		return;
	}
	s->calibration_ns = cal.ns;
	memcpy(s->calibration_site_ns, cal.by_site, sizeof(cal.by_site));
	memcpy(by_site, cal.by_site, sizeof(cal.by_site));
	calibration_text(&cal, SP_SITE_EMULATED, emulated, sizeof(emulated));
	calibration_text(&cal, SP_SITE_STEPPED, stepped, sizeof(stepped));
	pr_info("calibration: %u single pthread_mutex_lock calls per site; "
		"subtracted: %s at emulated sites, %s at single-stepped ones",
		cal.calls, emulated, stepped);
	if (cal.inverted)
		pr_warn("calibration unstable (a busy machine?): probes at "
			"single-stepped sites read cheaper than at emulated "
			"ones; subtracting %.2f us at both",
			cal.by_site[SP_SITE_EMULATED] * 1e-3);
	else if (cal.unstable)
		pr_warn("calibration unstable (a busy machine?): most calls "
			"were slowed; subtracting the fastest, %.2f us at "
			"emulated sites and %.2f us at single-stepped ones",
			cal.by_site[SP_SITE_EMULATED] * 1e-3,
			cal.by_site[SP_SITE_STEPPED] * 1e-3);
}

/*
 * --states: the threads map filled from /proc, the scheduler tracepoints
 * attached, and /proc read again for the threads created in between.
 */
static int states_setup(struct session *s)
{
	pid_t pid = target__pid(s->target);
	bool totals = s->opts->cumulative ||
		      live__applies(s->opts, isatty(STDOUT_FILENO));
	int err = threadstates__new(totals, &s->states);

	if (!err)
		err = threadtable__new(probes__threads_fd(s->probes), pid,
				       &s->threads);
	if (!err)
		err = threadtable__sync(s->threads, monotonic_ns());
	if (!err) {
		int attach = probes__attach_states(s->probes);

		if (attach)
			return attach;	/* it said why */
		err = threadtable__sync(s->threads, monotonic_ns());
	}
	if (err)
		pr_err("cannot follow the threads of PID %d: %s", (int)pid,
		       strerror(-err));
	return err;
}

/* Contended mode: the target's libc read, placed and measured. */
static int contended_setup(struct session *s, const char *library,
			   struct probes_config *cfg)
{
	size_t n_rows, n_funcs;
	int err = hostcheck__tracepoints("/sys");

	if (err)
		return err;
	err = libcmodel__build(library, &s->libc);
	if (err) {
		pr_err("cannot read the unwind rules and functions of %s: %s",
		       library, strerror(-err));
		return err;
	}
	cfg->libc = s->libc;
	err = condprobe__signal_offset(library, &cfg->cond_signal_offset);
	if (err)
		pr_warn("cannot find where this libc's condvars wait (%s); "
			"condvar rows name the futex word, not the condvar",
			strerror(-err));
	libcmodel__rows(s->libc, &n_rows);
	libcmodel__funcs(s->libc, &n_funcs);
	pr_info("contended mode: %zu unwind rows and %zu lock functions for "
		"%s; condvars wait at offset %u", n_rows, n_funcs, library,
		cfg->cond_signal_offset);
	return 0;
}

/* syncprof's own command line, for the recording's info. */
static void command_line(int argc, char **argv, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "",
				 argv[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* --record, --chrome: the writer starts before the probes go live. */
static int recording_start(struct session *s, int argc, char **argv)
{
	char cmdline[4096];

	command_line(argc, argv, cmdline, sizeof(cmdline));
	const struct recording_config cfg = {
		.dir = s->opts->record_dir,
		.chrome = s->opts->chrome,
		.ring_fd = probes__record_ring_fd(s->probes),
		.lost_fd = probes__record_lost_fd(s->probes),
		.pid = target__pid(s->target),
		.comm = target__comm(s->target),
		.mode = options__mode_name(s->opts->mode),
		.cmdline = cmdline,
		.calibration_ns = s->calibration_ns,
		.calibration_emulated_ns = s->calibration_site_ns[SP_SITE_EMULATED],
		.calibration_stepped_ns = s->calibration_site_ns[SP_SITE_STEPPED],
		.map_size = s->opts->map_size,
		.ring_size = s->opts->ring_size,
	};

	return recording__start(&cfg, &s->recording);
}

/* --replay DIR: no target, no root. */
static int replay_main(const struct options *opts)
{
	struct outfile *file = NULL;
	int err;

	if (opts->output &&
	    outfile__open(NULL, opts->output, OUTFILE_GROWING, &file))
		return 1;
	err = replay__run(opts, file ? outfile__stream(file) : stdout);
	if (outfile__close(file) && !err)
		err = -EIO;
	return err ? 1 : 0;
}

/* -v: what the unwind tables cost. */
static void report_unwind_tables(struct session *s)
{
	struct unwinder_stats st;

	if (!probes__unwinds(s->probes))
		return;
	probes__unwind_stats(s->probes, &st);
	pr_info("unwind tables: %zu module builds (%zu by frame pointer), "
		"%zu rows, %zu mappings, %.1f KiB in the kernel (and a %.0f KiB "
		"frame cache), built in %.1f ms; stacks %u frames deep%s",
		st.tables, st.fp_tables, st.rows, st.mappings,
		(double)st.bytes / 1024, (double)st.cache_bytes / 1024,
		st.build_ms, s->opts->stack_depth,
		skiplist__empty(s->skip) ? "" : ", lock functions marked");
	if (st.skipped)
		pr_info("%zu runtime lock functions (built-in and --skip) are "
			"part of the lock implementation", st.skipped);
	if (skiplist__has_user_globs(s->skip) && !st.user_skipped)
		pr_warn("no function matches --skip in the target's modules");
}

/* -v at the end: how the walks went, and what the programs cost. */
static void report_costs(struct session *s)
{
	struct probes_stack_counts c;
	uint64_t run_ns, runs, n;

	if (!s->probes)
		return;
	/* Said without -v: what was lost of the processes followed. */
	n = probes__dropped_processes(s->probes);
	if (n)
		pr_warn("%llu new processes were not followed: the table of "
			"followed processes (4096 alive at once) was full",
			(unsigned long long)n);
	n = probes__lost_process_events(s->probes);
	if (n)
		pr_warn("%llu process events (fork, exec, exit, library load) "
			"were lost to a full ring: their waits are counted, but "
			"those processes may be unnamed, or walked with their "
			"parent's tables", (unsigned long long)n);
	probes__stack_counts(s->probes, &c);
	if (probes__unwinds(s->probes))
		pr_info("stacks: %zu kept; walks stopped early %llu (JIT or "
			"anonymous code %llu, just after an exec %llu), frames "
			"lost to a full map %llu, frame cache misses %llu",
			stacktab__count(s->stacks),
			(unsigned long long)c.stopped, (unsigned long long)c.anon,
			(unsigned long long)c.stale, (unsigned long long)c.lost,
			(unsigned long long)c.misses);
	probes__wait_timing(s->probes, &run_ns, &runs);
	if (runs)
		pr_info("BPF time per %s: %.0f ns over %llu (the programs' own "
			"clock, entry and exit)", s->opts->mode == MODE_CONTENDED ?
			"blocking wait" : "lock call", (double)run_ns / (double)runs,
			(unsigned long long)runs);
	probes__bpf_time(s->probes, &run_ns, &runs);
	if (runs)
		pr_info("BPF programs: %llu runs, %llu ns in all, %.0f ns per run",
			(unsigned long long)runs, (unsigned long long)run_ns,
			(double)run_ns / (double)runs);
}

/*
 * Finds the target's libc, names its modules, loads and attaches the
 * probes and lets a launched target go.  attach_ns is taken before the
 * probes go live: the first window holds what they count meanwhile.
 */
static int session__start(struct session *s, char *library, size_t len,
			  int argc, char **argv)
{
	const struct options *opts = s->opts;
	int err = target__pthread_library(s->target, library, len);
	bool several = options__several(opts);
	pid_t root = target__pid(s->target);

	if (err)
		return err;
	err = procset__new(&s->procs);
	if (!err && several)
		err = procspace__new(&s->space);
	if (err)
		return err;
	procset__add(s->procs, root, 0, NULL);
	for (size_t i = 0; several && i < opts->n_pids; i++) {
		procset__add(s->procs, opts->pids[i], 0, NULL);
		err = procspace__update(s->space, opts->pids[i], 0);
		if (err) {
			pr_err("cannot read the mappings of PID %d: %s",
			       (int)opts->pids[i], strerror(-err));
			return err;
		}
	}
	if (several && opts->command)
		err = procspace__update(s->space, root, 0);
	if (!err)
		err = debugfetch__new(DEBUGFETCH_LIMIT_S, &s->fetch);
	symbolizer__use_debuginfod(s->fetch);
	/* Named first: a target may not live long (launched: it is held). */
	if (!err && several)
		err = symbolizer__new_space(s->space, &s->symbolizer);
	else if (!err)
		err = symbolizer__new(root, NULL, &s->symbolizer);
	if (!err)
		err = stacktab__new(&s->stacks);
	if (!err)
		err = skiplist__new(opts->skip, opts->n_skip, &s->skip);
	if (!err && !opts->no_skip)
		err = skiplist__add_wrappers(s->skip);
	if (!err)
		err = notices__detect(target__pid(s->target),
				      opts->mode != MODE_CONTENDED, several,
				      &s->notices);
	if (err) {
		pr_err("%s", strerror(-err));
		return err;
	}
	{
		size_t n;
		const char *const *notice = notices__list(s->notices, &n);

		for (size_t i = 0; i < n; i++)
			pr_warn("%s", notice[i]);
	}
	struct probes_config cfg = {
		.tgid = target__pid(s->target),
		.several = several,
		.children = opts->children,
		.pids = opts->command ? &root : opts->pids,
		.n_pids = opts->command ? 1 : opts->n_pids,
		.map_size = opts->map_size,
		.probe_at_entry = opts->probe_at_entry,
		.per_thread = opts->per_thread,
		.mode = opts->mode == MODE_CONTENDED ? PROBES_CONTENDED
						     : PROBES_FULL,
		.ring_size = options__recording(opts) ? opts->ring_size : 0,
		.libc_path = library,
		.stack_depth = opts->stack_depth,
		.skip = s->skip,
		.follow_exec = true,
		.wait_timing = opts->verbosity > 0,
		.blame = opts->blame,
		.hold = opts->hold,
		.off_cpu = opts->off_cpu,
		.states = opts->states,
		.max_threads = STATES_MAX_THREADS,
		.tids = opts->tids,
		.n_tids = opts->n_tids,
		.types = opts->types,
		.min_wait_ns = opts->min_wait_ns,
	};

	err = session__filter_object(s, &cfg.object_start, &cfg.object_end);
	if (err)
		return err;

	if (opts->mode == MODE_CONTENDED) {
		err = contended_setup(s, library, &cfg);
	} else {
		if (opts->calibrate)
			calibrate_probes(s, cfg.calibration_ns);
		/* Following an exec takes a tracepoint (tracefs). */
		if ((opts->stack_depth || !skiplist__empty(s->skip)) &&
		    hostcheck__tracepoints("/sys")) {
			pr_warn("no tracefs: after an exec, stacks stop at the "
				"new image");
			cfg.follow_exec = false;
		}
	}
	if (err)
		return err;
	err = probes__new(&cfg, &s->probes);
	if (!err && options__recording(opts))
		err = recording_start(s, argc, argv);
	if (err)
		return err;
	if (several)
		probes__set_translate(s->probes, session__translate, s);
	report_unwind_tables(s);
	err = probes__attach(s->probes, library);
	/* After the fork watch is on: none slips between. */
	for (size_t i = 0; !err && opts->children && i < cfg.n_pids; i++)
		session__add_descendants(s, cfg.pids[i]);
	if (!err && opts->states)
		err = states_setup(s);
	if (err)
		return err;
	/* With --states, the first read of the threads map is the origin. */
	err = session__now(s, &s->attach_ns);
	if (err) {
		pr_err("cannot read the threads map: %s", strerror(-err));
		return err;
	}
	s->last_ns = s->read_ns = s->attach_ns;
	if (s->recording)
		recording__attached(s->recording, s->attach_ns);
	/* Only names suffer without it: libraries dlopen'ed and gone. */
	if (target__loader_library(s->target, library, len) ||
	    probes__attach_loader(s->probes, library))
		pr_info("not watching the dynamic loader; libraries loaded "
			"later are named within a second");
	err = target__resume(s->target);
	if (err)
		pr_err("cannot resume PID %d: %s", (int)target__pid(s->target),
		       strerror(-err));
	return err;
}

/* "and N more processes", "and its children", for the start message. */
static const char *session__others(struct session *s)
{
	static char text[96];
	size_t n = s->procs ? procset__alive(s->procs) : 1;

	text[0] = '\0';
	if (n > 1)
		snprintf(text, sizeof(text), " and %zu more process%s", n - 1,
			 n > 2 ? "es" : "");
	if (s->opts->children)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s children as they come", n > 1 ? "," : " with");
	return text;
}

/*
 * Several --pid: each a live user-space process, a thread widened to its
 * process (as the first one), each once.
 */
static int check_pids(struct options *opts, pid_t first)
{
	size_t out = 0;

	for (size_t i = 0; i < opts->n_pids; i++) {
		struct target *t;
		pid_t pid = first;
		bool known = false;

		if (i) {
			int err = target__attach(opts->pids[i], &t);

			if (err)
				return err;
			pid = target__pid(t);
			target__free(t);
		}
		for (size_t k = 0; k < out; k++)
			known |= opts->pids[k] == pid;
		if (!known)
			opts->pids[out++] = pid;
	}
	opts->n_pids = out;
	opts->pid = first;
	return 0;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct session s = { .opts = &opts };
	struct target_signals caller_signals;
	bool target_gone = false;
	char library[4096];
	int signal_fd = -1, err, exit_code = 1;

	err = options__parse(&opts, argc, argv);
	if (err)
		return 2;
	if (opts.help_shown)
		return 0;
	log__set_level(LOG_WARN + opts.verbosity);
	s.group_threads = opts.group_threads;
	log__capture_libbpf();
	if (opts.replay_dir)
		return replay_main(&opts);

	if (hostcheck__privileges() || hostcheck__kernel("/sys"))
		return 1;
	s.out = stdout;
	if (opts.output) {
		if (outfile__open(NULL, opts.output, opts.format == FORMAT_PPROF ?
				  OUTFILE_WHOLE : OUTFILE_GROWING, &s.out_file))
			return 1;
		s.out = outfile__stream(s.out_file);
	}
	if (opts.states_csv) {
		if (outfile__open(NULL, opts.states_csv, OUTFILE_GROWING,
				  &s.states_file))
			goto cleanup;
		s.states_csv = outfile__stream(s.states_file);
	}
	/* Blocked before launch; the child restores the caller's mask. */
	err = signals_block(&signal_fd, &caller_signals);
	if (err) {
		pr_err("cannot set up signal handling: %s", strerror(-err));
		goto cleanup;
	}
	err = opts.command ? target__launch(opts.command, &caller_signals,
					    &s.target)
			   : target__attach(opts.pid, &s.target);
	if (!err && !opts.command)
		err = check_pids(&opts, target__pid(s.target));
	if (err)
		goto cleanup;
	s.attach_ns = s.last_ns = monotonic_ns();
	/* Attaching takes a while (tables, the verifier): say so first. */
	if (isatty(STDERR_FILENO) || log__enabled(LOG_INFO))
		log__notice("attaching to PID %d (%s), %s mode...",
			    (int)target__pid(s.target), target__comm(s.target),
			    options__mode_name(opts.mode));
	err = session__start(&s, library, sizeof(library), argc, argv);
	if (err && target__exited(s.target)) {
		/* A sane end: the report of what was seen, if anything. */
		pr_warn("PID %d exited while syncprof attached%s",
			(int)target__pid(s.target),
			s.probes ? "" : "; nothing was counted");
		target_gone = true;
		err = 0;
	}
	if (err)
		goto cleanup;
	/* What attaching freed (BTF, the tables' build) leaves the RSS. */
	malloc_trim(0);
	if (!target_gone)
		pr_info("profiling PID %d (%s)%s%s", (int)target__pid(s.target),
			target__comm(s.target), session__others(&s),
			opts.duration_s > 0 ? "" : "; Ctrl-C to stop");
	if (!target_gone)
		readiness__announce(opts.ready_fd, target__pid(s.target));
	if (opts.format == FORMAT_CSV)
		format__csv_header(s.out);
	if (s.states_csv)
		stateformat__csv_header(s.states_csv);
	if (!target_gone && live__applies(&opts, isatty(STDOUT_FILENO)))
		session__live_start(&s);
	/* As bcc's tools do: say once on a terminal what runs, how it ends. */
	if (!target_gone && !s.live && isatty(STDERR_FILENO) &&
	    !log__enabled(LOG_INFO))
		log__notice("tracing PID %d (%s), %s mode... %s",
			    (int)target__pid(s.target), target__comm(s.target),
			    options__mode_name(opts.mode),
			    opts.duration_s > 0 ? "ends after --duration or Ctrl-C"
						: "Ctrl-C to end");

	if (target_gone)
		session__target_exited(&s);
	else
		err = session__loop(&s, signal_fd);
	/* Several: the last events too, so the report names every process. */
	for (int i = 0; !err && s.space && i < 8; i++)
		session__take_events(&s);
	if (!err)
		err = s.live ? session__live_end(&s) : session__report(&s, true);
	if (err) {
		pr_err("%s", strerror(-err));
		goto cleanup;
	}
	if (s.recording) {
		err = recording__finish(s.recording, s.symbolizer,
					probes__ring_dropped(s.probes));
		if (err)
			goto cleanup;
	}
	report_costs(&s);
	exit_code = target__launched(s.target) ? target__exit_code(s.target) : 0;
	if (exit_code < 0)
		exit_code = 0;	/* stopped before the launched command ended */
cleanup:
	recording__free(s.recording);
	live__free(s.live);
	stacktab__free(s.stacks);
	threadtable__free(s.threads);
	threadstates__free(s.states);
	symbolizer__free(s.symbolizer);
	debugfetch__free(s.fetch);
	snapshot__free(s.prev);
	snapshot__free(s.prev_blame);
	snapshot__free(s.pending);
	probes__free(s.probes);
	procspace__free(s.space);
	free(s.naming);
	procset__free(s.procs);
	libcmodel__free(s.libc);
	skiplist__free(s.skip);
	notices__free(s.notices);
	target__free(s.target);
	if (signal_fd >= 0)
		close(signal_fd);
	if (outfile__close(s.out_file) && !err)
		exit_code = 1;
	if (outfile__close(s.states_file) && !err)
		exit_code = 1;
	return exit_code;
}
