// SPDX-License-Identifier: GPL-2.0
/*
 * --duty: full mode's uprobes sample a window of PCT% of each period;
 * for most of the rest they are detached.
 *
 * Detached, not gated: a uprobe whose program returns at once still costs
 * the target its trap and the kernel's round trip (the bulk of full
 * mode's cost, docs/performance.md), so a BPF flag alone would leave the
 * target near full mode's speed.  But a flag decides what is *sampled*:
 * BPF's duty_open is 1 only while the window is open, and a call is
 * followed only if it enters then.  The probes are attached before the
 * window opens and detached after it closes, so what the switches do
 * (the kernel installs and removes the breakpoints one offset at a time,
 * in every process mapping libc, under each one's mmap lock, then waits
 * for grace periods: 0.1-2.8 s for a close on a loaded host, tens of ms
 * on a quiet one) neither shortens nor lengthens the time sampled, and
 * the target's stalls while its text pages are rewritten fall outside
 * the windows.  The window's time is measured at the two stores of the
 * flag.  Rejected, measured: timing the window from the attach's return
 * to the close's start (the breakpoints go in and out during the calls,
 * so its edges are uncertain by the switch itself: the counts on the
 * tests' target read 2.6-8% over; its half, 4.5-7.6% under).
 *
 * Each window is PCT% of its own period, so busy and quiet periods are
 * sampled alike, and the gaps between windows are drawn at random
 * (uniform, from half to one and a half of the period's part off; the
 * first as if the cycle had run all along), so that every instant is as
 * likely to be sampled (PCT%): a target whose rate has a rhythm (a
 * launched one's start-up, a server's once-a-second housekeeping) is not
 * sampled always at the same point of it.  The estimate (duty__scale) is
 * what a report's windows saw times its time over theirs.  Measured,
 * windows at the periods' starts read 0.865x the calls of workload
 * launched under --duty 20 (medians of 5: the first window fell on its
 * start-up); a window placed anywhere in a period of fixed length
 * samples the periods' edges less (its start is uniform, its cover is
 * not: computed), and interval reports of 1 s each scaled by their own ratio read
 * 0.53x (a span with no window estimates 0).  A period is stretched (up to
 * DUTY_STRETCH_MAX periods asked) when the last switches would not fit
 * twice in its part off, and the probes stay attached through a gap
 * that still would not hold them: they are gated then, sampled as asked,
 * the target paying the traps.  Rejected: a fixed period with slips
 * (the first version): a close taking seconds under load stretched the
 * periods in which the target was busy without sampling more of them.
 *
 * Holds and waits: a call that entered in the window is followed to its
 * end.  The probes stay attached DUTY_TAIL_DIV-th of a period after the
 * window closes (the tail), then every link closes: a hold or wait begun
 * in the window and ended before its probe left is counted whole, one ended
 * after is dropped and counted as cut (SP_CNT_DUTY_CUT, when a later
 * attachment meets it: each has its number, duty_epoch).  So a single
 * wait or hold longer than the tail and the closes leans the estimates
 * short; anything shorter is sampled by where it began, with no bias.
 * Rejected: holds measured only when both ends fall in the window (they
 * lean short by the window's edge), and holds begun while the probes go
 * in or out (the target stalls on its rewritten text then: longer holds;
 * the first version, which timed those, read memcached's mean hold at
 * 1.19x continuous full mode's, the releaser's holds now within 5% of
 * its own clock in every run of make bench).
 *
 * What is switched: the functions a lock-heavy program calls all the
 * time (probe_spec.switched: the mutexes' lock and trylock, the
 * condvars' waits, the rwlocks' plain locks and the four releases of
 * those); the others are kept attached from the first switch off to the
 * end, gated by the flag.  Part of a switch's cost is per probed
 * offset, called or not (the kernel puts its breakpoint in and takes it
 * out of every process mapping the file, under that process's mmap
 * lock):
 * measured on memcached under memcaslap at load 10-17, a cycle's
 * switches took 448 ms moving 10 offsets against 1,030 ms moving 28
 * (medians of 4; on MariaDB no gain, docs/performance.md).
 * Rejected: choosing the switched set by the calls seen (a BPF counter
 * per function on every call, and a set that changes needs links
 * re-formed, each a switch of its own); keeping the entries attached and
 * switching only the returns (an entry's trap is a fifth of a call's
 * cost, paid on every call).
 *
 * The switches run in a thread of their own: the loop that reads the
 * events, reports and serves goes on meanwhile.  Each switch holds the
 * links' mutex; what moves the probes (following.c) takes it first
 * (duty__pause).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "duty.h"
#include "log.h"
#include "probesimpl.h"
#include "snapshot.h"
#include "syncprof.skel.h"
#include "worker.h"

/* The switches' thread's name. */
#define DUTY_THREAD_NAME	"syncprof-duty"

