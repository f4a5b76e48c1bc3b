// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if as a stage of the run: the progress function found when
 * syncprof attaches (a wrong name fails then, not after the profile),
 * the locks chosen from the profile at its end (the ones asked for, or
 * the WHATIF_DEFAULT_LOCKS with the most wait that some progress waits
 * for: a lock found apart from the progress gives its entry and the
 * next one by wait is tried, up to WHATIF_DEFAULT_TRIES, within
 * WHATIF_DEFAULT_TIME_S of experiments in all: a lock whose fewest
 * windows do not fit the time left is named, not tried), each one's
 * experiment
 * (experiment.c), its predictions (whatifmodel.c), kept in s->what_if
 * for the final report.  The experiment's own waits (its delays lengthen
 * the lock's holds) are read apart and left out of the report.
 *
 * Several processes (--children, several --pid): the experiment runs in
 * every process followed and alive when it starts; a lock of the
 * profile is then a canonical address (shared memory's object and
 * offset, a module's offset), delayed at its address in its home
 * process, which is every process's for memory mapped before a fork
 * (PostgreSQL's segment) or a global of one program.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "clock.h"
#include "elfimage.h"
#include "experiment.h"
#include "log.h"
#include "procset.h"
#include "procspace.h"
#include "session.h"
#include "snapshot.h"
#include "symbolizer.h"
#include "target.h"
#include "whatif.h"
#include "whatifrun.h"

#define WHATIF_DEFAULT_LOCKS	3
/* Without a list: locks tried at most, apart ones (no progress waits for
   them) not counted in the three. */
#define WHATIF_DEFAULT_TRIES	6
/* Without a list: the experiments' time in all, shared by the locks
   still to try (a lock held for milliseconds takes up to
   WHATIFPLAN_TIME_MAX_S of windows; six of them took minutes). */
#define WHATIF_DEFAULT_TIME_S	120.0
/* Functions named when --progress names none of the target's. */
#define WHATIF_CHOICES		12

/* A lock of the profile: its wait, and the site most of it came from. */
struct seen_lock {
	uint64_t object;		/* as the profile keys it */
	uint64_t address;		/* in the processes: what is delayed */
	uint64_t wait_ns;
	uint64_t site;
	uint64_t site_ns;
};

struct whatif_setup {
	char exe[64];			/* /proc/PID/exe */
	uint64_t progress_offset;
};

static bool delayable(uint32_t type)
{
	return type == SP_TYPE_MUTEX || type == SP_TYPE_REC_MUTEX ||
	       type == SP_TYPE_RWLOCK_R || type == SP_TYPE_RWLOCK_W ||
	       type == SP_TYPE_SPINLOCK;
}

struct choices {
	const char *want;
	char text[1024];
	size_t len, matched, all;
	bool by_match;			/* second pass: list any */
};

static int add_choice(void *ctx, const char *name, uint64_t vaddr,
		      uint64_t size)
{
	struct choices *c = ctx;

	(void)vaddr;
	(void)size;
	c->all++;
	if (name[0] == '_' || c->matched >= WHATIF_CHOICES)
		return 0;
	if (c->by_match && !strcasestr(name, c->want))
		return 0;
	c->len += (size_t)snprintf(c->text + c->len, sizeof(c->text) - c->len,
				   "%s%s", c->matched ? ", " : "", name);
	if (c->len >= sizeof(c->text))
		c->len = sizeof(c->text) - 1;
	c->matched++;
	return 0;
}

int session__what_if_check(struct session *s)
{
	const struct options *opts = s->opts;
	struct whatif_setup *setup;
	struct elfimage *image = NULL;
	struct elfimage_func f;
	int err;

	if (!opts->what_if)
		return 0;
	s->what_if = calloc(1, sizeof(*s->what_if));
	setup = calloc(1, sizeof(*setup));
	if (!s->what_if || !setup) {
		free(setup);
		return -ENOMEM;
	}
	s->what_if_setup = setup;
	snprintf(setup->exe, sizeof(setup->exe), "/proc/%d/exe",
		 (int)target__pid(s->target));
	if (!opts->progress)
		return 0;
	err = elfimage__open(setup->exe, &image);
	if (err) {
		pr_err("--progress: cannot read %s: %s", setup->exe,
		       strerror(-err));
		return err;
	}
	err = elfimage__find_func(image, opts->progress, &f);
	if (err) {
		struct choices c = { .want = opts->progress, .by_match = true };

		elfimage__for_each_func(image, add_choice, &c);
		if (!c.matched) {
			c = (struct choices){ .want = opts->progress };
			elfimage__for_each_func(image, add_choice, &c);
		}
		pr_err("--progress: no function '%s' in %s (%s); its "
		       "functions include: %s (%zu in all)", opts->progress,
		       target__comm(s->target), setup->exe,
		       c.matched ? c.text : "none", c.all);
		elfimage__close(image);
		return -EINVAL;
	}
	elfimage__close(image);
	setup->progress_offset = f.file_offset;
	return 0;
}

/* The profile's locks that a delay can lengthen, most wait first. */
static int seen_locks(const struct snapshot *snap, struct seen_lock **out,
		      size_t *n)
{
	const struct snapshot_entry *e = snap ? snapshot__entries(snap) : NULL;
	size_t count = snap ? snapshot__count(snap) : 0, cap = 0;
	struct seen_lock *locks = NULL;

	*n = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t at = e[i].hold_ns ? e[i].hold_ns : e[i].wait_ns;
		size_t j;

		if (!e[i].key.object || !delayable(e[i].key.type))
			continue;
		for (j = 0; j < *n && locks[j].object != e[i].key.object; j++)
			;
		if (j == *n) {
			if (array__grow(&locks, &cap, *n + 1, sizeof(*locks))) {
				free(locks);
				return -ENOMEM;
			}
			locks[(*n)++] = (struct seen_lock){
				.object = e[i].key.object };
		}
		locks[j].wait_ns += e[i].wait_ns;
		if (at >= locks[j].site_ns) {
			locks[j].site_ns = at;
			locks[j].site = e[i].key.callsite;
		}
	}
	for (size_t i = 1; i < *n; i++)
		for (size_t j = i; j > 0 && locks[j].wait_ns >
					    locks[j - 1].wait_ns; j--) {
			struct seen_lock t = locks[j];

			locks[j] = locks[j - 1];
			locks[j - 1] = t;
		}
	*out = locks;
	return 0;
}

/* The address the processes take a lock of the profile at. */
static uint64_t process_address(struct session *s, uint64_t object)
{
	struct procspace *space = session__space(s);
	struct symbolizer *sym = NULL;
	uint64_t addr = 0;

	if (!space || procspace__resolve(space, object, &sym, &addr) || !addr)
		return object;
	return addr;
}

static const char *lock_name(struct session *s, const struct seen_lock *l,
			     char *buf, size_t len)
{
	const char *name = symbolizer__object(s->symbolizer, l->object);

	if (!name && l->site)
		name = symbolizer__argument_lock(s->symbolizer, l->site, false);
	if (name)
		return name;
	snprintf(buf, len, "0x%" PRIx64, l->object);
	return buf;
}

/* --what-if=OBJECT: its address among the profile's locks or symbols. */
static int find_lock(struct session *s, const char *name,
		     const struct seen_lock *seen, size_t n_seen,
		     struct seen_lock *out)
{
	uint64_t addr = 0, size = 0;
	char buf[32], list[1024] = "";
	size_t len = 0;

	for (size_t i = 0; i < n_seen; i++)
		if (!strcmp(lock_name(s, &seen[i], buf, sizeof(buf)), name)) {
			*out = seen[i];
			return 0;
		}
	if (!strncmp(name, "0x", 2))
		addr = strtoull(name, NULL, 16);
	else if (symbolizer__find_object(s->symbolizer, name, &addr, &size))
		addr = 0;
	for (size_t i = 0; addr && i < n_seen; i++)
		if (seen[i].object == addr || seen[i].address == addr) {
			*out = seen[i];
			return 0;
		}
	if (addr) {
		*out = (struct seen_lock){ .object = addr,
					   .address = process_address(s, addr) };
		return 0;
	}
	for (size_t i = 0; i < n_seen && len < sizeof(list) - 1; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i ? ", " : "",
					lock_name(s, &seen[i], buf, sizeof(buf)));
	pr_err("--what-if: no lock '%s' in %s; the locks it waited on: %s "
	       "(or a variable's name, or 0xADDR)", name,
	       target__comm(s->target), n_seen ? list : "none");
	return -EINVAL;
}

/* The locks to experiment on, in *out. */
static int choose(struct session *s, const struct seen_lock *seen,
		  size_t n_seen, struct seen_lock **out, size_t *n)
{
	const char *objects = s->opts->what_if_objects;
	size_t cap = 0;
	char *copy, *save = NULL;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!objects) {
		size_t k = n_seen < WHATIF_DEFAULT_TRIES ? n_seen :
			   WHATIF_DEFAULT_TRIES;

		if (!k)
			return 0;
		*out = calloc(k, sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, seen, k * sizeof(**out));
		*n = k;
		return 0;
	}
	copy = strdup(objects);
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		err = array__grow(out, &cap, *n + 1, sizeof(**out));
		if (!err)
			err = find_lock(s, tok, seen, n_seen, &(*out)[*n]);
		if (!err)
			(*n)++;
	}
	free(copy);
	return err;
}

