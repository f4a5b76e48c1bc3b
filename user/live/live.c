// SPDX-License-Identifier: GPL-2.0
/*
 * The live screen, in QSP's manner: what was chosen, and why.
 *
 * Files.  live.c: the screen's life (the terminal, keys read, refreshes
 * and the data they keep); livekeys.c: what each key changes, and the
 * split of the window (pure, unit-tested); livedraw.c: the header, the
 * table and the key line; livepanes.c: the pane under the table
 * (stacks, histogram, roots).  They share struct live (liveimpl.h).
 *
 * Keys.  cbreak(), not raw(): Ctrl-C still makes SIGINT, which main
 * reads from its signalfd like any other stop.  getch() runs with
 * nodelay inside main's one poll loop, on the terminal's descriptor, next
 * to the signalfd, the pidfd and the timers.  Rejected: an input thread
 * (ncurses is not thread-safe, and the loop would need a second wakeup
 * path), and a getch() timeout as the loop's clock (it would tie report
 * timing to key reads).
 *
 * Resizes.  ncurses installs its own SIGWINCH handler and queues
 * KEY_RESIZE with the new size already applied; SIGWINCH interrupts
 * main's poll (EINTR), and main calls live__handle_input on every pass of
 * its loop, which reads it.  Rejected: SIGWINCH through the signalfd
 * (ncurses would never see it; the size would have to be read and applied
 * by hand).
 *
 * Data.  Each refresh gets the change since the refresh before (main
 * reads the probes then, and every second in between so the rows of
 * exited threads leave the kernel's map: the deltas of those reads add
 * up).  The screen keeps it and the deltas summed since attach or the
 * last reset (snapshot__merge).  Summing the windows
 * keeps "Max" exact across a reset (QSP's sync-profile reset); a
 * difference against the snapshot at the reset would give its counts but
 * only the last window's maximum.  Pausing stops the refresh timer rather
 * than discarding reads, so the window after a resume spans the pause and
 * no call's maximum falls between two reads.
 *
 * Stacks.  Up/Down highlight a row; g (or Enter) splits the screen: the
 * table above, the selected row's stacks below, the same lines -g prints
 * under the table's rows (callgraph.c), scrolled with PgUp/PgDn.  The
 * selection follows its row (type, call site, thread, and object when not
 * coalesced) across refreshes and re-sorts, as top's does, rather than
 * staying on a line whose row changes under it.  H shows the selected
 * row's histogram of waits in the same place instead (the lines --hist
 * prints); w (--why) the roots of its chains, then of every row (the
 * table's "Where the chains end" sections, rootpane.c); one pane at a
 * time.  --why's charges come as totals since attach with each refresh
 * (live__set_why); the view is their difference from the read before
 * (deltas) or from the read at the last reset (totals), as the rows'.
 *
 * Diagnostics written while the screen is up would scribble over it:
 * when stderr is a terminal it is pointed at a memfd and replayed after
 * endwin(), in order.  The locale is set for LC_CTYPE only (UTF-8 names
 * on screen); numbers keep their '.' in the final report.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "live.h"
#include "liveimpl.h"
#include "log.h"
#include "sortorder.h"
#include "statepanel.h"
#include "text.h"
#include "whyrows.h"

/* ---- data --------------------------------------------------------------- */