/* The tail after a window: this part of the period. */
#define DUTY_TAIL_DIV		50
/* The longest period the switches may stretch one to, in periods asked. */
#define DUTY_STRETCH_MAX	8
/*
 * A report's span of this many periods or more is scaled by its time over
 * its windows' time; a shorter one (which may hold no window, or be all
 * window) by the run's so far.
 */
#define DUTY_RATIO_CYCLES	4

struct duty {
	struct probes *probes;
	unsigned int pct;
	uint64_t period_ns;
	pthread_mutex_t links;	/* held by a switch, or by duty__pause */
	struct worker *thread;	/* the switches; its lock: what follows */
	bool cycled;		/* the cycle ran (it ends once) */
	uint64_t start_ns;
	bool open;
	uint64_t open_ns;	/* the open window's start */
	uint64_t on_ns;		/* the windows closed, summed */
	bool attached;
	uint64_t attached_since;
	uint64_t attached_ns;	/* the attachments ended, summed */
	uint64_t switches, switch_ns, kept;
	bool ended;		/* the window open for good */
	uint64_t mark_ns, mark_on_ns;	/* duty__scale's last mark */
	/* The worker's own: how long the last switches took, smoothed up. */
	uint64_t detach_est, attach_est;
	unsigned int seed;	/* the gaps' draws */
	uint64_t cycle_ns;	/* the period, as stretched last */
	/* multi_links[0, kept_links): the kept set's, attached for good */
	size_t kept_links;
	bool split;		/* switches move the switched set only */
	bool split_tried;
};

static uint64_t duty__on_at(const struct duty *d, uint64_t now)
{
	return d->on_ns + (d->open && now > d->open_ns ? now - d->open_ns : 0);
}

static void duty__estimate(uint64_t *est, uint64_t ns)
{
	*est = ns > *est ? ns : (3 * *est + ns) / 4;
}

/* Under lock: opens or closes the window, at the flag's store. */
static void duty__set_open(struct duty *d, bool open)
{
	uint64_t now;

	if (d->open == open)
		return;
	__atomic_store_n(&d->probes->skel->data->duty_open, open ? 1u : 0u,
			 __ATOMIC_SEQ_CST);
	now = clock__monotonic_ns();
	if (open)
		d->open_ns = now;
	else
		d->on_ns += now > d->open_ns ? now - d->open_ns : 0;
	d->open = open;
}

/* Under w's lock: waits until abs_ns; true if told to stop. */
static bool duty__sleep(struct worker *w, uint64_t abs_ns)
{
	while (clock__monotonic_ns() < abs_ns)
		if (worker__wait(w, abs_ns))
			return true;
	return worker__stopping(w);
}

/*
 * Whether the probes are still the uprobe_multi pair duty cycles, after
 * the kept set's pair (kept_links: 0 or 2).
 */
static bool duty__cycles(const struct probes *p, size_t kept_links,
			 bool attached)
{
	return p->anchor == p->tgid && !p->several &&
	       p->n_multi_links == kept_links + (attached ? 2 : 0);
}

/* The sites of one set (probe_spec.switched), in index, offset, cookie. */
static size_t duty__sites(const struct probes *p, enum probes_set set,
			  size_t *index, uint64_t *offset, uint64_t *cookie)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_sites; i++) {
		if (probe_table[p->site_index[i]].switched !=
		    (set == PROBES_SET_SWITCHED))
			continue;
		index[n] = p->site_index[i];
		offset[n] = p->site_offset[i];
		cookie[n++] = p->site_cookie[i];
	}
	return n;
}

/*
 * Once, at the first switch off: the kept set attached for good (gated
 * by the flag).  On failure the links go and every switch moves them
 * all, as before.
 */
