// SPDX-License-Identifier: GPL-2.0
/*
 * --duty: full mode's uprobes attached for PCT% of each period, detached
 * for the rest.
 *
 * Detached, not gated: a uprobe whose program returns at once still costs
 * the target its trap and the kernel's round trip (the bulk of full
 * mode's cost, docs/performance.md), so a BPF flag that turns the
 * programs off would leave the target at full mode's speed.  Closing the
 * uprobe_multi links takes the breakpoints out; attaching them again
 * costs one link_create per link (the offsets are kept from the first
 * attach, no ELF is read again but the release functions').
 *
 * The switch off closes the entry link first, then the return link, then
 * the unlocks' (--hold): a call entered before it still returns counted
 * in between, and a hold begun before it still ends.  A call or hold
 * whose end comes after its link is gone is lost to the kernel; the BPF
 * side drops it, counted as cut (SP_CNT_DUTY_CUT), when it meets it
 * again in a later slice: each slice has its number (duty_epoch), and a
 * call of an earlier slice is never counted as abandoned nor continued.
 * So a wait or hold longer than the gap between the two closes is seen
 * only if it ends inside its slice: the estimates of long waits lean
 * short (docs/modes.md).
 *
 * The switch on attaches the unlocks first, then the return and entry
 * links (as probes__attach does).  The times on and off are measured
 * around the switches (CLOCK_MONOTONIC), not taken from the period.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "duty.h"
#include "log.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

struct duty {
	struct probes *probes;
	unsigned int pct;
	uint64_t period_ns;
	int timer_fd;
	bool on;
	uint64_t start_ns;	/* the first slice's start */
	uint64_t slice_ns;	/* the current slice's (on or off) start */
	uint64_t on_ns;		/* the slices on before the current one */
	uint64_t switches;
	uint64_t end_ns;	/* the probes could not come back: 0, or when */
	uint64_t switch_ns;	/* the entry links' closes, summed */
};

/* Arms the timer for abs_ns (CLOCK_MONOTONIC). */
static int duty__arm(struct duty *d, uint64_t abs_ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(abs_ns / 1000000000ull),
			      .tv_nsec = (long)(abs_ns % 1000000000ull) },
	};

	if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	return 0;
}

/*
 * Entry links first, then returns, then the unlocks' (see above).  The
 * breakpoints leave in the first part of the entry link's close (it
 * walks every process mapping the library, then waits for the programs
 * running): the slice on ends as the close begins, and calls entering
 * while it walks are counted beyond that time, at most *entries_ns
 * (reported as switch_ns) each switch.  Measured on workload (the
 * tests' target, its own call log): counting the whole close as on read
 * 6% under the calls it made in the slices, its half 4.5-7.6% under the
 * whole count, its start 2.6-8% over.
 */
static void duty__detach(struct probes *p, uint64_t *entries_ns)
{
	uint64_t t0 = clock__monotonic_ns();

	/* probes__attach_sites puts each pair's return link first. */
	for (size_t i = 1; i < p->n_multi_links; i += 2)
		close(p->multi_links[i]);
	*entries_ns = clock__monotonic_ns() - t0;
	for (size_t i = 0; i < p->n_multi_links; i += 2)
		close(p->multi_links[i]);
	p->n_multi_links = 0;
	if (p->release_multi_link >= 0)
		close(p->release_multi_link);
	p->release_multi_link = -1;
}

static int duty__attach(struct probes *p)
{
	int err = 0;

	p->skel->bss->duty_epoch++;
	if (p->releases)
		err = probes__attach_releases(p, p->library);
	if (!err)
		err = probes__attach_sites(p, p->library, p->site_index,
					   p->site_offset, p->site_cookie,
					   p->n_sites);
	return err;
}

int duty__new(struct probes *p, unsigned int pct, uint64_t period_ns,
	      struct duty **out)
{
	struct duty *d;
	int err;

	*out = NULL;
	if (p->mode != PROBES_FULL || !p->multi || p->n_multi_links != 2 ||
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
	d->period_ns = period_ns;
	d->on = true;
	/* Called as the target goes on: --pid's was probed since
	 * probes__live_ns (a moment), a command's runs from now. */
	d->start_ns = d->slice_ns = clock__monotonic_ns();
	pr_debug("--duty: starts at %llu ns", (unsigned long long)d->start_ns);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer_fd < 0) {
		err = -errno;
		free(d);
		return err;
	}
	err = duty__arm(d, d->start_ns + period_ns / 100 * pct);
	if (err) {
		duty__free(d);
		return err;
	}
	*out = d;
	return 0;
}

int duty__fd(const struct duty *d)
{
	return d->timer_fd;
}

int duty__tick(struct duty *d)
{
	uint64_t ticks, now;
	int err;

	if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return 0;
	if (d->end_ns)
		return 0;
	if (d->on) {
		uint64_t entries_ns;

		now = clock__monotonic_ns();
		duty__detach(d->probes, &entries_ns);
		pr_debug("--duty: off at %llu ns in %.1f ms (entries %.1f ms)",
			 (unsigned long long)now,
			 (double)(clock__monotonic_ns() - now) * 1e-6,
			 (double)entries_ns * 1e-6);
		d->switch_ns += entries_ns;
		d->on_ns += now - d->slice_ns;
		d->on = false;
		d->switches++;
		d->slice_ns = now;
		/* The next slice on starts a period after this one did. */
		return duty__arm(d, d->slice_ns + d->period_ns / 100 * (100 - d->pct));
	}
	now = clock__monotonic_ns();
	err = duty__attach(d->probes);
	pr_debug("--duty: on at %llu ns in %.1f ms",
		 (unsigned long long)clock__monotonic_ns(),
		 (double)(clock__monotonic_ns() - now) * 1e-6);
	if (err) {
		/* The target exited between the switches, most likely: the
		 * estimates stop where the last slice ended. */
		d->end_ns = now;
		pr_warn("cannot attach the probes again (--duty): %s; the "
			"estimates end %.2f s after the start", strerror(-err),
			(double)(now - d->start_ns) * 1e-9);
		return 0;
	}
	now = clock__monotonic_ns();
	d->on = true;
	d->slice_ns = now;
	return duty__arm(d, now + d->period_ns / 100 * d->pct);
}

void duty__times(const struct duty *d, uint64_t now_ns, struct duty_times *out)
{
	uint64_t on, all;

	if (d->end_ns && now_ns > d->end_ns)
		now_ns = d->end_ns;
	on = d->on_ns + (d->on && now_ns > d->slice_ns ?
			 now_ns - d->slice_ns : 0);
	all = now_ns > d->start_ns ? now_ns - d->start_ns : 0;

	*out = (struct duty_times){
		.pct = d->pct,
		.on_ns = on,
		.off_ns = all > on ? all - on : 0,
		.switches = d->switches,
		.switch_ns = d->switch_ns,
		.cut = probes__counter(d->probes, SP_CNT_DUTY_CUT),
	};
}

void duty__factor(const struct duty *d, uint64_t now_ns, uint64_t *num,
		  uint64_t *den)
{
	struct duty_times t;

	duty__times(d, now_ns, &t);
	*num = t.on_ns + t.off_ns;
	*den = t.on_ns;
	if (!*den)
		*num = *den = 1;
}

void duty__free(struct duty *d)
{
	if (!d)
		return;
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	free(d);
}
