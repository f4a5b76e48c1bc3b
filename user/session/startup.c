// SPDX-License-Identifier: GPL-2.0
/*
 * A session's start, linear: the target's libc, the processes and their
 * names, the notices, the probes configured for the mode (contended
 * mode's libc model, full mode's calibration), loaded and attached,
 * --states' and --record's readers, and a launched target let go.
 * And what -v says at the end of what it all cost.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate.h"
#include "condprobe.h"
#include "debugfetch.h"
#include "duty.h"
#include "hostcheck.h"
#include "libcmodel.h"
#include "live.h"
#include "log.h"
#include "options.h"
#include "probes.h"
#include "procspace.h"
#include "recording.h"
#include "skiplist.h"
#include "notices.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "target.h"
#include "session.h"

/* What the start made that lives until the end. */
struct startup {
	struct libcmodel *libc;	/* contended mode: the target's libc */
	struct skiplist *skip;	/* --skip */
};

/* --states: threads the kernel's table holds, dead ones until read. */
#define STATES_MAX_THREADS 8192
/* --duty: the probes on PCT% of each second. */
#define DUTY_PERIOD_NS 1000000000ull

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

/* The calibration's figures kept and said; false when it failed. */
static bool calibration_taken(struct session *s, int err,
			      const struct calibration *cal)
{
	char emulated[160], stepped[160];

	if (err) {
		pr_warn("cannot calibrate the probes (%s); waits include "
			"their own time", strerror(-err));
		return false;
	}
	s->calibration.ns = cal->ns;
	memcpy(s->calibration.site_ns, cal->by_site,
	       sizeof(cal->by_site));
	calibration_text(cal, SP_SITE_EMULATED, emulated, sizeof(emulated));
	calibration_text(cal, SP_SITE_STEPPED, stepped, sizeof(stepped));
	pr_info("calibration: %u single pthread_mutex_lock calls per site; "
		"subtracted: %s at emulated sites, %s at single-stepped ones",
		cal->calls, emulated, stepped);
	if (cal->inverted)
		pr_warn("calibration unstable (a busy machine?): probes at "
			"single-stepped sites read cheaper than at emulated "
			"ones; subtracting %.2f us at both",
			cal->by_site[SP_SITE_EMULATED] * 1e-3);
	else if (cal->unstable)
		pr_warn("calibration unstable (a busy machine?): most calls "
			"were slowed; subtracting the fastest, %.2f us at "
			"emulated sites and %.2f us at single-stepped ones",
			cal->by_site[SP_SITE_EMULATED] * 1e-3,
			cal->by_site[SP_SITE_STEPPED] * 1e-3);
	return true;
}

/*
 * Full mode: the calibration starts in a thread of its own, to measure
 * while the real programs load (calibrate.c); without a thread, here
 * and now, into cfg.  *run NULL then.
 */
static void calibration_start(struct session *s, struct probes_config *cfg,
			      struct calibrate_run **run)
{
	struct calibration cal;
	int err;

	*run = NULL;
	if (!calibrate__start(s->opts->probe_at_entry, run))
		return;
	err = calibrate__run(s->opts->probe_at_entry, &cal);
	if (calibration_taken(s, err, &cal))
		memcpy(cfg->calibration_ns, cal.by_site, sizeof(cal.by_site));
}

/* The calibration's end, its figures into the loaded programs. */
static void calibration_end(struct session *s, struct calibrate_run *run)
{
	struct calibration cal;
	int err;

	if (!run)
		return;
	err = calibrate__join(run, &cal);
	/* The probes failed to load: that error is the one said. */
	if (s->probes && calibration_taken(s, err, &cal))
		probes__set_calibration(s->probes, cal.by_site);
}

/* Contended mode: the target's libc read, placed and measured. */
static int contended_setup(struct session *s, const char *library,
			   struct probes_config *cfg)
{
	size_t n_rows, n_funcs;
	char why[512];
	int err = hostcheck__tracepoints("/sys", why, sizeof(why));

	if (err) {
		pr_err("contended mode needs the futex tracepoints: %s%s", why,
		       err == -ENOTSUP ? "; use --mode full" : "");
		return err;
	}
	err = libcmodel__build(library, &s->startup->libc);
	if (err) {
		pr_err("cannot read the unwind rules and functions of %s: %s",
		       library, strerror(-err));
		return err;
	}
	cfg->libc = s->startup->libc;
	err = condprobe__signal_offset(library, &cfg->cond_signal_offset);
	if (err)
		pr_warn("cannot find where this libc's condvars wait (%s); "
			"condvar rows name the futex word, not the condvar",
			strerror(-err));
	libcmodel__rows(s->startup->libc, &n_rows);
	libcmodel__funcs(s->startup->libc, &n_funcs);
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
	const struct session_calibration *cal = &s->calibration;
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
		.calibration_ns = cal->ns,
		.calibration_emulated_ns = cal->site_ns[SP_SITE_EMULATED],
		.calibration_stepped_ns = cal->site_ns[SP_SITE_STEPPED],
		.map_size = s->opts->map_size,
		.ring_size = s->opts->ring_size,
	};

	return recording__start(&cfg, &s->recording);
}

