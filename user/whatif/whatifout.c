// SPDX-License-Identifier: GPL-2.0
/* --what-if's predictions, as a table section and as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonout.h"
#include "whatifout.h"

/* A handoffs' share of the gain below this is not footnoted. */
#define HANDOFF_SHOWN_PCT	0.05

static const char *bound_of(const struct whatif_entry *e)
{
	if (e->reach == WHATIF_REACH_NO)
		return "apart";
	return e->p.capped ? "cpu" : "lock";
}

static void site_text(const struct whatif_entry *e, char *buf, size_t len)
{
	const struct symbol_info *s = &e->site_info;
	const char *file = s->file ? strrchr(s->file, '/') : NULL;

	if (s->file && s->line)
		snprintf(buf, len, "%s:%u", file ? file + 1 : s->file, s->line);
	else if (s->function)
		snprintf(buf, len, "%s", s->function);
	else if (e->site)
		snprintf(buf, len, "0x%" PRIx64, e->site);
	else
		snprintf(buf, len, "(not seen)");
}

bool whatifout__disagree(const struct whatif_entry *e)
{
	/* The slope's interval before the CPUs' cap (the queue sees no
	   CPUs) and before the queue's own gain widened it, and apart by
	   more than a quarter of the slope's gain or 5 points: the two
	   see the same lock through different noise. */
	double low = fmin(e->p.lock_low_pct, e->p.lock_gain_pct);
	double high = fmax(e->p.high_pct, e->p.lock_gain_pct);
	double apart = fabs(e->queue_pct - e->p.lock_gain_pct);

	return !isnan(e->queue_pct) &&
	       (e->queue_pct < low || e->queue_pct > high) &&
	       apart > fmax(5.0, 0.25 * fabs(e->p.lock_gain_pct));
}

void whatifout__table(FILE *out, const struct whatif *w)
{
	fprintf(out, "\nWhat if: each lock's critical sections shorter, "
		"tried on the running target (progress: %s)\n",
		w->progress ? w->progress : "not measured");
	if (!w->n) {
		fputs("(no prediction: no lock to try)\n", out);
		return;
	}
	fprintf(out, "%-24s %-22s %7s %10s %19s %5s %9s %10s %10s\n", "Lock",
		"Site", "Shorter", "Gain", "Interval", "Bound", "Queue",
		"Mean hold", "Experiment");
	for (size_t i = 0; i < w->n; i++) {
		const struct whatif_entry *e = &w->entries[i];
		char site[64], interval[40], queue[24];

		site_text(e, site, sizeof(site));
		snprintf(interval, sizeof(interval), "[%+.1f%%, %+.1f%%]",
			 e->p.low_pct, e->p.high_pct);
		if (isnan(e->queue_pct))
			snprintf(queue, sizeof(queue), "-");
		else
			snprintf(queue, sizeof(queue), "%+.1f%%%s",
				 e->queue_pct, whatifout__disagree(e) ?
				 "!" : "");
		fprintf(out, "%-24s %-22s %6.0f%% %+9.1f%% %19s %5s %9s "
			"%7.1f us %8.1f s\n",
			e->object_name ? e->object_name : "?", site,
			e->shorter * 100, e->p.gain_pct, interval, bound_of(e),
			queue, (double)e->hold_ns / 1000.0, e->experiment_s);
	}
	fputs("Queue: the cross-check, a closed queue of the lock's holders "
	      "fitted to the hold phase (no delay); '-': holds that overlap "
	      "or too few to fit.\n", out);
	for (size_t i = 0; i < w->n; i++)
		if (whatifout__disagree(&w->entries[i])) {
			fputs("Queue!: the two methods disagree (the queue's gain "
			      "outside the slope's interval): the slope's "
			      "straight line or single bottleneck, or the "
			      "queue's alike holders, does not hold; trust "
			      "neither alone.\n", out);
			break;
		}
	for (size_t i = 0; i < w->n; i++)
		if (w->entries[i].reach == WHATIF_REACH_NO) {
			fputs("Bound apart: none of the lock's holders made "
			      "progress or woke a thread that did, directly "
			      "or through others: no progress waits for it; "
			      "the gain shown is the CPU its holds would "
			      "free.\n", out);
			break;
		}
	for (size_t i = 0; i < w->n; i++)
		if (w->entries[i].p.capped) {
			fputs("Bound cpu: shorter holds would make the CPUs the "
			      "limit; the gain shown is what they allow, not "
			      "the lock's arithmetic.\n", out);
			break;
		}
	for (size_t i = 0; i < w->n; i++) {
		const struct whatif_entry *e = &w->entries[i];

		if (fabs(e->handoff_pct) < HANDOFF_SHOWN_PCT)
			continue;
		fprintf(out, "Handoffs: %s %.0f%% shorter: its handoffs' "
			"wake-ups would add %+.1f points to the lock's gain "
			"(%.1f us -> %.1f us; not in the Gain shown): a CPU idle "
			"for less wakes its waiter faster, which lengthened "
			"holds do not show.\n",
			e->object_name ? e->object_name : "?", e->shorter * 100,
			e->handoff_pct, e->handoff_ns / 1e3,
			e->handoff_after_ns / 1e3);
	}
	if (w->n)
		fprintf(out, "Progress/s: %.0f before, %.0f while delayed, "
			"%.0f after the last lock's experiment.\n",
			w->entries[w->n - 1].base_rate,
			w->entries[w->n - 1].delayed_rate,
			w->entries[w->n - 1].after_rate);
}