/* The lock's handoffs per second, hold phase. */
static double handoffs_per_s(const struct experiment_result *r)
{
	return r->holds_per_s * r->wake.n_handoffs / (double)r->holds;
}

/*
 * The share of a unit's time holds `shorter` shorter take off beyond the
 * slope through the handoffs (wakecurve.c): each handoff's extra shrink
 * times the handoffs per second, as far as the lock bounds the progress
 * (its slope over the share held).
 */
static double handoff_cut(const struct experiment_result *r,
			  const struct whatif_fit *fit,
			  const struct wakecurve_shift *ws)
{
	double bound;

	if (!ws->known || !r->holds || !(fit->held > 0))
		return 0;
	bound = fmin(fmax(fit->slope / fit->held, 0), 1);
	return bound * handoffs_per_s(r) * ws->extra_ns * 1e-9;
}

/*
 * The share of a unit's time in handoffs whose waiter was woken on an
 * idle CPU (whatifmodel.h's handoff_idle); 0 when no wake-up was timed.
 */
static double handoff_idle(const struct experiment_result *r,
			   const struct wakecurve_shift *ws)
{
	if (!r->holds || !(ws->wakes > 0))
		return 0;
	return fmin(fmax(handoffs_per_s(r) * ws->handoff_ns * 1e-9 *
			 ws->woken_share * (1 - ws->busy_share), 0), 1);
}