static void duty__keep(struct duty *d)
{
	struct probes *p = d->probes;
	size_t index[N_PROBES];
	uint64_t offset[N_PROBES], cookie[N_PROBES];
	size_t n = duty__sites(p, PROBES_SET_KEPT, index, offset, cookie);
	int err = 0;

	d->split_tried = true;
	if (n)
		err = probes__attach_sites(p, p->library, index, offset,
					   cookie, n);
	if (!err && p->releases)
		err = probes__attach_release_set(p, p->library,
						 PROBES_SET_KEPT);
	if (err) {
		for (size_t i = 0; i < p->n_multi_links; i++)
			close(p->multi_links[i]);
		p->n_multi_links = 0;
		if (p->release_kept_link >= 0)
			close(p->release_kept_link);
		p->release_kept_link = -1;
		pr_debug("--duty: every probe switched (%s)", strerror(-err));
		return;
	}
	d->kept_links = p->n_multi_links;
	d->split = true;
	pr_debug("--duty: %zu of %zu functions kept attached", n, p->n_sites);
}

static void *duty__close_one(void *fd)
{
	close((int)(intptr_t)fd);
	return NULL;
}

/*
 * Every link closed at once, each from a thread of its own: a close
 * takes the breakpoints out, then waits for grace periods, and those
 * waits overlap (measured on workload beside other test suites: a switch
 * off took 81 ms, median of 13, against 170 ms closing them in turn).
 * The window is closed already, so the order no longer matters (nothing
 * enters the sample meanwhile).
 */
static void duty__detach(struct duty *d)
{
	struct probes *p = d->probes;
	int fds[sizeof(p->multi_links) / sizeof(p->multi_links[0]) + 1];
	pthread_t threads[sizeof(fds) / sizeof(fds[0])];
	bool started[sizeof(fds) / sizeof(fds[0])] = { false };
	size_t n = 0;

	for (size_t i = d->kept_links; i < p->n_multi_links; i++)
		fds[n++] = p->multi_links[i];
	if (p->release_multi_link >= 0)
		fds[n++] = p->release_multi_link;
	p->n_multi_links = d->kept_links;
	p->release_multi_link = -1;
	for (size_t i = 1; i < n; i++)
		started[i] = !pthread_create(&threads[i], NULL, duty__close_one,
					     (void *)(intptr_t)fds[i]);
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			close(fds[i]);
	}
	if (!d->split_tried)
		duty__keep(d);
}

/*
 * Whether the target still runs (not a zombie): an attach to one that
 * exited fails with an error line that would not matter.
 */
