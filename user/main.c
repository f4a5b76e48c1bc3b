// SPDX-License-Identifier: GPL-2.0
/*
 * syncprof's lifecycle, linear: parse, check the host, find or launch the
 * target, load and attach the probes, let a launched target go, then one
 * poll loop over signals, the target's pidfd and the report timers, a
 * final report, and one cleanup path in reverse order.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "attachprio.h"
#include "columns.h"
#include "debugfetch.h"
#include "duty.h"
#include "hostcheck.h"
#include "live.h"
#include "log.h"
#include "outfile.h"
#include "options.h"
#include "probes.h"
#include "readiness.h"
#include "recording.h"
#include "replay.h"
#include "notices.h"
#include "stacktab.h"
#include "symbolizer.h"
#include "target.h"
#include "session.h"
#include "whatifrun.h"

static struct timespec timespec_of(double seconds)
{
	struct timespec ts = { .tv_sec = (time_t)seconds };

	ts.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (seconds > 0 && !ts.tv_sec && !ts.tv_nsec)
		ts.tv_nsec = 1;
	return ts;
}

/*
 * Arms fd to fire `seconds` after from_ns (CLOCK_MONOTONIC; 0: now), and
 * every `seconds` if periodic; 0 stops it.  A time already past fires
 * at once.
 */
static int timer_set(int fd, uint64_t from_ns, double seconds, bool periodic)
{
	struct itimerspec its = { 0 };
	int flags = 0;

	its.it_value = timespec_of(seconds);
	if (periodic)
		its.it_interval = its.it_value;
	if (from_ns && seconds > 0) {
		uint64_t at = from_ns + (uint64_t)its.it_value.tv_sec * 1000000000ull +
			      (uint64_t)its.it_value.tv_nsec;

		its.it_value.tv_sec = (time_t)(at / 1000000000ull);
		its.it_value.tv_nsec = (long)(at % 1000000000ull);
		flags = TFD_TIMER_ABSTIME;
	}
	return timerfd_settime(fd, flags, &its, NULL) ? -errno : 0;
}

static int timer_new(uint64_t from_ns, double seconds, bool periodic)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int err;

	if (fd < 0)
		return -errno;
	err = timer_set(fd, from_ns, seconds, periodic);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Puts a new timer into a poll slot, counted from from_ns (0: now). */
static int loop_timer(struct pollfd *slot, uint64_t from_ns, double seconds,
		      bool periodic)
{
	int fd = timer_new(from_ns, seconds, periodic);

	if (fd < 0)
		return fd;
	slot->fd = fd;
	return 0;
}

enum {
	FD_SIGNAL, FD_TARGET, FD_EVENTS, FD_KEYS, FD_SERVE,
	FD_INTERVAL, FD_DURATION, FD_MODULES, FD_STATES, /* timers, ours to close */
	FD_HOUSEKEEPING,
	FD__COUNT
};

/* How often the module list is re-read when the loader cannot be watched. */
#define MODULES_REFRESH_S 1.0
/*
 * --states: how often the threads map is read between reports, so the
 * entries of threads that died leave it (and a thread-churning target
 * does not fill it before a long interval ends).
 */
#define STATES_DRAIN_S 1.0

/*
 * Runs until the duration ends, a signal comes or the target exits
 * (--serve: until a signal).
 */