/* The wall-clock time now, as top's header gives it: HH:MM:SS. */
static void live__clock(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

/*
 * Threads seen so far: the distinct threads of a snapshot's rows, and
 * those whose rows were merged when they exited (tid 0).
 */
static unsigned int count_threads(const struct snapshot *snap)
{
	size_t n = snapshot__count(snap);
	const struct snapshot_entry *e = snapshot__entries(snap);
	unsigned int distinct = (unsigned int)snapshot__threads_exited(snap);
	uint32_t *tids;

	if (!n)
		return distinct;
	tids = malloc(n * sizeof(*tids));
	if (!tids)
		return distinct;
	for (size_t i = 0; i < n; i++)
		tids[i] = e[i].key.tid;
	qsort(tids, n, sizeof(*tids), order__u32_at);
	for (size_t i = 0; i < n; i++)
		distinct += tids[i] && (!i || tids[i] != tids[i - 1]);
	free(tids);
	return distinct;
}

/* Calls that ended in a snapshot: acquisitions and failures. */
static uint64_t count_events(const struct snapshot *snap)
{
	const struct snapshot_entry *e = snapshot__entries(snap);
	uint64_t events = 0;

	for (size_t i = 0; i < snapshot__count(snap); i++)
		events += e[i].count + e[i].failed;
	return events;
}

/* Whether b is row a, as the selection follows it across rebuilds. */
static bool same_row(const struct report_row *a, const struct report_row *b,
		     bool coalesce)
{
	return a->type == b->type && a->callsite == b->callsite &&
	       a->tid == b->tid && a->owner_tid == b->owner_tid &&
	       (coalesce || a->object == b->object);
}

/* Builds the rows that fit from the view the settings ask for, and draws. */
static int live__rebuild(struct live *l)
{
	const struct snapshot *view = l->state.cumulative ? l->totals : l->delta;
	int table, pane, err = 0;

	if (l->states && l->state.cumulative) {
		threadstates__free_report(&l->states_totals);
		err = threadstates__report(l->states, STATES_SINCE_ORIGIN,
					   l->state.group, &l->states_totals);
		if (err)
			return err;
	}
	/* The thread-state panel takes its lines from the table's. */
	live__split(LINES, live__pane_open(&l->state), &table, &pane);
	l->panel_lines = l->states && l->screen
		? statepanel__lines(table, live__states_view(l)->count) : 0;
	/* Every row, to scroll through; only those shown are named. */
	const struct report_settings settings = {
		.coalesce = l->state.coalesce,
		.per_thread = l->state.per_thread,
		.sort = l->state.sort,
		.top = LIVE_MAX_ROWS,
		.classes = l->state.classes,
	};

	report__free(&l->rows);
	free(l->names);
	l->names = NULL;
	l->names_valid = false;
	l->settings = settings;
	if (view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), &settings, &l->rows);
	if (!err && l->why_now) {
		why__free(l->why_view);
		l->why_view = NULL;
		err = why__delta(l->why_now, l->state.cumulative ? l->why_base
							   : l->why_last,
				 &l->why_view);
	}
	if (err) {
		report__free(&l->rows);
		return err;
	}
	/* The selected row, wherever the new order put it. */
	for (size_t i = 0; l->has_selected && i < l->rows.count; i++) {
		if (same_row(&l->rows.rows[i], &l->selected,
			     l->state.coalesce)) {
			l->state.selected = (int)i;
			break;
		}
	}
	return live__draw(l);
}

/*
 * The thread states of the window that ends at this refresh, by thread
 * and by name; the next window starts here.  reset: the totals too.
 */
static int live__update_states(struct live *l, bool reset)
{
	int err = 0;

	if (reset)
		threadstates__reset(l->states);
	for (int group = 0; group < 2 && !err; group++) {
		threadstates__free_report(&l->states_delta[group]);
		err = threadstates__report(l->states, STATES_SINCE_MARK, group,
					   &l->states_delta[group]);
	}
	threadstates__mark(l->states);
	return err;
}

/* --why at a reset: the totals and the next window start from now. */
static int live__reset_why(struct live *l)
{
	struct why *base = NULL, *last = NULL;
	int err = why__delta(l->why_now, NULL, &base);

	if (!err)
		err = why__delta(l->why_now, NULL, &last);
	if (err) {
		why__free(base);
		return err;
	}
	why__free(l->why_base);
	why__free(l->why_last);
	l->why_base = base;
	l->why_last = last;
	return 0;
}