void session__startup_free(struct session *s)
{
	if (!s->startup)
		return;
	duty__free(s->duty);
	s->duty = NULL;
	libcmodel__free(s->startup->libc);
	skiplist__free(s->startup->skip);
	free(s->startup);
	s->startup = NULL;
}

/* -v: what the unwind tables cost. */
static void report_unwind_tables(struct session *s)
{
	const struct skiplist *skip = s->startup->skip;
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
		skiplist__empty(skip) ? "" : ", lock functions marked");
	if (st.skipped)
		pr_info("%zu runtime lock functions (built-in and --skip) are "
			"part of the lock implementation", st.skipped);
	if (skiplist__has_user_globs(skip) && !st.user_skipped)
		pr_warn("no function matches --skip in the target's modules");
}

/* -v at the end: how the walks went, and what the programs cost. */
void session__report_costs(struct session *s)
{
	struct probes_stack_counts c;
	struct probes_drops drops;
	struct probes_late_stats late;
	uint64_t let_go = 0;
	size_t pending;
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
	probes__drops(s->probes, &drops);
	if (drops.blame_full || drops.caused_full)
		pr_info("charges not kept, their tables full (--map-size %u): "
			"%llu of waits to the releases that ended them, %llu "
			"parts of waits to the holds they waited through (for "
			"the findings); every wait is counted",
			s->opts->map_size,
			(unsigned long long)drops.blame_full,
			(unsigned long long)drops.caused_full);
	probes__stack_counts(s->probes, &c);
	probes__late_stats(s->probes, &late);
	pending = probes__stacks_pending(s->probes, &let_go);
	if (late.finished || late.cut)
		pr_info("stacks cut by tables read late: %llu finished when "
			"the tables came, %llu left cut",
			(unsigned long long)late.finished,
			(unsigned long long)late.cut);
	if (probes__unwinds(s->probes))
		pr_info("stacks: %zu kept; call sites left inside libc %llu "
			"(unwind_stopped) and %llu of releases; walks stopped "
			"early %llu (JIT or "
			"anonymous code %llu, just after an exec %llu), frames "
			"lost to a full map %llu, frame cache misses %llu; "
			"%zu drained and named by no row read (%llu let go "
			"unnamed)",
			stacktab__count(s->stacks),
			(unsigned long long)probes__unwind_stopped(s->probes),
			(unsigned long long)c.release_stopped,
			(unsigned long long)c.stopped, (unsigned long long)c.anon,
			(unsigned long long)c.stale, (unsigned long long)c.lost,
			(unsigned long long)c.misses, pending,
			(unsigned long long)let_go);
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
 * --all: the first process may end at any moment; when its libc is the
 * one syncprof's own root has, the path is taken from there.
 */
static void all_library_path(char *library)
{
	struct stat theirs, ours;
	char *rest;

	if (strncmp(library, "/proc/", 6))
		return;
	rest = strstr(library + 6, "/root/");
	if (!rest || stat(library, &theirs) || stat(rest + 5, &ours) ||
	    theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
		return;
	memmove(library, rest + 5, strlen(rest + 5) + 1);
}

/*
 * Finds the target's libc, names its modules, loads and attaches the
 * probes and lets a launched target go.  attach_ns is when every probe
 * that counts was in, after their load and placing: the first window
 * holds what they count from then on, not the time they took.
 */
int session__start(struct session *s, char *library, size_t len,
		   int argc, char **argv)
{
	const struct options *opts = s->opts;
	int err = target__pthread_library(s->target, library, len);
	struct calibrate_run *calibrating = NULL;
	bool several = options__several(opts);
	pid_t root = target__pid(s->target);
	uint64_t origin_ns;

	if (err)
		return err;
	if (opts->all)
		all_library_path(library);
	s->startup = calloc(1, sizeof(*s->startup));
	if (!s->startup)
		return -ENOMEM;
	err = session__follow_start(s, several);
	if (err)
		return err;
	if (several && opts->command)
		err = procspace__update(session__space(s), root, 0);
	if (!err)
		err = debugfetch__new(DEBUGFETCH_LIMIT_S, &s->fetch);
	symbolizer__use_debuginfod(s->fetch);
	/* Named first: a target may not live long (launched: it is held). */
	if (!err && several)
		err = procspace__symbolizer(session__space(s), &s->symbolizer);
	else if (!err)
		err = symbolizer__new(root, NULL, &s->symbolizer);
	if (!err)
		err = stacktab__new(&s->stacks);
	if (!err)
		err = skiplist__new(opts->skip, opts->n_skip, &s->startup->skip);
	if (!err && !opts->no_skip)
		err = skiplist__add_wrappers(s->startup->skip);
	if (!err) {
		const struct notices_run run = {
			.full = opts->mode != MODE_CONTENDED,
			.several = several,
			.off_cpu = opts->off_cpu,
			.lock_order = opts->lock_order,
		};

		err = notices__detect(target__pid(s->target), &run,
				      &s->notices);
	}
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
		.skip = s->startup->skip,
		.follow_exec = true,
		.wait_timing = opts->verbosity > 0,
		/*
		 * The findings weigh each thread's waits, and charge a
		 * contended mode's waits to the holds they overlapped;
		 * --serve prints no report, so no findings.
		 */
		.rows_by_thread = !opts->serve || opts->per_thread ||
				  opts->blame || opts->hold || opts->states ||
				  live__applies(opts, isatty(STDOUT_FILENO)),
		.blame = opts->blame ||
			 (opts->mode == MODE_CONTENDED && !opts->serve),
		/* The findings, which --serve does not make, read them. */
		.caused = !opts->serve,
		/*
		 * --serve reads the releases' rows at /debug/pprof/mutex's
		 * asks only, and under --all every wake of the host walks
		 * its stack: the stacks no row named go after 2-4 minutes.
		 * A report reads every row at its end: all stay.
		 */
		.unnamed_stacks_s = opts->serve ? 120 : 0,
		.why = opts->why,
		.hold = opts->hold,
		.lock_order = opts->lock_order,
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
			calibration_start(s, &cfg, &calibrating);
		pr_info("full mode: probes on %s%s", library, calibrating ?
			"; calibrating while the programs load" : "");
		char why[512];

		/* Following an exec takes a tracepoint (tracefs). */
		if ((opts->stack_depth || !skiplist__empty(s->startup->skip)) &&
		    hostcheck__tracepoints("/sys", why, sizeof(why))) {
			pr_warn("after an exec, stacks stop at the new image: "
				"%s", why);
			cfg.follow_exec = false;
		}
	}
	if (err)
		return err;
	err = probes__new(&cfg, &s->probes);
	/* Joined on failure too: its child and probes go first. */
	calibration_end(s, calibrating);
	if (!err && opts->lock_order)
		err = session__lock_order_start(s);
	if (!err && options__recording(opts))
		err = recording_start(s, argc, argv);
	if (err)
		return err;
	if (several)
		probes__set_translate(s->probes, session__translate, s);
	if (several)
		probes__set_stacks(s->probes, s->stacks);
	report_unwind_tables(s);
	err = probes__attach(s->probes, library);
	/* The report's window: from the probes live, not their load. */
	if (probes__live_ns(s->probes))
		session__set_origin(s, probes__live_ns(s->probes));
	/* After the fork watch is on: none slips between. */
	for (size_t i = 0; !err && opts->children && i < cfg.n_pids; i++)
		session__add_descendants(s, cfg.pids[i]);
	if (!err && opts->states)
		err = session__states_start(s);
	if (err)
		return err;
	session__blocked_start(s);
	/* With --states, the first read of the threads map is the origin. */
	err = session__open_window(s, &origin_ns);
	if (err) {
		pr_err("cannot read the threads map: %s", strerror(-err));
		return err;
	}
	if (s->recording)
		recording__attached(s->recording, origin_ns);
	/* Only names suffer without it: libraries dlopen'ed and gone. */
	if (target__loader_library(s->target, library, len) ||
	    probes__attach_loader(s->probes, library))
		pr_info("not watching the dynamic loader; libraries loaded "
			"later are named within a second");
	/* --duty: the first slice on began when the probes went live. */
	if (opts->duty_pct && opts->duty_pct < 100) {
		err = duty__new(s->probes, opts->duty_pct, DUTY_PERIOD_NS,
				&s->duty);
		if (err)
			return err;
	}
	err = target__resume(s->target);
	if (err)
		pr_err("cannot resume PID %d: %s", (int)target__pid(s->target),
		       strerror(-err));
	return err;
}