static int session__loop(struct session *s, int signal_fd)
{
	struct pollfd fds[FD__COUNT];
	uint64_t origin_ns, read_ns;
	int err = 0;

	for (int i = 0; i < FD__COUNT; i++)
		fds[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
	fds[FD_SIGNAL].fd = signal_fd;
	fds[FD_TARGET].fd = target__pidfd(s->target);
	fds[FD_EVENTS].fd = probes__events_fd(s->probes);
	fds[FD_KEYS].fd = s->live ? live__input_fd(s->live) : -1;
	fds[FD_SERVE].fd = session__serve_fd(s);
	/* --duration and --interval count from the window's start: the
	   probes live, not the loop's (-d 1: one second measured). */
	session__read_span(s, &origin_ns, &read_ns);
	if (s->opts->interval_s > 0)
		err = loop_timer(&fds[FD_INTERVAL], origin_ns,
				 s->opts->interval_s, true);
	if (!err && s->opts->duration_s > 0)
		err = loop_timer(&fds[FD_DURATION], origin_ns,
				 s->opts->duration_s, false);
	/* Polling the module list is the fallback for no loader watch. */
	if (!err && fds[FD_EVENTS].fd < 0)
		err = loop_timer(&fds[FD_MODULES], 0, MODULES_REFRESH_S, true);
	if (!err && s->opts->states)
		err = loop_timer(&fds[FD_STATES], 0, STATES_DRAIN_S, true);
	if (!err)
		err = loop_timer(&fds[FD_HOUSEKEEPING], 0, HOUSEKEEPING_S, true);
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
			/* The report names it as it was at its end (an exec). */
			session__rename(s);
			pr_info("PID %d exited", (int)target__pid(s->target));
			if (!session__space(s)) {
				session__target_exited(s);
				fds[FD_TARGET].fd = -1;
				if (!session__serving(s))
					break;
				continue;
			}
			/* Several: the others go on. */
			session__root_gone(s);
			fds[FD_TARGET].fd = -1;
		}
		if (fds[FD_DURATION].revents)
			break;
		/* Several: forks and exits do not wake the loop (stats.bpf.h);
		   the tick takes them, before the sweep asks /proc. */
		if (fds[FD_EVENTS].revents ||
		    (session__space(s) && fds[FD_HOUSEKEEPING].revents)) {
			unsigned int seen = session__take_events(s);

			if (seen & PROBES_EVENT_THREAD_EXIT)
				session__follow_threads(s);
			/* Several: per process, in session__take_events. */
			if ((seen & PROBES_EVENT_MODULES) && !session__space(s))
				session__modules_changed(s);
		}
		if (session__space(s) && fds[FD_HOUSEKEEPING].revents)
			session__sweep_processes(s);
		/* Forks not taken yet (they do not wake the loop) may have
		   made a process to follow: taken before the end. */
		if (session__space(s) && !session__alive(s) &&
		    !session__serving(s))
			session__take_events(s);
		if (session__space(s) && !session__alive(s) &&
		    !session__serving(s)) {
			pr_info("every followed process exited");
			session__target_exited(s);
			break;
		}
		if (fds[FD_HOUSEKEEPING].revents &&
		    read(fds[FD_HOUSEKEEPING].fd, &ticks, sizeof(ticks)) > 0) {
			session__follow_threads(s);
			/* Exited threads' rows out of the map, between reports;
			   --serve names them now: events first. */
			if (session__serving(s) && session__space(s))
				session__take_events(s);
			err = session__read_between(s);
			if (err > 0)
				err = session__serve_publish(s);
			if (!err)
				session__notice_children(s, session__totals(s));
			session__blocked_housekeep(s);
			if (!err && s->recording)
				err = recording__checkpoint(s->recording,
							    s->symbolizer);
			if (err)
				break;
		}
		if (fds[FD_SERVE].revents) {
			err = session__serve_dispatch(s);
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
				err = timer_set(fds[FD_INTERVAL].fd, 0,
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

int main(int argc, char **argv)
{
	struct options opts;
	struct session s = { .opts = &opts };
	struct target_signals caller_signals;
	struct attachprio prio = { 0 };
	bool target_gone = false;
	char library[4096];
	int signal_fd = -1, err, exit_code = 1;

	err = options__parse(&opts, argc, argv);
	if (err)
		return 2;
	if (opts.help_shown) {
		/* What the table's columns say, from their one model. */
		if (opts.help_full)
			columns__help(stdout);
		return 0;
	}
	log__set_level(LOG_WARN + opts.verbosity);
	/* Big arrays (map reads, snapshots) mapped apart, unmapped when freed. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	log__capture_libbpf();
	if (opts.replay_dir)
		return replay_main(&opts);

	/*
	 * Raised before anything of the attach: the host checks, the
	 * target's /proc reads and the reports' files are part of its wall
	 * time too (0.2-0.5 s of it beside 10 busy loops at nice 0).  A
	 * command is launched first: it starts at the caller's nice.
	 */
	if (!opts.command)
		attachprio__raise(&prio);
	if (hostcheck__privileges() || hostcheck__kernel("/sys")) {
		attachprio__restore(&prio);
		return 1;
	}
	if (session__reports_open(&s))
		goto cleanup;
	/* Blocked before launch; the child restores the caller's mask. */
	err = signals_block(&signal_fd, &caller_signals);
	if (err) {
		pr_err("cannot set up signal handling: %s", strerror(-err));
		goto cleanup;
	}
	if (opts.all)
		err = session__all_processes(&opts, &s.target);
	else
		err = opts.command ? target__launch(opts.command,
						    &caller_signals, &s.target)
				   : target__attach(opts.pid, &s.target);
	if (!err && !opts.command && !opts.all)
		err = session__check_pids(&opts, target__pid(s.target));
	if (err)
		goto cleanup;
	session__set_origin(&s, 0);
	/* Attaching takes a while (tables, the verifier): say so first. */
	if (isatty(STDERR_FILENO) || log__enabled(LOG_INFO))
		log__notice("attaching to PID %d (%s), %s mode...",
			    (int)target__pid(s.target), target__comm(s.target),
			    options__mode_name(opts.mode));
	/* What fails because the target left is no error: held until known. */
	log__hold();
	attachprio__raise(&prio);
	err = session__start(&s, library, sizeof(library), argc, argv);
	attachprio__restore(&prio);
	/*
	 * A launched target only goes once it is let go, at the very end.
	 * One that is on its way out counts as gone (its files vanish
	 * before its pidfd says so), under the name it had then.
	 */
	target_gone = (err || !target__launched(s.target)) &&
		      target__exiting(s.target);
	log__release(!target_gone);
	if (target_gone) {
		session__rename(&s);
		/* A sane end: the report of what was seen, if anything. */
		pr_warn("PID %d (%s) exited while syncprof attached%s",
			(int)target__pid(s.target), target__comm(s.target),
			s.probes ? "" : "; nothing was counted");
		/* Attached all the same: the loop ends at once, reports. */
		target_gone = err != 0;
		err = 0;
	}
	if (!err && opts.serve && !target_gone)
		err = session__serve_start(&s);
	if (!err && !target_gone)
		err = session__what_if_check(&s);
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
	session__reports_begin(&s);
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
	for (int i = 0; !err && session__space(&s) && s.probes && i < 8; i++)
		session__take_events(&s);
	if (!err && !target__exited(s.target))
		err = session__what_if(&s, signal_fd);
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
	session__report_costs(&s);
	exit_code = target__launched(s.target) ? target__exit_code(s.target) : 0;
	if (exit_code < 0)
		exit_code = 0;	/* stopped before the launched command ended */
cleanup:
	/* Failed while attaching: its session's group is put back too. */
	attachprio__restore(&prio);
	session__serve_free(&s);
	session__what_if_free(&s);
	recording__free(s.recording);
	live__free(s.live);
	stacktab__free(s.stacks);
	symbolizer__free(s.symbolizer);
	debugfetch__free(s.fetch);
	/* --duty's switches end before the links they switch go. */
	duty__free(s.duty);
	s.duty = NULL;
	probes__free(s.probes);
	session__follow_free(&s);
	session__startup_free(&s);
	notices__free(s.notices);
	target__free(s.target);
	if (signal_fd >= 0)
		close(signal_fd);
	if (session__reports_close(&s) && !err)
		exit_code = 1;
	return exit_code;
}