void live__set_why(struct live *l, struct why *read)
{
	why__free(l->why_last);
	l->why_last = l->why_now;
	l->why_now = read;
}

int live__update(struct live *l, const struct snapshot *snap,
		 struct snapshot *delta, uint64_t now_ns,
		 const struct format_drops *drops)
{
	struct snapshot *totals = NULL;
	uint64_t window = now_ns - l->prev_ns;
	bool reset = l->state.reset;
	int err;

	if (!delta) {
		err = snapshot__new(&delta);
		if (err)
			return err;
	}
	l->events_per_s = window ? (double)count_events(delta) /
				   ((double)window * 1e-9) : 0.0;
	if (reset) {
		/* QSP's sync-profile reset: everything starts again from now. */
		snapshot__free(delta);
		delta = NULL;
		err = snapshot__new(&delta);
		if (!err)
			err = snapshot__new(&totals);
		l->since_ns = now_ns;
		l->was_reset = true;
		l->state.reset = false;
	} else {
		err = snapshot__merge(l->totals, delta, &totals);
	}
	if (!err && l->states)
		err = live__update_states(l, reset);
	if (!err && reset && l->why_now)
		err = live__reset_why(l);
	if (err) {
		snapshot__free(totals);
		snapshot__free(delta);
		return err;
	}
	l->threads = count_threads(snap);
	snapshot__free(l->delta);
	snapshot__free(l->totals);
	l->delta = delta;
	l->totals = totals;
	l->delta_ns = window;
	l->prev_ns = now_ns;
	live__clock(l->updated_at, sizeof(l->updated_at));
	l->drops = *drops;
	l->dropped = format__drops_total(drops);
	return live__rebuild(l);
}

int live__handle_input(struct live *l)
{
	int ch, actions = 0, err = 0;

	if (!l->screen)
		return 0;
	while (!(actions & LIVE_QUIT) && (ch = getch()) != ERR) {
		if (ch == KEY_RESIZE) {
			actions |= LIVE_REBUILD;
		} else if (ch == ('L' & 0x1f)) {
			clearok(curscr, TRUE);
			actions |= LIVE_REDRAW;
		} else {
			actions |= live__key(&l->state, ch);
		}
	}
	if (actions & LIVE_QUIT)
		return LIVE_QUIT;
	if (actions & LIVE_REBUILD)
		err = live__rebuild(l);
	else if (actions & LIVE_REDRAW)
		err = live__draw(l);
	if (err)
		return err;
	return actions & (LIVE_REFRESH | LIVE_RETIME);
}

void live__set_processes(struct live *l, size_t followed, size_t running)
{
	l->processes = followed;
	l->running = running;
}

void live__set_lock_cycles(struct live *l, long cycles)
{
	l->lock_cycles = cycles;
}

void live__set_findings(struct live *l, const char *line)
{
	snprintf(l->findings, sizeof(l->findings), "%s", line ? line : "");
}

int live__input_fd(const struct live *l)
{
	return l->screen ? fileno(l->in) : -1;
}

double live__interval(const struct live *l)
{
	return l->state.paused ? 0.0 : l->state.interval_s;
}

bool live__stacks_shown(const struct live *l)
{
	return l->state.stacks;
}

bool live__group_threads(const struct live *l)
{
	return l->state.group;
}

const struct snapshot *live__totals(const struct live *l,
				    struct report_settings *settings,
				    uint64_t *since_ns)
{
	settings->coalesce = l->state.coalesce;
	settings->per_thread = l->state.per_thread;
	settings->sort = l->state.sort;
	*since_ns = l->since_ns;
	return l->totals;
}

/* ---- the terminal ------------------------------------------------------- */

