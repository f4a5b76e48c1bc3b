// SPDX-License-Identifier: GPL-2.0
/*
 * The processes a session follows: several --pid and --children join
 * the probes' targets map and the unwind tables as they come (forks,
 * execs, exits from the probes' events), are named after (their
 * mappings, a symbolizer per program), and their rows are merged by
 * module and offset.  Also the probes' thread in full mode, and the
 * modules a target loads.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "blockedtime.h"
#include "clock.h"
#include "duty.h"
#include "format.h"
#include "hostprocs.h"
#include "log.h"
#include "options.h"
#include "probes.h"
#include "procmaps.h"
#include "procset.h"
#include "procspace.h"
#include "notices.h"
#include "snapshot.h"
#include "symbolizer.h"
#include "target.h"
#include "whycharges.h"
#include "session.h"

/* A process forked and not read yet (see follow__unread). */
struct unread {
	pid_t pid, parent;
	bool exec;		/* exec'ed since: the parent's layout is not its */
};

/* The processes a session follows, and what is pending about them. */
struct follow {
	struct procset *procs;
	struct procspace *space;	/* several processes; else NULL */
	bool root_exited;	/* the first target's pidfd said so */
	bool notice_children;	/* the --children notice was given */
	struct blockedtime *blocked;	/* the threads' blocked time, for
					   the --off-cpu notice; or NULL */
	struct probes_proc_event *naming;	/* events whose names wait */
	size_t n_naming, naming_cap;
	struct unread *unread;	/* forked, not read until their first wait */
	size_t n_unread, unread_cap;
	pid_t *stale;		/* a dlclose ended: read at the next tick */
	size_t n_stale, stale_cap;
	unsigned int sweeps;	/* session__sweep_processes's ticks */
};

/* Every this many ticks a sweep reads every followed process: an exit
   event lost in a full ring is found within as many seconds. */
#define SWEEP_ALL_EVERY 16

/*
 * A process whose dlclose ended (SP_LOAD_UNLOADED) is read again at the
 * next housekeeping tick, or sooner with its next load, not at once: its
 * mapping array was made stale when the dlclose began, so its walks go
 * by file meanwhile, and a library that went names nothing new (the
 * names' history keeps it; the read that follows closes its file).  A
 * process that loaded and unloaded a library in turn cost two maps
 * reads and two installs a cycle; now one.
 */
static void follow__stale(struct follow *f, pid_t pid, bool stale)
{
	for (size_t i = 0; i < f->n_stale; i++) {
		if (f->stale[i] != pid)
			continue;
		if (!stale)
			f->stale[i] = f->stale[--f->n_stale];
		return;
	}
	if (stale && !array__grow(&f->stale, &f->stale_cap, f->n_stale + 1,
				  sizeof(*f->stale)))
		f->stale[f->n_stale++] = pid;
}

/*
 * A process forked while several are followed is read (its mappings,
 * its unwind tables, its names) at its first wait, which the kernel
 * tells (SP_MODULE_EVENT_WAIT), not at its fork, exec and each library
 * it loads: most short processes never wait, and reading them was most
 * of what --all spent on them.  A first wait's walk cut by a table not
 * read yet is finished later (latewalk.c).  Rejected: reading a process
 * once it has lived a while (a long process that never waits would be
 * read all the same, a short one that waits would not be named).
 */
static struct unread *follow__unread(const struct follow *f, pid_t pid)
{
	for (size_t i = 0; i < f->n_unread; i++)
		if (f->unread[i].pid == pid)
			return &f->unread[i];
	return NULL;
}

/*
 * pid is read from now on; whether it was unread.  *as: the event its
 * names are read for: its fork (the parent's layout first, which names
 * its waits even if it has exited when its maps are read), else a load.
 */
static bool follow__read_now(struct follow *f, pid_t pid,
			     struct probes_proc_event *as)
{
	struct unread *u = follow__unread(f, pid);

	if (!u)
		return false;
	if (as && !u->exec && u->parent) {
		as->type = SP_MODULE_EVENT_FORK;
		as->parent = u->parent;
	}
	*u = f->unread[--f->n_unread];
	return true;
}

/*
 * Starts following the processes: the first target, and the other --pid
 * (several: their mappings read now, so the first rows merge; the first
 * target's are the caller's to read).
 */