/* The delays of r's windows, as fractions of the hold: each once. */
static size_t window_delays(const struct experiment_result *r, double *out,
			    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_windows; i++) {
		size_t j;

		for (j = 0; j < n && out[j] != r->windows[i].delay; j++)
			;
		if (j == n && n < max && r->windows[i].delay > 0)
			out[n++] = r->windows[i].delay;
	}
	return n;
}

/* One lock's experiment, into its entries; *reach: whether some
   progress waits for it. */
static int experiment_lock(struct session *s, struct experiment *e,
			   const struct seen_lock *l, double time_max_s,
			   enum whatif_reach *reach)
{
	static const double shorter[] = { WHATIF_SHORTER_1, WHATIF_SHORTER_2 };
	struct experiment_result r;
	struct whatif_fit fit;
	double delays[4];
	size_t n_delays;
	char buf[32];
	const char *name = lock_name(s, l, buf, sizeof(buf));
	int err;

	pr_info("--what-if: experimenting on %s (0x%" PRIx64 ")", name,
		l->address);
	err = experiment__run(e, l->address, time_max_s, &r);
	if (err == -ETIME) {
		pr_warn("--what-if: %s: its windows would take %.0f s at "
			"least, and %.0f s of the %.0f s for the locks tried "
			"without a list are left; not tried (--what-if=%s "
			"tries it)", name, whatifplan__time(&r.plan),
			time_max_s, WHATIF_DEFAULT_TIME_S, name);
		return err;
	}
	if (!err)
		err = whatifmodel__fit(r.windows, r.n_windows, &fit);
	if (err == -ENODATA || err == -EINVAL || err == -ENOSPC) {
		pr_warn("--what-if: %s: %s; no prediction", name,
			err == -EINVAL ? "too few windows (the target ended "
					 "or the delay budget was spent)" :
			err == -ENOSPC ? "its windows would need more delay "
					 "than the budget allows" :
			"not held, or no progress, while it was timed");
		return 0;
	}
	if (err)
		return err;
	*reach = r.reach;
	fit.held = r.holds_per_s * (double)r.hold_ns * 1e-9;
	fit.stolen = r.stolen;
	pr_info("--what-if: %s: mean hold %" PRIu64 " ns, slope %.3f "
		"[%.3f, %.3f], %.2f s, host took %.1f%%", name, r.hold_ns,
		fit.slope, fit.low, fit.high, (double)r.elapsed_ns * 1e-9,
		fit.stolen * 100);
	pr_debug("--what-if: %s: queue of %" PRIu64 " holders, %.2f holds "
		 "a unit, held %.3f of the time, progress %.0f/s", name,
		 r.holders, r.rate > 0 ? r.holds_per_s / r.rate : 0.0,
		 fit.held, r.rate);
	if (r.reach == WHATIF_REACH_NO)
		pr_info("--what-if: %s: none of its %" PRIu64 " holders woke, "
			"or made, progress (%" PRIu64 " threads did) in %" PRIu64
			" wakeup pairs: apart from it, only its holds' CPU "
			"counts", name, r.holders, r.progress_threads, r.wakes);
	n_delays = window_delays(&r, delays, ARRAY_SIZE(delays));
	for (size_t i = 0; i < ARRAY_SIZE(shorter); i++) {
		struct wakecurve_shift ws;
		double cut;
		struct whatif_entry w = {
			.object = l->address,
			.site = l->site,
			.shorter = shorter[i],
			.hold_ns = r.hold_ns,
			.hold_cpu_ns = r.hold_cpu_ns,
			.probe_ns = r.probe_ns,
			.hold_cpu_share = r.cpu.hold_cpu_share,
			.cpus_used = r.used,
			.cpus_could = r.capacity,
			.base_rate = fit.base_rate,
			.delayed_rate = r.rate_delayed,
			.after_rate = r.rate_after,
			.injected_ns = r.injected_ns,
			.budget_ns = (uint64_t)(r.plan.budget_s * 1e9),
			.windows = (unsigned int)r.n_windows,
			.experiment_s = (double)r.elapsed_ns * 1e-9,
			.holders = (unsigned int)r.holders,
			.stolen = r.stolen,
			.queue_pct = NAN,
			.reach = r.reach,
		};
		double q;

		wakecurve__shift(&r.wake, fit.held, shorter[i], delays,
				 n_delays, &ws);
		cut = handoff_cut(&r, &fit, &ws);
		fit.handoff_idle = handoff_idle(&r, &ws);
		w.handoff_idle = fit.handoff_idle;
		w.handoff_ns = ws.handoff_ns;
		w.handoff_after_ns = ws.after_ns;
		w.handoff_woken = ws.woken_share;
		w.wakes = ws.wakes;
		w.wakes_busy = ws.busy_share;
		w.handoff_below = ws.below_share;
		w.n_curve = wakecurve__points(&r.wake, w.curve);
		pr_debug("--what-if: %s: %.0f handoffs of %.1f us (%.0f%% woken), "
			 "%.1f us with holds %.0f%% shorter, %.2f us of it past "
			 "the line; %.0f wake-ups on a curve of %zu points: "
			 "cut %.4f", name, r.wake.n_handoffs,
			 ws.handoff_ns / 1e3, ws.woken_share * 100,
			 ws.after_ns / 1e3, shorter[i] * 100,
			 ws.extra_ns / 1e3, ws.wakes, w.n_curve, cut);
		whatifmodel__predict(&fit, shorter[i], r.windows, r.n_windows,
				     &r.cpu, &w.p);
		/* What the handoffs' move would add: said, not applied
		   (docs/what-if.md, step 6: not yet measured to help). */
		if (cut != 0) {
			struct whatif_prediction moved;

			fit.handoff_cut = cut;
			whatifmodel__predict(&fit, shorter[i], r.windows,
					     r.n_windows, &r.cpu, &moved);
			fit.handoff_cut = 0;
			w.handoff_pct = moved.handoff_pct;
		}
		/* Apart: its slope is the delay's CPU, and the queue's
		   customers are not the progress's.  Its holds' CPU per
		   second from their share, as the CPUs' bound takes it. */
		if (r.reach == WHATIF_REACH_NO)
			whatifmodel__apart(&w.p, shorter[i],
					   whatifmodel__holds_cpu(&r.cpu,
								  r.used,
								  r.rate),
					   r.used, r.capacity);
		else if (r.rate > 0 &&
		    !whatifmodel__queue(w.holders, r.holds_per_s / r.rate,
					(double)r.hold_ns * 1e-9, r.rate,
					shorter[i], &q)) {
			w.queue_pct = q;
			whatifmodel__span_queue(&w.p, q);
		}
		if (l->site)
			symbolizer__callsite(s->symbolizer, l->site,
					     &w.site_info);
		w.object_name = strdup(name);
		if (!w.object_name)
			return -ENOMEM;
		err = whatif__add(s->what_if, &w);
		if (err) {
			free(w.object_name);
			return err;
		}
	}
	return 0;
}