static bool duty__target_runs(pid_t pid)
{
	char path[64], stat[256], *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = '\0';
	paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* The unlocks first, then the return and entry links (of the switched
   set once the kept one is in). */
static int duty__attach(struct duty *d)
{
	struct probes *p = d->probes;
	enum probes_set set = d->split ? PROBES_SET_SWITCHED : PROBES_SET_ALL;
	size_t index[N_PROBES], n = p->n_sites;
	uint64_t offset[N_PROBES], cookie[N_PROBES];
	int err = 0;

	if (!duty__target_runs(p->tgid))
		return -ESRCH;
	if (d->split)
		n = duty__sites(p, set, index, offset, cookie);
	else {
		memcpy(index, p->site_index, n * sizeof(*index));
		memcpy(offset, p->site_offset, n * sizeof(*offset));
		memcpy(cookie, p->site_cookie, n * sizeof(*cookie));
	}
	p->skel->bss->duty_epoch++;
	if (p->releases)
		err = probes__attach_release_set(p, p->library, set);
	if (!err)
		err = probes__attach_sites(p, p->library, index, offset,
					   cookie, n);
	return err;
}

/*
 * Under lock, given up while the kernel works: detaches or attaches.
 * -ESTALE when the probes moved (the cycle ends), or the attach's error.
 */
static int duty__switch(struct duty *d, struct worker *w, bool attach)
{
	uint64_t t0, t1;
	int err = 0;

	worker__unlock(w);
	pthread_mutex_lock(&d->links);
	t0 = clock__monotonic_ns();
	if (!duty__cycles(d->probes, d->kept_links, !attach))
		err = -ESTALE;
	else if (attach)
		err = duty__attach(d);
	else
		duty__detach(d);
	t1 = clock__monotonic_ns();
	pthread_mutex_unlock(&d->links);
	worker__lock(w);
	if (err)
		return err;
	d->switch_ns += t1 - t0;
	if (attach) {
		d->attached = true;
		d->attached_since = t0;
		duty__estimate(&d->attach_est, t1 - t0);
	} else {
		d->attached = false;
		d->attached_ns += t1 - d->attached_since;
		d->switches++;
		duty__estimate(&d->detach_est, t1 - t0);
	}
	pr_debug("--duty: %s in %.1f ms", attach ? "attached" : "detached",
		 (double)(t1 - t0) * 1e-6);
	return 0;
}

/* Under lock: the window open for good (the probes as they are). */
static void duty__end(struct duty *d, int err)
{
	d->ended = true;
	if (!d->attached) {
		d->attached = true;
		d->attached_since = clock__monotonic_ns();
	}
	duty__set_open(d, true);
	if (err == -ESTALE)
		pr_warn("--duty: the probes moved to another thread; they stay "
			"on from %.2f s after the start",
			(double)(clock__monotonic_ns() - d->start_ns) * 1e-9);
	else if (err == -ESRCH || err == -ENOENT)
		pr_debug("--duty: the target is gone (%s)", strerror(-err));
	else
		pr_warn("cannot attach the probes again (--duty): %s; they stay "
			"as they are from %.2f s after the start", strerror(-err),
			(double)(clock__monotonic_ns() - d->start_ns) * 1e-9);
}

/* The tail, and the switches as last measured, with as much again to spare. */
static uint64_t duty__switching_ns(const struct duty *d)
{
	return 2 * (d->period_ns / DUTY_TAIL_DIV + d->detach_est + d->attach_est);
}

/* The next period: the one asked, or longer, for its part off to hold
   the switches twice (the gaps between windows placed anywhere in their
   periods are that on average). */
static uint64_t duty__period(const struct duty *d)
{
	uint64_t need = duty__switching_ns(d) / (100 - d->pct) * 200;
	uint64_t most = d->period_ns * DUTY_STRETCH_MAX;

	return need < d->period_ns ? d->period_ns : need > most ? most : need;
}

/* A uniform draw in [0, span_ns], to the microsecond. */
static uint64_t duty__draw(struct duty *d, uint64_t span_ns)
{
	return span_ns / 1000 * (uint64_t)rand_r(&d->seed) / RAND_MAX * 1000;
}

/* A gap between windows: uniform around the part off, mean off_ns. */
static uint64_t duty__gap(struct duty *d, uint64_t off_ns)
{
	return off_ns / 2 + duty__draw(d, off_ns);
}

/*
 * The first gap, as if the cycle had run all along (the residual of a
 * gap: drawn up to its longest, kept as likely as a gap outlasts it).
 */
static uint64_t duty__first_gap(struct duty *d, uint64_t off_ns)
{
	for (;;) {
		uint64_t x = duty__draw(d, off_ns / 2 * 3);

		if (x <= off_ns / 2 ||
		    duty__draw(d, off_ns) >= x - off_ns / 2)
			return x;
	}
}

/* The cycle, run once by its thread (w) with the lock held. */
static void duty__run(struct worker *w, void *arg)
{
	struct duty *d = arg;
	uint64_t period, window, open_at, now = clock__monotonic_ns();
	int err = 0;

	if (d->cycled) {	/* ended: the probes stay as they are */
		worker__wait(w, WORKER_FOREVER);
		return;
	}
	d->cycled = true;
	period = duty__period(d);
	window = period / 100 * d->pct;
	/* Inside a window already, pct times in 100: its rest. */
	if (duty__draw(d, 100 * 1000) < d->pct * 1000ull) {
		duty__set_open(d, true);
		if (duty__sleep(w, now + duty__draw(d, window)))
			return;
		duty__set_open(d, false);
		open_at = clock__monotonic_ns() + duty__gap(d, period - window);
	} else {
		open_at = now + duty__first_gap(d, period - window);
	}
	while (!worker__stopping(w) && !err) {
		now = clock__monotonic_ns();
		if (now + duty__switching_ns(d) > open_at) {
			d->kept++;	/* gated off until then */
		} else {
			uint64_t lead = d->attach_est + d->attach_est / 2;

			if (duty__sleep(w, now + d->period_ns / DUTY_TAIL_DIV))
				break;
			err = duty__switch(d, w, false);
			if (!err && duty__sleep(w, open_at - lead))
				break;
			if (!err)
				err = duty__switch(d, w, true);
			if (err)
				break;
		}
		if (duty__sleep(w, open_at))
			break;
		duty__set_open(d, true);
		if (duty__sleep(w, d->open_ns + window))
			break;
		duty__set_open(d, false);
		/* The next: its length, then the gap before it. */
		period = duty__period(d);
		window = period / 100 * d->pct;
		d->cycle_ns = period;
		open_at = clock__monotonic_ns() + duty__gap(d, period - window);
	}
	if (err)
		duty__end(d, err);
}

int duty__new(struct probes *p, unsigned int pct, uint64_t period_ns,
	      struct duty **out)
{
	struct duty *d;
	int err;

	*out = NULL;
	if (p->mode != PROBES_FULL || !p->multi || !duty__cycles(p, 0, true) ||
	    !p->library || (p->releases && p->release_multi_link < 0)) {
		pr_err("--duty needs full mode's probes in uprobe_multi links "
		       "(Linux 6.6+) on one libc");
		return -EOPNOTSUPP;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->probes = p;
	d->pct = pct;
	d->period_ns = d->cycle_ns = period_ns;
	/* --pid's probes counted since they went live; a command's, from
	   now (it runs from its resume). */
	d->start_ns = probes__live_ns(p) ? probes__live_ns(p)
					 : clock__monotonic_ns();
	/* Live until now (a --pid's tables loaded meanwhile): sampled
	   whole; then closed until the first window. */
	d->attached = true;
	d->attached_since = d->mark_ns = d->start_ns;
	__atomic_store_n(&p->skel->data->duty_open, 0u, __ATOMIC_SEQ_CST);
	d->on_ns = clock__monotonic_ns() - d->start_ns;
	d->seed = (unsigned int)(d->on_ns ^ (uint64_t)getpid());
	pthread_mutex_init(&d->links, NULL);
	err = worker__start(DUTY_THREAD_NAME, duty__run, d, &d->thread);
	if (err) {
		duty__free(d);
		return err;
	}
	pr_debug("--duty: starts at %llu ns", (unsigned long long)d->start_ns);
	*out = d;
	return 0;
}

void duty__times(struct duty *d, uint64_t now_ns, struct duty_times *out)
{
	uint64_t on, all;

	worker__lock(d->thread);
	on = duty__on_at(d, now_ns);
	all = now_ns > d->start_ns ? now_ns - d->start_ns : 0;
	*out = (struct duty_times){
		.pct = d->pct,
		.on_ns = on,
		.off_ns = all > on ? all - on : 0,
		.attached_ns = d->attached_ns +
			       (d->attached && now_ns > d->attached_since ?
				now_ns - d->attached_since : 0),
		.switches = d->switches,
		.switch_ns = d->switch_ns,
		.kept = d->kept,
	};
	worker__unlock(d->thread);
	out->cut = probes__counter(d->probes, SP_CNT_DUTY_CUT);
}

void duty__scale(struct duty *d, struct snapshot *rows, uint64_t now_ns,
		 bool since_start, bool mark)
{
	uint64_t on, all, num, den;

	if (!d)
		return;
	worker__lock(d->thread);
	if (now_ns < d->mark_ns)
		now_ns = d->mark_ns;
	on = duty__on_at(d, now_ns);
	all = now_ns > d->start_ns ? now_ns - d->start_ns : 0;
	num = since_start ? all : now_ns - d->mark_ns;
	den = since_start ? on : on - d->mark_on_ns;
	/* A short span: the run's ratio so far (its windows' realized
	   share, which slow switches can hold below the one asked). */
	if (num < DUTY_RATIO_CYCLES * d->cycle_ns) {
		num = all;
		den = on;
	}
	if (mark) {
		d->mark_ns = now_ns;
		d->mark_on_ns = on;
	}
	worker__unlock(d->thread);
	if (rows && num && den)
		snapshot__scale(rows, num, den);
}

bool duty__pause(struct duty *d)
{
	return !pthread_mutex_trylock(&d->links);
}

void duty__resume(struct duty *d)
{
	pthread_mutex_unlock(&d->links);
}

void duty__free(struct duty *d)
{
	if (!d)
		return;
	worker__stop(d->thread);
	pthread_mutex_destroy(&d->links);
	free(d);
}