int session__follow_start(struct session *s, bool several)
{
	const struct options *opts = s->opts;
	pid_t root = target__pid(s->target);
	struct follow *f = calloc(1, sizeof(*f));
	int err = f ? procset__new(&f->procs) : -ENOMEM;

	if (err) {
		free(f);
		return err;
	}
	s->follow = f;
	if (several)
		err = procspace__new(&f->space);
	if (err)
		return err;
	procset__add(f->procs, root, 0, NULL);
	for (size_t i = 0; several && i < opts->n_pids; i++) {
		procset__add(f->procs, opts->pids[i], 0, NULL);
		err = procspace__update(f->space, opts->pids[i], 0);
		/* --all: a process that ended since the list was read. */
		if (opts->all && (err == -ENOENT || err == -ESRCH)) {
			procset__exited(f->procs, opts->pids[i]);
			err = 0;
		}
		/* --all: one process the kernel will not show (a mapping
		   read failing with EIO as it changes) does not stop the
		   others; followed as the ones read later are. */
		if (opts->all && err && err != -ENOMEM) {
			pr_warn("PID %d: cannot read its mappings (%s); some of "
				"its waits may go unnamed", (int)opts->pids[i],
				strerror(-err));
			err = 0;
		}
		if (err) {
			pr_err("cannot read the mappings of PID %d: %s",
			       (int)opts->pids[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

void session__follow_free(struct session *s)
{
	struct follow *f = s->follow;

	if (!f)
		return;
	procspace__free(f->space);
	blockedtime__free(f->blocked);
	free(f->naming);
	free(f->unread);
	free(f->stale);
	procset__free(f->procs);
	free(f);
	s->follow = NULL;
}

struct procspace *session__space(const struct session *s)
{
	return s->follow ? s->follow->space : NULL;
}

const struct procset_entry *session__processes(const struct session *s,
						size_t *n)
{
	*n = 0;
	return session__space(s) ? procset__list(s->follow->procs, n) : NULL;
}

const struct procset_entry *session__process_names(const struct session *s,
						     size_t *n)
{
	*n = 0;
	return s->follow ? procset__list(s->follow->procs, n) : NULL;
}

size_t session__alive(const struct session *s)
{
	return s->follow ? procset__alive(s->follow->procs) : 1;
}

/* Several processes: an address of pid, as reports key it. */
uint64_t session__translate(void *ctx, pid_t pid, uint64_t addr)
{
	struct session *s = ctx;

	return procspace__canonical(s->follow->space, pid, addr);
}

static void session__rekey_one(void *ctx, struct sp_key *key)
{
	struct procspace *space = ctx;
	pid_t pid = (pid_t)key->pid;

	key->callsite = procspace__canonical(space, pid, key->callsite);
	key->object = procspace__canonical(space, pid, key->object);
}

void session__rename(struct session *s)
{
	target__refresh(s->target);
	if (s->follow)
		procset__exec(s->follow->procs, target__pid(s->target),
			      target__comm(s->target));
}

/*
 * A --blame charge: the release's site and stack are in its process
 * (key->pid), the object in the waiter's, which owner_tid names when it
 * is another (bpf/measure/blame.bpf.h).
 */
static void session__rekey_release(void *ctx, struct sp_key *key)
{
	struct procspace *space = ctx;
	pid_t waiter = key->owner_tid ? (pid_t)key->owner_tid : (pid_t)key->pid;

	key->callsite = procspace__canonical(space, (pid_t)key->pid,
					     key->callsite);
	key->object = procspace__canonical(space, waiter, key->object);
	key->owner_tid = 0;
}

/* The first target's name now: after an exec, its new program's. */
const char *session__comm(struct session *s)
{
	size_t n;
	const struct procset_entry *list =
		s->follow ? procset__list(s->follow->procs, &n) : NULL;

	return list && n ? list[0].comm : target__comm(s->target);
}

void session__scope(struct session *s, char *buf, size_t len)
{
	const struct options *o = s->opts;
	const char *children = o->children ? " and their children" : "";
	size_t at;

	if (o->all) {
		snprintf(buf, len, "--all (every process of the host)");
		return;
	}
	if (o->n_pids <= 1) {
		snprintf(buf, len, "pid %d (%s)%s", (int)target__pid(s->target),
			 session__comm(s), o->children ? " and its children" : "");
		return;
	}
	at = (size_t)snprintf(buf, len, "pids");
	for (size_t i = 0; i < o->n_pids && at < len; i++) {
		/* Room for " ...": a long list is cut, and says so. */
		if (at + 16 + strlen(children) >= len) {
			at += (size_t)snprintf(buf + at, len - at, " ...");
			break;
		}
		at += (size_t)snprintf(buf + at, len - at, " %d",
				       (int)o->pids[i]);
	}
	if (at < len)
		snprintf(buf + at, len - at, "%s", children);
}

/* A snapshot's rows of several processes, merged by module and offset. */
void session__rekey(struct session *s, struct snapshot *snap)
{
	if (session__space(s) && snap)
		snapshot__rekey(snap, session__rekey_one, session__space(s));
}

void session__rekey_blame(struct session *s, struct snapshot *snap)
{
	if (session__space(s) && snap)
		snapshot__rekey(snap, session__rekey_release,
				session__space(s));
}

void session__rekey_why(struct session *s, struct why *w)
{
	if (session__space(s) && w)
		why__rekey(w, session__rekey_one, session__space(s));
}

/*
 * What a report reads beside the waits: --blame's and --why's charges
 * and, in contended mode, the waits each site caused, keyed as the rows
 * are; none kept on an error.
 */
int session__read_charges(struct session *s, struct snapshot **blame,
			  struct why **why, struct snapshot **caused)
{
	int err = 0;

	*blame = *caused = NULL;
	*why = NULL;
	if (s->probes && s->opts->blame)
		err = probes__read_blame(s->probes, blame);
	if (!err && s->probes && s->opts->why)
		err = probes__read_why(s->probes, why);
	if (!err && s->probes && s->opts->mode == MODE_CONTENDED)
		err = probes__read_caused(s->probes, caused);
	/* The releases' stacks, by the releasers' processes (the keys'). */
	if (!err && *blame)
		err = probes__read_stacks(s->probes, *blame, s->stacks);
	if (!err && *caused)
		err = probes__read_stacks(s->probes, *caused, s->stacks);
	session__rekey_why(s, *why);
	session__rekey_blame(s, *blame);
	session__rekey_blame(s, *caused);
	if (err) {
		snapshot__free(*blame);
		snapshot__free(*caused);
		why__free(*why);
	}
	return err;
}

/* Every process followed and alive now: its threads sampled. */
static void session__blocked_sample(struct session *s)
{
	uint64_t now = clock__monotonic_ns();
	size_t n = 0;
	const struct procset_entry *procs = session__processes(s, &n);

	if (!s->follow || !s->follow->blocked)
		return;
	blockedtime__round_begin(s->follow->blocked);
	if (!procs)
		blockedtime__sample(s->follow->blocked, target__pid(s->target),
				    now);
	for (size_t i = 0; procs && i < n; i++)
		if (!procs[i].exited)
			blockedtime__sample(s->follow->blocked, procs[i].pid,
					    now);
	blockedtime__round_end(s->follow->blocked);
}

/*
 * Without --off-cpu (and without filters, which leave lock waits out;
 * not with --all, nor --serve, whose scrapes say what there is): the
 * processes' threads' blocked time from now on,
 * sampled each housekeeping period, for session__notice_off_cpu.
 */
void session__blocked_start(struct session *s)
{
	const struct options *o = s->opts;

	if (o->off_cpu || o->all || o->serve || o->n_tids || o->types ||
	    o->min_wait_ns || o->object || !s->follow ||
	    blockedtime__new(&s->follow->blocked))
		return;
	session__blocked_sample(s);
}

void session__blocked_housekeep(struct session *s)
{
	session__blocked_sample(s);
}

/*
 * At the end: when the threads were blocked mostly outside the lock
 * waits counted (those that ended, and those still in progress,
 * waiting), says once that --off-cpu sees the rest.
 */
void session__notice_off_cpu(struct session *s,
			     const struct snapshot *totals,
			     const struct snapshot *waiting)
{
	const struct snapshot_entry *e;
	uint64_t blocked, lock = 0;
	const char *text;

	if (!s->follow || !s->follow->blocked || !s->notices)
		return;
	/* Work in children not followed: that notice, not this one. */
	session__notice_children(s, totals);
	session__blocked_sample(s);
	blocked = blockedtime__blocked_ns(s->follow->blocked);
	e = totals ? snapshot__entries(totals) : NULL;
	for (size_t i = 0; e && i < snapshot__count(totals); i++)
		lock += e[i].wait_ns;
	e = waiting ? snapshot__entries(waiting) : NULL;
	for (size_t i = 0; e && i < snapshot__count(waiting); i++)
		lock += e[i].wait_ns;
	if (blocked <= 2 * lock)
		return;
	text = notices__off_cpu(s->notices, blocked, lock);
	if (text)
		log__notice("%s", text);
}

/*
 * The target has children, --children was not given, and it shows no
 * lock activity itself: the work is likely in the children.  Said once
 * on stderr, and in the JSON reports from then on.
 */
void session__notice_children(struct session *s,
			      const struct snapshot *totals)
{
	const struct snapshot_entry *e;
	const char *text;
	pid_t *kids = NULL;
	size_t n_kids = 0, cap = 0;

	if (s->opts->children || !s->follow || s->follow->notice_children ||
	    !totals || !s->notices)
		return;
	e = snapshot__entries(totals);
	for (size_t i = 0; i < snapshot__count(totals); i++)
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
	s->follow->notice_children = true;
	text = notices__children(s->notices);
	if (text)
		log__notice("%s", text);
}

/*
 * A library was loaded or unloaded, or the target exec'ed.  Names first:
 * a library dlopen'ed for a moment, or a program that runs for a moment
 * after an exec, must be read before it is gone (tables first left a
 * short program's rows unnamed); until its tables are read, its waits
 * are walked by file (bpf/unwind/unwind.bpf.h) and walked again as they end.
 */
void session__modules_changed(struct session *s)
{
	int err;

	/* Several: tables first, a new program's first waits need them. */
	if (!session__space(s))
		symbolizer__refresh(s->symbolizer);
	err = probes__sync_modules(s->probes);
	if (session__space(s)) {
		symbolizer__refresh(s->symbolizer);
	} else {
		/* One: the maps the tables were built from, read last, name
		 * too: the libraries a new image maps while its tables are
		 * built, before a short program is gone. */
		const struct procmaps *maps =
			probes__last_maps(s->probes, target__pid(s->target));

		if (maps)
			symbolizer__update(s->symbolizer, maps);
	}
	/* Exited meanwhile: its last tables stay, for its late walks. */
	if (err == -ENOENT || err == -ESRCH)
		err = 0;
	if (!err)
		err = probes__finish_late(s->probes, s->stacks, false);
	if (err)
		pr_warn("cannot update the unwind tables: %s", strerror(-err));
}

/*
 * Full mode: the probes follow the target's threads when the one they
 * are attached through exits (see probes__follow_threads).
 */
void session__follow_threads(struct session *s)
{
	uint64_t gap_ns;
	bool stayed;
	pid_t tid;

	/* --duty: not while a switch runs (the next second tries again). */
	if (s->duty && !duty__pause(s->duty))
		return;
	tid = probes__follow_threads(s->probes, &gap_ns, &stayed);
	if (s->duty)
		duty__resume(s->duty);

	if (stayed)
		pr_info("PID %d: the thread the probes were attached through "
			"exited; they stay attached for the other threads",
			(int)target__pid(s->target));
	else if (tid < 0)
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
/* Processes the set let go: their rows become process 0's (fold.c). */
static void session__forget_rows(struct session *s)
{
	pid_t *pids;
	size_t n = procset__forgotten(s->follow->procs, &pids);

	if (n && s->probes)
		probes__forget_rows(s->probes, pids, n);
}

static bool session__add_process(struct session *s, pid_t pid, pid_t parent,
				 const char *comm)
{
	int err;

	if (!procset__add(s->follow->procs, pid, parent, comm))
		return false;
	session__forget_rows(s);
	if (!s->follow->space)
		return false;
	err = probes__add_process(s->probes, pid);
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
	struct procspace *space = s->follow->space;
	int err;

	/* The parent's own mappings are read first, by the caller; the
	   child's are its sync's read when this round synced it. */
	err = procspace__update_from(space, pid, parent,
				     probes__take_maps(s->probes, pid));
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

/* Events by process; a process's events only set flags, so their
   order among themselves does not matter. */
static int event_by_pid(const void *a, const void *b)
{
	const struct probes_proc_event *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * The events of one batch as one per process: which kinds came, the
 * parent of its fork.  Reading /proc/PID/maps once per process and batch
 * instead of once per event (a short program's fork, exec, a load per
 * library and exit, with its parent re-read for each fork), with the
 * other changes to --all's naming, took its maps reads per short program
 * from about 20 to 7.
 */
struct proc_batch {
	pid_t pid, parent;
	bool fork, exec, load, unload, exit;
};

/* ev sorted by pid (event_by_pid): out[] gets one entry per process. */
static size_t batch_by_pid(const struct probes_proc_event *ev, size_t n,
			   struct proc_batch *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		struct proc_batch *b = &out[m];

		if (!i || ev[i].pid != ev[i - 1].pid)
			*b = (struct proc_batch){ .pid = ev[i].pid };
		else
			b = &out[m - 1];
		switch (ev[i].type) {
		case SP_MODULE_EVENT_FORK:
			b->fork = true;
			b->parent = ev[i].parent;
			break;
		case SP_MODULE_EVENT_EXEC:
			b->exec = true;
			break;
		case SP_MODULE_EVENT_LOAD:
			if (ev[i].parent & SP_LOAD_UNLOADED)
				b->unload = true;
			else
				b->load = true;
			break;
		case SP_MODULE_EVENT_WAIT:	/* read at its first wait */
			b->load = true;
			break;
		case SP_MODULE_EVENT_EXIT:
			b->exit = true;
			break;
		default:
			break;
		}
		if (b == &out[m])
			m++;
	}
	return m;
}

/*
 * What happened to the followed processes since the last events: the
 * kernel's tables now, once per process that forked, exec'ed or loaded
 * (a new process's first waits are walked with them); names are queued
 * for session__name_processes.
 */
static void session__process_events(struct session *s)
{
	struct follow *f = s->follow;
	size_t n, m;
	const struct probes_proc_event *ev = probes__proc_events(s->probes, &n);
	struct probes_proc_event *sorted;
	struct proc_batch *batch;

	for (size_t i = 0; i < n; i++) {
		pid_t pid = ev[i].pid;

		switch (ev[i].type) {
		case SP_MODULE_EVENT_FORK:
			if (session__add_process(s, pid, ev[i].parent,
						 ev[i].comm) &&
			    !array__grow(&f->unread, &f->unread_cap,
					 f->n_unread + 1, sizeof(*f->unread)))
				f->unread[f->n_unread++] = (struct unread){
					.pid = pid, .parent = ev[i].parent };
			break;
		case SP_MODULE_EVENT_EXEC:
			procset__exec(f->procs, pid, ev[i].comm);
			if (follow__unread(f, pid))
				follow__unread(f, pid)->exec = true;
			break;
		case SP_MODULE_EVENT_EXIT:
			follow__read_now(f, pid, NULL);
			procset__exited(f->procs, pid);
			session__forget_rows(s);
			pr_info("PID %d exited", (int)pid);
			break;
		case SP_MODULE_EVENT_WAIT:
			break;
		default:
			break;
		}
		/* An unread process's names wait for its first wait too. */
		if (f->space && ev[i].type != SP_MODULE_EVENT_EXIT &&
		    follow__unread(f, pid) && ev[i].type != SP_MODULE_EVENT_WAIT)
			continue;
		/* A dlclose's end names nothing (follow__stale). */
		if (f->space && ev[i].type == SP_MODULE_EVENT_LOAD &&
		    (ev[i].parent & SP_LOAD_UNLOADED))
			continue;
		if (f->space && !array__grow(&f->naming, &f->naming_cap,
					     f->n_naming + 1, sizeof(*f->naming))) {
			f->naming[f->n_naming] = ev[i];
			if (ev[i].type == SP_MODULE_EVENT_WAIT &&
			    follow__read_now(f, pid, &f->naming[f->n_naming]))
				pr_info("PID %d: first wait, read now", (int)pid);
			f->n_naming++;
		} else if (ev[i].type == SP_MODULE_EVENT_WAIT) {
			follow__read_now(f, pid, NULL);
		}
	}
	if (!f->space || !n)
		return;
	sorted = malloc(n * sizeof(*sorted));
	batch = malloc(n * sizeof(*batch));
	if (sorted && batch) {
		memcpy(sorted, ev, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), event_by_pid);
		m = batch_by_pid(sorted, n, batch);
		for (size_t i = 0; i < m; i++) {
			const struct proc_batch *b = &batch[i];
			bool read = !b->exit && !follow__unread(f, b->pid);
			bool sync = read && (b->fork || b->exec || b->load);

			follow__stale(f, b->pid, read && b->unload && !sync);
			if (sync) {
				session__sync_process(s, b->pid);
			} else if (!(read && b->unload)) {
				/* a read before these events names nothing */
				procmaps__free(probes__take_maps(s->probes,
								 b->pid));
			}	/* a dlclose's end: a load's read still names */
		}
	} else {
		/* No memory to batch: every event's process, as it came. */
		for (size_t i = 0; i < n; i++)
			if (ev[i].type != SP_MODULE_EVENT_EXIT &&
			    !follow__unread(f, ev[i].pid))
				session__sync_process(s, ev[i].pid);
			else
				procmaps__free(probes__take_maps(s->probes,
								 ev[i].pid));
	}
	free(sorted);
	free(batch);
}

/*
 * The names of the processes the events were about, once the tables are
 * done (a symbolizer per new program takes tens of milliseconds, which
 * the next process's tables should not wait for).
 */
static void session__name_processes(struct session *s)
{
	struct follow *f = s->follow;
	struct proc_batch *batch;
	pid_t *parents;
	size_t m, n_parents = 0;

	if (!f->n_naming)
		return;
	batch = malloc(f->n_naming * sizeof(*batch));
	parents = malloc(f->n_naming * sizeof(*parents));
	if (!batch || !parents) {
		free(batch);
		free(parents);
		return;		/* kept for the next round */
	}
	qsort(f->naming, f->n_naming, sizeof(*f->naming), event_by_pid);
	m = batch_by_pid(f->naming, f->n_naming, batch);
	/* A parent that forked several is read once, before its children. */
	for (size_t i = 0; i < m; i++) {
		bool seen = false;

		for (size_t j = 0; batch[i].fork && j < n_parents; j++)
			seen |= parents[j] == batch[i].parent;
		if (batch[i].fork && batch[i].parent && !seen) {
			procspace__update(f->space, batch[i].parent, 0);
			parents[n_parents++] = batch[i].parent;
		}
	}
	for (size_t i = 0; i < m; i++) {
		const struct proc_batch *b = &batch[i];

		if (b->fork)
			session__name_process(s, b->pid, b->parent);
		if (b->exec)
			procspace__exec_from(f->space, b->pid,
					     probes__take_maps(s->probes, b->pid));
		else if (b->load && !b->fork)
			procspace__update_from(f->space, b->pid, 0,
					       probes__take_maps(s->probes,
								 b->pid));
	}
	for (size_t i = 0; i < m; i++) {
		if (!batch[i].exit)
			continue;
		procspace__exited(f->space, batch[i].pid);
		probes__forget_process(s->probes, batch[i].pid);
	}
	free(batch);
	free(parents);
	f->n_naming = 0;
}

/*
 * Followed processes that ended with no exit event (zombies, a child
 * gone before the kernel's filter took it in, a PID reused): as if the
 * event had come.
 */
void session__sweep_processes(struct session *s)
{
	struct follow *f = s->follow;
	pid_t gone[64];
	size_t n = procset__sweep(f->procs, gone, 64,
				  ++f->sweeps % SWEEP_ALL_EVERY == 0);

	session__forget_rows(s);
	symbolizer__housekeep();
	/* The dlcloses since the last tick (follow__stale): tables, then
	   names from the same read (the closed files leave the sessions,
	   a deleted one is closed). */
	probes__keep_maps(s->probes, true);
	for (size_t i = 0; i < f->n_stale; i++) {
		struct procmaps *maps;

		session__sync_process(s, f->stale[i]);
		maps = probes__take_maps(s->probes, f->stale[i]);
		if (maps)	/* else gone: its exit names */
			procspace__update_from(f->space, f->stale[i], 0, maps);
	}
	probes__keep_maps(s->probes, false);
	f->n_stale = 0;
	for (size_t i = 0; i < n; i++) {
		follow__read_now(f, gone[i], NULL);
		pr_info("PID %d exited", (int)gone[i]);
		if (!array__grow(&f->naming, &f->naming_cap, f->n_naming + 1,
				 sizeof(*f->naming)))
			f->naming[f->n_naming++] = (struct probes_proc_event){
				.type = SP_MODULE_EVENT_EXIT, .pid = gone[i] };
	}
	session__name_processes(s);
}

/* --children: the descendants the targets have now, followed from now. */
void session__add_descendants(struct session *s, pid_t root)
{
	pid_t *kids = NULL;
	size_t n = 0, cap = 0;

	procset__children(root, &kids, &n, &cap);
	for (size_t i = 0; i < n; i++) {
		if (!session__add_process(s, kids[i], root, NULL))
			continue;
		session__sync_process(s, kids[i]);
		session__name_process(s, kids[i], 0);
		session__add_descendants(s, kids[i]);
	}
	free(kids);
}

/* The target is gone: its exit status, and no more /proc reads. */
void session__target_exited(struct session *s)
{
	/* Its PID may be reused: no more /proc reads for names. */
	if (s->symbolizer)
		symbolizer__freeze(s->symbolizer);
	if (s->follow && s->follow->root_exited)
		return;
	if (s->follow) {
		/* One process: none followed now (--serve's health). */
		procset__exited(s->follow->procs, target__pid(s->target));
		s->follow->root_exited = true;
	}
	if (target__reap(s->target))
		pr_warn("cannot collect PID %d's exit status",
			(int)target__pid(s->target));
}

/*
 * Several: the first target exited, the others go on; its exit status
 * now.
 */
void session__root_gone(struct session *s)
{
	procset__exited(s->follow->procs, target__pid(s->target));
	if (target__reap(s->target))
		pr_warn("cannot collect PID %d's exit status",
			(int)target__pid(s->target));
	s->follow->root_exited = true;
}

/*
 * Takes the kernel's events: tables for every process event that came
 * meanwhile, then names.  A batch taken is processed before the next is
 * (taking one replaces the last); after 8, the rest waits in the ring
 * for the next poll.  What else was seen is returned.
 */
unsigned int session__take_events(struct session *s)
{
	unsigned int seen = probes__consume_events(s->probes);

	/* Several: a process synced here is named from its sync's read of
	   its maps (one read of /proc where there were two). */
	probes__keep_maps(s->probes, session__space(s) != NULL);

	for (int round = 0; seen & PROBES_EVENT_PROCESSES; round++) {
		session__process_events(s);
		seen &= ~PROBES_EVENT_PROCESSES;
		if (round == 7)
			break;
		seen |= probes__consume_events(s->probes);
	}
	if (session__space(s))
		session__name_processes(s);
	probes__keep_maps(s->probes, false);
	return seen;
}

/* "and N more processes", "and its children", for the start message. */
const char *session__others(struct session *s)
{
	static char text[96];
	size_t n = session__alive(s);

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
int session__check_pids(struct options *opts, pid_t first)
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

/*
 * --all: every user-space process of the host but syncprof; the first
 * one that maps a libc with the pthread functions is the run's first
 * target (it names the libc the probes model).
 */
int session__all_processes(struct options *opts, struct target **target)
{
	size_t n, unreadable;
	int err = hostprocs__list("/proc", getpid(), opts->pids,
				  OPTIONS_MAX_PIDS, &n, &unreadable);

	if (err == -E2BIG)
		pr_warn("--all: more than %d processes; the first %d are "
			"followed, and every new one", OPTIONS_MAX_PIDS,
			OPTIONS_MAX_PIDS);
	else if (err) {
		pr_err("--all: cannot list the processes: %s", strerror(-err));
		return err;
	}
	if (unreadable)
		pr_warn("--all: %zu process%s left out: their mappings cannot "
			"be read (the kernel's ptrace access check refused)",
			unreadable, unreadable > 1 ? "es" : "");
	for (size_t i = 0; i < n; i++) {
		if (kill(opts->pids[i], 0) || target__attach(opts->pids[i],
							     target))
			continue;
		if (!target__maps_pthread(*target)) {
			target__free(*target);
			*target = NULL;
			continue;
		}
		memmove(opts->pids + 1, opts->pids + i + 1,
			(n - i - 1) * sizeof(*opts->pids));
		opts->pids[0] = target__pid(*target);
		opts->n_pids = n - i;
		opts->pid = opts->pids[0];
		return 0;
	}
	pr_err("--all: no process to follow");
	return -ESRCH;
}