/* The processes followed and alive now (one: the target). */
static int experiment_pids(struct session *s, pid_t **pids, size_t *n)
{
	size_t count = 0, cap = 0;
	const struct procset_entry *list = session__process_names(s, &count);

	*pids = NULL;
	*n = 0;
	for (size_t i = 0; list && i < count; i++) {
		if (list[i].exited)
			continue;
		if (array__grow(pids, &cap, *n + 1, sizeof(**pids)))
			return -ENOMEM;
		(*pids)[(*n)++] = list[i].pid;
	}
	if (*n)
		return 0;
	if (array__grow(pids, &cap, 1, sizeof(**pids)))
		return -ENOMEM;
	(*pids)[(*n)++] = target__pid(s->target);
	return 0;
}

int session__what_if(struct session *s, int stop_fd)
{
	char libc_path[4096];
	struct whatif_setup *setup = s->what_if_setup;
	struct experiment_config cfg = {
		.libc_path = libc_path,
		.stop_fds = { stop_fd, target__pidfd(s->target) },
	};
	pid_t *pids = NULL;
	struct seen_lock *seen = NULL, *chosen = NULL;
	struct experiment *e = NULL;
	size_t n_seen = 0, n = 0;
	char measure[256];
	uint64_t begin;
	int err;

	if (!s->what_if || !setup)
		return 0;
	cfg.progress_path = s->opts->progress ? setup->exe : NULL;
	cfg.program_path = setup->exe;
	cfg.progress_offset = setup->progress_offset;
	err = target__pthread_library(s->target, libc_path, sizeof(libc_path));
	if (err)
		return err;
	if (s->opts->progress)
		snprintf(measure, sizeof(measure), "calls of %s()",
			 s->opts->progress);
	else
		snprintf(measure, sizeof(measure), "lock acquisitions of all "
			 "threads (no --progress given)");
	s->what_if->progress = strdup(measure);
	if (!s->what_if->progress)
		return -ENOMEM;
	/* The profile up to now; the experiment's waits read apart. */
	err = session__read(s);
	if (!err)
		err = seen_locks(session__totals(s), &seen, &n_seen);
	for (size_t i = 0; !err && i < n_seen; i++)
		seen[i].address = process_address(s, seen[i].object);
	if (!err)
		err = experiment_pids(s, &pids, &cfg.n_pids);
	cfg.pids = pids;
	if (!err)
		err = choose(s, seen, n_seen, &chosen, &n);
	if (!err && !n)
		pr_warn("--what-if: no lock was waited on; nothing to try");
	if (!err && n) {
		pr_info("--what-if: progress is %s, in %zu process%s", measure,
			cfg.n_pids, cfg.n_pids == 1 ? "" : "es");
		err = experiment__open(&cfg, &e);
	}
	begin = clock__monotonic_ns();
	for (size_t i = 0, reaching = 0; !err && i < n; i++) {
		enum whatif_reach reach = WHATIF_REACH_UNKNOWN;
		double left = WHATIF_DEFAULT_TIME_S -
			      (double)(clock__monotonic_ns() - begin) * 1e-9;

		if (!s->opts->what_if_objects &&
		    reaching == WHATIF_DEFAULT_LOCKS)
			break;
		/* Without a list, the time left shared by the locks still
		   wanted; a list's locks each get the plan's own limit. */
		left /= (double)(WHATIF_DEFAULT_LOCKS - reaching);
		err = experiment_lock(s, e, &chosen[i],
				      s->opts->what_if_objects ? 0 :
				      fmax(fmin(left, WHATIFPLAN_TIME_MAX_S),
					   1e-3), &reach);
		if (err == -ETIME) {
			err = 0;
			continue;
		}
		if (reach != WHATIF_REACH_NO)
			reaching++;
		else if (!s->opts->what_if_objects && i + 1 < n)
			pr_info("--what-if: no progress waits for it; the next "
				"lock by wait is tried in its place");
		if (err == -EINTR) {
			pr_warn("--what-if: stopped before its end");
			err = 0;
			break;
		}
	}
	experiment__free(e);
	if (!err && n)
		err = session__read_apart(s);
	free(seen);
	free(chosen);
	free(pids);
	return err;
}

void session__what_if_free(struct session *s)
{
	whatif__free(s->what_if);
	s->what_if = NULL;
	free(s->what_if_setup);
	s->what_if_setup = NULL;
}