static json_t *json_frame(const struct whatif_entry *e, int *err)
{
	const struct symbol_info *s = &e->site_info;
	json_t *o;

	if (!e->site)
		return json_null();
	o = json_object();
	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "address", jsonout__hex(true, e->site), err);
	jsonout__set(o, "module", jsonout__string(s->module), err);
	jsonout__set(o, "offset", jsonout__hex(s->module != NULL,
					       s->module_offset), err);
	jsonout__set(o, "function", jsonout__string(s->function), err);
	jsonout__set(o, "file", jsonout__string(s->file), err);
	jsonout__set(o, "line", jsonout__uint_or_null(s->line, s->line), err);
	jsonout__set(o, "inline", json_false(), err);
	return o;
}

/* The handoffs' fields (wakecurve.c); null where none were timed. */
static void json_handoffs(json_t *o, const struct whatif_entry *e, int *err)
{
	bool timed = e->handoff_ns > 0;
	json_t *curve = json_array();

	jsonout__set(o, "handoff_ns", timed ? json_real(e->handoff_ns) :
		     json_null(), err);
	jsonout__set(o, "handoff_predicted_ns", timed ?
		     json_real(e->handoff_after_ns) : json_null(), err);
	jsonout__set(o, "handoff_woken_pct", timed ?
		     json_real(e->handoff_woken * 100) : json_null(), err);
	jsonout__set(o, "handoff_gain_pct", json_real(e->handoff_pct), err);
	jsonout__set(o, "handoff_idle_pct", e->wakes > 0 ?
		     json_real(e->handoff_idle * 100) : json_null(), err);
	jsonout__set(o, "probe_ns", jsonout__uint(e->probe_ns), err);
	jsonout__set(o, "handoff_below_curve_pct", timed ?
		     json_real(e->handoff_below * 100) : json_null(), err);
	jsonout__set(o, "wakes", json_real(e->wakes), err);
	jsonout__set(o, "wakes_busy_pct", e->wakes > 0 ?
		     json_real(e->wakes_busy * 100) : json_null(), err);
	if (!curve) {
		*err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < e->n_curve && !*err; i++) {
		json_t *pt = json_object();

		if (!pt) {
			*err = -ENOMEM;
			break;
		}
		jsonout__set(pt, "idle_ns", json_real(e->curve[i].idle), err);
		jsonout__set(pt, "latency_ns", json_real(e->curve[i].lat), err);
		jsonout__set(pt, "wakes", json_real(e->curve[i].wakes), err);
		jsonout__append(curve, pt, err);
	}
	jsonout__set(o, "wake_curve", curve, err);
}

json_t *whatifout__json(const struct whatif *w, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < w->n && !*err; i++) {
		const struct whatif_entry *e = &w->entries[i];
		json_t *o = json_object();

		if (!o) {
			*err = -ENOMEM;
			break;
		}
		jsonout__set(o, "object", jsonout__string(e->object_name), err);
		jsonout__set(o, "object_address", jsonout__hex(true, e->object),
			     err);
		jsonout__set(o, "site", json_frame(e, err), err);
		jsonout__set(o, "shorter_pct", json_real(e->shorter * 100), err);
		jsonout__set(o, "predicted_gain_pct", json_real(e->p.gain_pct),
			     err);
		jsonout__set(o, "low_pct", json_real(e->p.low_pct), err);
		jsonout__set(o, "high_pct", json_real(e->p.high_pct), err);
		jsonout__set(o, "progress", jsonout__string(w->progress), err);
		jsonout__set(o, "bound", json_string(bound_of(e)), err);
		jsonout__set(o, "lock_gain_pct", json_real(e->p.lock_gain_pct),
			     err);
		jsonout__set(o, "cpu_cap_pct", e->p.cap_pct >= 0 ?
			     json_real(e->p.cap_pct) : json_null(), err);
		jsonout__set(o, "hold_ns", jsonout__uint(e->hold_ns), err);
		jsonout__set(o, "hold_cpu_ns", jsonout__uint(e->hold_cpu_ns),
			     err);
		jsonout__set(o, "hold_cpu_share", e->hold_cpu_share > 0 ?
			     json_real(e->hold_cpu_share) : json_null(), err);
		jsonout__set(o, "experiment_s", json_real(e->experiment_s), err);
		jsonout__set(o, "injected_ns", jsonout__uint(e->injected_ns),
			     err);
		jsonout__set(o, "delay_budget_ns", jsonout__uint(e->budget_ns),
			     err);
		jsonout__set(o, "windows", jsonout__uint(e->windows), err);
		jsonout__set(o, "rate_before", json_real(e->base_rate), err);
		jsonout__set(o, "rate_during", json_real(e->delayed_rate), err);
		jsonout__set(o, "rate_after", json_real(e->after_rate), err);
		jsonout__set(o, "queue_gain_pct", isnan(e->queue_pct) ?
			     json_null() : json_real(e->queue_pct), err);
		jsonout__set(o, "methods_agree", isnan(e->queue_pct) ?
			     json_null() : json_boolean(!whatifout__disagree(e)),
			     err);
		jsonout__set(o, "holders", jsonout__uint(e->holders), err);
		jsonout__set(o, "stolen_pct", json_real(e->stolen * 100), err);
		jsonout__set(o, "cpus_used", e->cpus_used > 0 ?
			     json_real(e->cpus_used) : json_null(), err);
		jsonout__set(o, "cpus_could", e->cpus_could > 0 ?
			     json_real(e->cpus_could) : json_null(), err);
		jsonout__set(o, "reaches_progress",
			     e->reach == WHATIF_REACH_UNKNOWN ? json_null() :
			     json_boolean(e->reach == WHATIF_REACH_YES), err);
		json_handoffs(o, e, err);
		jsonout__append(list, o, err);
	}
	return list;
}