/* Points a terminal stderr at a memfd while the screen is up. */
static void live__hold_stderr(struct live *l)
{
	int fd;

	if (!isatty(STDERR_FILENO))
		return;
	fd = memfd_create("syncprof-stderr", MFD_CLOEXEC);
	if (fd < 0)
		return;		/* diagnostics then scribble; not fatal */
	fflush(stderr);
	l->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (l->saved_stderr < 0 || dup2(fd, STDERR_FILENO) < 0) {
		if (l->saved_stderr >= 0)
			close(l->saved_stderr);
		l->saved_stderr = -1;
		close(fd);
		return;
	}
	l->held_stderr = fd;
}

/* Gives stderr back and writes what was held to it. */
static void live__release_stderr(struct live *l)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	if (l->held_stderr < 0)
		return;
	fflush(stderr);
	dup2(l->saved_stderr, STDERR_FILENO);
	close(l->saved_stderr);
	l->saved_stderr = -1;
	while ((n = pread(l->held_stderr, buf, sizeof(buf), off)) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(STDERR_FILENO, buf + done,
					  (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			done += w;
		}
		off += n;
	}
	close(l->held_stderr);
	l->held_stderr = -1;
}

int live__new(const struct live_config *cfg, struct live **out)
{
	struct live *l = calloc(1, sizeof(*l));
	int err;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->state = (struct live_state){
		.sort = cfg->sort,
		.coalesce = cfg->coalesce,
		.per_thread = cfg->per_thread,
		.cumulative = cfg->cumulative,
		.interval_s = cfg->interval_s,
		.stacks = cfg->stacks,
		.selecting = cfg->stacks,
		.states = cfg->states != NULL,
		.group = cfg->group_threads,
		.why = cfg->why,
	};
	l->states = cfg->states;
	l->pid = cfg->pid;
	text__sanitize(cfg->cmdline ? cfg->cmdline : "", l->cmdline,
			 sizeof(l->cmdline));
	l->mode = cfg->mode;
	l->callsite = cfg->callsite;
	l->symbolizer = cfg->symbolizer;
	l->stacktab = cfg->stacktab;
	l->attach_ns = l->prev_ns = l->since_ns = cfg->attach_ns;
	live__clock(l->updated_at, sizeof(l->updated_at));
	l->map_size = cfg->map_size;
	l->saved_stderr = l->held_stderr = -1;

	if (isatty(STDIN_FILENO)) {
		l->in = stdin;
	} else {
		int fd = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);

		l->in = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!l->in) {
			err = -errno;
			if (fd >= 0)
				close(fd);
			pr_info("no terminal to read keys from: %s",
				strerror(-err));
			free(l);
			return err;
		}
		l->own_in = true;
	}
	setlocale(LC_CTYPE, "");
	fflush(stdout);
	l->screen = newterm(NULL, stdout, l->in);
	if (!l->screen) {
		pr_info("terminal type '%s' unknown to terminfo",
			getenv("TERM") ? getenv("TERM") : "");
		live__free(l);
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);	/* a lone Esc must not stall the loop for 1 s */
	curs_set(0);
	if (l->states)
		statepanel__init_colors();
	live__hold_stderr(l);
	err = live__rebuild(l);
	if (err) {
		live__free(l);
		return err;
	}
	*out = l;
	return 0;
}

void live__end(struct live *l)
{
	if (!l || !l->screen)
		return;
	endwin();
	delscreen(l->screen);
	l->screen = NULL;
	fflush(stdout);
	live__release_stderr(l);
}

void live__free(struct live *l)
{
	if (!l)
		return;
	live__end(l);
	if (l->own_in && l->in)
		fclose(l->in);
	report__free(&l->rows);
	free(l->names);
	rowstacks__release(&l->stacks);
	snapshot__free(l->delta);
	snapshot__free(l->totals);
	for (int group = 0; group < 2; group++)
		threadstates__free_report(&l->states_delta[group]);
	threadstates__free_report(&l->states_totals);
	why__free(l->why_now);
	why__free(l->why_last);
	why__free(l->why_base);
	why__free(l->why_view);
	rootpane__release(&l->roots);
	free(l);
}
