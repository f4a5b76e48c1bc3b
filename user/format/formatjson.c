// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist.h"
#include "jsonout.h"
#include "locktype.h"
#include "stateformat.h"
#include "text.h"
#include "whatifout.h"

#include "formatimpl.h"

/*
 * JSON: every key is in every report and every row, null when it does
 * not apply (not asked for, not known), so that the shape never changes
 * ("schema" counts its versions); jsonout.c writes the tree.
 */

static json_t *json_lock_order(const struct format_lock_order *lo,
			       const struct format_config *cfg, int *err);

/*
 * A call site: the address and where it is.  frame: the contract's
 * FRAME, which says too whether it is an inlined call (inlined).
 */
static json_t *json_site(uint64_t addr, const struct symbol_info *cs,
			 bool frame, bool inlined, int *err)
{
	json_t *o = json_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "address", jsonout__hex(true, addr), err);
	jsonout__set(o, "module", jsonout__string(cs->module), err);
	jsonout__set(o, "offset", jsonout__hex(cs->module != NULL,
					       cs->module_offset), err);
	jsonout__set(o, "function", jsonout__string(cs->function), err);
	jsonout__set(o, "file", jsonout__string(cs->file), err);
	jsonout__set(o, "line", jsonout__uint_or_null(cs->line, cs->line), err);
	if (frame)
		jsonout__set(o, "inline", json_boolean(inlined), err);
	return o;
}

static json_t *json_tid(int64_t tid)
{
	return tid == REPORT_NO_TID ? json_null() : json_integer(tid);
}

/* The keys a row of waits, of releases and of waits now begin with. */
static json_t *json_row_head(const struct report_row *r,
			     const struct row_names *n, int *err)
{
	json_t *o = json_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "type", jsonout__string(locktype__name(r->type)), err);
	jsonout__set(o, "class", jsonout__string(locktype__class(r->type)), err);
	jsonout__set(o, "object", jsonout__hex(r->n_objects == 1, r->object), err);
	jsonout__set(o, "objects", jsonout__uint(r->n_objects), err);
	jsonout__set(o, "object_symbol", jsonout__string(n->object_symbol), err);
	return o;
}

/*
 * Rows beside the report's: --blame's, the waits each release ended
 * ("release": null for a release syncprof did not see, and avg_ns), or
 * the waits in progress (where they wait, how many, their time so far).
 */
static json_t *json_side_rows(const struct report_rows *rows,
			      const struct row_names *names, bool blame,
			      int *err)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		json_t *o = json_row_head(r, &names[i], err);

		jsonout__append(list, o, err);
		if (!o)
			break;
		if (blame)
			jsonout__set(o, "release", r->callsite ?
				     json_site(r->callsite, &names[i].callsite,
					       true, false, err) : json_null(),
				     err);
		else
			jsonout__set(o, "callsite", json_site(r->callsite,
				     &names[i].callsite, false, false, err), err);
		jsonout__set(o, "tid", json_tid(blame && !r->callsite ?
						REPORT_NO_TID : r->tid), err);
		/* The releaser's process (--per-process, -T): across
		   processes, another than the waiters'. */
		if (blame)
			jsonout__set(o, "pid", json_tid(r->callsite ? r->pid
							: REPORT_NO_TID), err);
		jsonout__set(o, "count", jsonout__uint(r->count), err);
		jsonout__set(o, "wait_ns", jsonout__uint(r->wait_ns), err);
		if (blame)
			jsonout__set(o, "avg_ns", jsonout__uint(r->count ?
					r->wait_ns / r->count : 0), err);
		jsonout__set(o, "max_ns", jsonout__uint(r->max_ns), err);
	}
	return list;
}

/* Non-empty buckets as [lower_ns, count]. */
static json_t *json_hist(const uint64_t slots[SP_HIST_SLOTS], int *err)
{
	json_t *list = json_array();

	for (size_t k = 0; list && k < SP_HIST_SLOTS; k++) {
		if (slots[k])
			jsonout__append(list, json_pack("[II]",
				(json_int_t)hist__lower(k), (json_int_t)slots[k]), err);
	}
	return list;
}

static json_t *json_quantile(const struct report_row *r, double q)
{
	uint64_t v;

	if (!hist__quantile(r->hist, q, r->max_ns, &v))
		return json_null();
	return jsonout__uint(v);
}

/*
 * --why: the row's wait by the holder's state, and the roots of its
 * chains: {"frame": FRAME (null: release not seen), "state", "wait_ns",
 * "waits", "pid"}, largest first.  "unknown_ns": the wait no holder's
 * clock covers (no owner known, or a wait a signal interrupted);
 * "woken_ns": from the holder's release to the waiter's return;
 * "stolen_ns": the holder on a CPU the hypervisor ran something else on.
 */
static json_t *json_why(const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_row *r, int *err)
{
	json_t *o = json_object(), *holder = json_object();
	json_t *roots = json_array();
	struct why_row w;

	if (!o || !holder || !roots || why__row(meta->why, r,
						 meta->why_rows_by, &w)) {
		json_decref(o);
		json_decref(holder);
		json_decref(roots);
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(holder, "running_ns",
		     jsonout__uint(w.holder[SP_WHY_RUNNING]), err);
	jsonout__set(holder, "runnable_ns",
		     jsonout__uint(w.holder[SP_WHY_RUNNABLE]), err);
	jsonout__set(holder, "lock_ns", jsonout__uint(w.holder[SP_WHY_LOCK]),
		     err);
	jsonout__set(holder, "sleep_ns", jsonout__uint(w.holder[SP_WHY_SLEEP]),
		     err);
	jsonout__set(holder, "stolen_ns",
		     jsonout__uint(w.holder[SP_WHY_STOLEN]), err);
	jsonout__set(holder, "unknown_ns",
		     jsonout__uint(w.holder[SP_WHY_UNKNOWN]), err);
	jsonout__set(holder, "woken_ns",
		     jsonout__uint(w.holder[SP_WHY_WOKEN]), err);
	for (size_t i = 0; i < w.n_roots; i++) {
		const struct why_root *root = &w.roots[i];
		struct symbol_info info = { 0 };
		json_t *e = json_object();

		jsonout__append(roots, e, err);
		if (!e)
			break;
		if (root->site)
			symbolizer__callsite(cfg->symbolizer, root->site, &info);
		jsonout__set(e, "frame", root->site ?
			     json_site(root->site, &info, true, false, err) :
			     json_null(), err);
		jsonout__set(e, "state",
			     jsonout__string(why__state_name(root->state)), err);
		jsonout__set(e, "wait_ns", jsonout__uint(root->ns), err);
		jsonout__set(e, "waits", jsonout__uint(root->waits), err);
		jsonout__set(e, "pid", root->pid ? json_integer(root->pid)
						 : json_null(), err);
	}
	why__row_free(&w);
	jsonout__set(o, "holder", holder, err);
	jsonout__set(o, "roots", roots, err);
	return o;
}

static json_t *json_row(const struct format_config *cfg,
			const struct format_meta *meta,
			const struct report_row *r,
			const struct row_names *n, int *err)
{
	json_t *o = json_row_head(r, n, err);
	bool hold = meta->hold;

	if (!o)
		return NULL;
	jsonout__set(o, "callsite", json_site(r->callsite, &n->callsite, false,
					      false, err), err);
	/* --duty: count, wait_ns, failed and the holds' sums are scaled. */
	jsonout__set(o, "estimated", json_boolean(meta->duty != NULL), err);
	/* Several processes: the row's process; null when rows merge. */
	jsonout__set(o, "pid", json_tid(r->pid), err);
	jsonout__set(o, "tid", json_tid(r->tid), err);
	/* Who held the lock: per-thread rows only, null when not known. */
	jsonout__set(o, "owner_tid", json_tid(r->tid == REPORT_NO_TID ?
					      REPORT_NO_TID : r->owner_tid), err);
	jsonout__set(o, "count", jsonout__uint(r->count), err);
	jsonout__set(o, "wait_ns", jsonout__uint(r->wait_ns), err);
	jsonout__set(o, "avg_ns", jsonout__uint_or_null(r->count, r->count ?
			report__counted_ns(r) / r->count : 0), err);
	jsonout__set(o, "max_ns", jsonout__uint(r->max_ns), err);
	jsonout__set(o, "failed", jsonout__uint(r->failed), err);
	jsonout__set(o, "failed_ns", jsonout__uint(r->failed_ns), err);
	/* Futile wakeups: 0 where the mode sees none (docs/why.md). */
	jsonout__set(o, "futile", jsonout__uint(r->futile), err);
	jsonout__set(o, "hist", json_hist(r->hist, err), err);
	jsonout__set(o, "p50_ns", json_quantile(r, 0.50), err);
	jsonout__set(o, "p99_ns", json_quantile(r, 0.99), err);
	/* --hold: the holds of the locks the row took; null without. */
	jsonout__set(o, "holds", jsonout__uint_or_null(hold, r->hold_count), err);
	jsonout__set(o, "hold_ns", jsonout__uint_or_null(hold, r->hold_ns), err);
	jsonout__set(o, "hold_avg_ns", jsonout__uint_or_null(hold && r->hold_count,
			r->hold_count ? r->hold_ns / r->hold_count : 0), err);
	jsonout__set(o, "hold_max_ns", jsonout__uint_or_null(hold, r->hold_max_ns),
		     err);
	jsonout__set(o, "stacks", format__json_stacks(r, cfg, err), err);
	/* --why: null without. */
	jsonout__set(o, "why", meta->why ? json_why(cfg, meta, r, err)
					 : json_null(), err);
	return o;
}

/* What syncprof cannot see in the target: always a list. */
static json_t *json_notices(const struct format_meta *meta, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < meta->n_notices; i++)
		jsonout__append(list, jsonout__string(meta->notices[i]), err);
	return list;
}

/* Several processes: each followed one, named as it is now; else null. */
static json_t *json_processes(const struct format_meta *meta, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < meta->n_processes; i++) {
		const struct procset_entry *pr = &meta->processes[i];
		json_t *o = json_object();

		if (!o) {
			*err = -ENOMEM;
			break;
		}
		jsonout__set(o, "pid", json_integer(pr->pid), err);
		jsonout__set(o, "comm", jsonout__string(pr->comm), err);
		jsonout__set(o, "exited", json_boolean(pr->exited), err);
		jsonout__append(list, o, err);
	}
	return list;
}

json_t *format__json_report(const struct format_config *cfg,
			    const struct format_meta *meta,
			    const struct report_rows *rows,
			    const struct row_names *names, int *err)
{
	const struct format_drops *d = &meta->drops;
	json_t *o = json_object(), *list = json_array();
	char when[48];

	if (!o || !list) {
		json_decref(o);
		json_decref(list);
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "schema", json_integer(JSONOUT_SCHEMA), err);
	jsonout__set(o, "pid", json_integer(meta->pid), err);
	jsonout__set(o, "comm", jsonout__string(meta->comm), err);
	jsonout__set(o, "mode", jsonout__string(meta->mode), err);
	jsonout__set(o, "elapsed_s", json_real(meta->elapsed_s), err);
	jsonout__set(o, "start_ns", jsonout__uint(meta->start_ns), err);
	jsonout__set(o, "end_ns", jsonout__uint(meta->end_ns), err);
	/* The window's end by the wall clock; null when not known (an
	 * older recording, replayed). */
	format__wall_text(meta->wall_ns, when, sizeof(when));
	jsonout__set(o, "time", when[0] ? json_string(when) : json_null(), err);
	jsonout__set(o, "time_ns", jsonout__uint_or_null(meta->wall_ns,
							 meta->wall_ns), err);
	jsonout__set(o, "dropped", jsonout__uint(meta->dropped), err);
	jsonout__set(o, "sequence", jsonout__uint(meta->sequence), err);
	jsonout__set(o, "calibration_ns", jsonout__uint(meta->calibration_ns), err);
	jsonout__set(o, "calibration_site_ns", json_pack("{sIsI}",
		"emulated", (json_int_t)meta->calibration_emulated_ns,
		"stepped", (json_int_t)meta->calibration_stepped_ns), err);
	jsonout__set(o, "unwind_stopped", jsonout__uint(meta->unwind_stopped), err);
	jsonout__set(o, "abandoned", jsonout__uint(meta->abandoned), err);
	/* --duty: the cycle, and which row fields are estimates (scaled)
	   and which measured in the windows; null when the probes were on
	   all along. */
	jsonout__set(o, "duty", meta->duty ? json_pack(
		"{sIsIsIsIsIsIsIsIs[ssssssss]s[sssssss]}",
		"pct", (json_int_t)meta->duty->pct,
		"on_ns", (json_int_t)meta->duty->on_ns,
		"off_ns", (json_int_t)meta->duty->off_ns,
		"cut", (json_int_t)meta->duty->cut,
		"switch_ns", (json_int_t)meta->duty->switch_ns,
		"attached_ns", (json_int_t)meta->duty->attached_ns,
		"switches", (json_int_t)meta->duty->switches,
		"kept", (json_int_t)meta->duty->kept,
		"estimated", "count", "wait_ns", "failed", "failed_ns", "futile",
		"hist", "holds", "hold_ns",
		"measured", "avg_ns", "max_ns", "p50_ns", "p99_ns", "hold_avg_ns",
		"hold_max_ns", "stacks") : json_null(),
		err);
	jsonout__set(o, "stacks_late", json_pack("{sIsI}",
		"finished", (json_int_t)meta->late_finished,
		"cut", (json_int_t)meta->late_cut), err);
	jsonout__set(o, "dropped_causes", json_pack("{sIsIsIsIsI}",
		"map_full", (json_int_t)d->map_full,
		"no_storage", (json_int_t)d->no_storage,
		"nested", (json_int_t)d->nested,
		"skipped", (json_int_t)d->skipped,
		"ring", (json_int_t)d->ring), err);
	/* Records of counted waits a full table did not keep: no drops. */
	jsonout__set(o, "charges_lost", json_pack("{sIsI}",
		"blame", (json_int_t)d->blame_full,
		"caused", (json_int_t)d->caused_full), err);
	jsonout__set(o, "map_size", jsonout__uint(meta->map_size), err);
	jsonout__set(o, "rows_total", jsonout__uint(rows->total), err);
	jsonout__set(o, "notices", json_notices(meta, err), err);
	jsonout__set(o, "processes", meta->processes ?
		     json_processes(meta, err) : json_null(), err);
	jsonout__set(o, "rows", list, err);
	for (size_t i = 0; i < rows->count && !*err; i++)
		jsonout__append(list, json_row(cfg, meta, &rows->rows[i],
					       &names[i], err), err);
	/* What to fix first: null when not judged (an older recording). */
	jsonout__set(o, "findings", meta->findings_json ?
		     json_incref(meta->findings_json) : json_null(), err);
	/* --states: "threads" and "sched_missed", null without. */
	stateformat__json(o, meta->states, err);
	/* --blame: null without. */
	jsonout__set(o, "blame_total", meta->blame ?
		     jsonout__uint(meta->blame->total) : json_null(), err);
	jsonout__set(o, "blame", meta->blame ?
		     json_side_rows(meta->blame, meta->blame_names, true, err) :
		     json_null(), err);
	/* --why: chains cut short, charges lost; null without. */
	{
		uint64_t cut, dropped;

		why__counts(meta->why, &cut, &dropped);
		jsonout__set(o, "why_chains_cut", jsonout__uint_or_null(
				     meta->why != NULL, cut), err);
		jsonout__set(o, "why_dropped", jsonout__uint_or_null(
				     meta->why != NULL, dropped), err);
	}
	/* --lock-order: the cycles since attach; null without. */
	jsonout__set(o, "lock_order", meta->lock_order ?
		     json_lock_order(meta->lock_order, cfg, err) :
		     json_null(), err);
	jsonout__set(o, "lock_order_lost", meta->lock_order ?
		     json_pack("{s:I,s:I}",
			       "pairs", (json_int_t)meta->lock_order->pairs_dropped,
			       "untracked", (json_int_t)meta->lock_order->untracked) :
		     json_null(), err);
	/* null when none were read (a replayed recording has none). */
	jsonout__set(o, "waiting", meta->waiting ?
		     json_side_rows(meta->waiting, meta->waiting_names,
				    false, err) :
		     json_null(), err);
	/* --what-if: null without. */
	jsonout__set(o, "what_if", meta->what_if ?
		     whatifout__json(meta->what_if, err) : json_null(), err);
	return o;
}

int format__json(FILE *out, const struct format_config *cfg,
		 const struct format_meta *meta,
		 const struct report_rows *rows,
		 const struct row_names *names)
{
	int err = 0;
	json_t *o = format__json_report(cfg, meta, rows, names, &err);

	if (!err)
		err = jsonout__dump(out, o);
	if (!err && fputc('\n', out) == EOF)
		err = -EIO;
	json_decref(o);
	return err;
}

static const char *const stack_end_names[] = {
	[STACKTAB_END_COMPLETE] = "complete",
	[STACKTAB_END_TRUNCATED] = "truncated",
	[STACKTAB_END_STOPPED] = "stopped",
};

/*
 * The frames of one return address (looked up at pc - 1, as "callsite"
 * is): its inlined calls first, each a frame of its own.
 */
static void json_frames_at(json_t *list, struct symbolizer *sym, uint64_t pc,
			   int *err)
{
	const struct symbol_info unknown = { 0 };
	const struct symbol_frame *frames = NULL;
	size_t n = 0;

	if (sym)
		symbolizer__frames(sym, pc, true, &frames, &n);
	if (!n)
		jsonout__append(list, json_site(pc, &unknown, true, false, err),
				err);
	for (size_t k = 0; k < n; k++)
		jsonout__append(list, json_site(pc, &frames[k].info, true,
						frames[k].inlined, err), err);
}

/* --lock-order: one lock of an edge. */
static json_t *json_order_lock(const struct format_order_lock *l,
			       const struct format_config *cfg, int *err)
{
	json_t *o = json_object(), *stack = json_null();
	char name[TEXT_MAX];

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	format__order_lock_text(l, name, sizeof(name));
	jsonout__set(o, "object", jsonout__string(name), err);
	jsonout__set(o, "address", jsonout__hex(true, l->object), err);
	jsonout__set(o, "type", jsonout__string(locktype__name(l->type)),
		     err);
	jsonout__set(o, "frame", json_site(l->site, &l->site_info, true, false,
					   err), err);
	if (cfg->stacktab && l->stack_id) {
		const uint64_t *pcs = NULL;
		enum stacktab_end end = STACKTAB_END_STOPPED;
		uint32_t n = 0;

		json_decref(stack);
		stack = json_array();
		stacktab__get(cfg->stacktab, l->stack_id, &pcs, &n, &end);
		for (uint32_t i = 0; stack && i < n; i++)
			json_frames_at(stack, cfg->symbolizer, pcs[i], err);
	}
	jsonout__set(o, "stack", stack, err);
	return o;
}

/* The contract's "lock_order": one entry per cycle; [] when none. */
static json_t *json_lock_order(const struct format_lock_order *lo,
			       const struct format_config *cfg, int *err)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < lo->n_cycles; i++) {
		const struct format_order_cycle *c = &lo->cycles[i];
		json_t *o = json_object(), *names = json_array();
		json_t *edges = json_array();

		jsonout__append(list, o, err);
		if (!o || !names || !edges) {
			json_decref(names);
			json_decref(edges);
			*err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < c->n; k++) {
			const struct format_order_edge *e = &c->edges[k];
			json_t *edge = json_object();
			char name[TEXT_MAX];

			format__order_lock_text(&e->held, name, sizeof(name));
			jsonout__append(names, jsonout__string(name), err);
			jsonout__append(edges, edge, err);
			if (!edge)
				break;
			jsonout__set(edge, "held", json_order_lock(&e->held,
				     cfg, err), err);
			jsonout__set(edge, "acquired", json_order_lock(
				     &e->acquired, cfg, err), err);
			jsonout__set(edge, "count", jsonout__uint(e->count), err);
			jsonout__set(edge, "pid", json_integer(e->pid), err);
			jsonout__set(edge, "tid", json_integer(e->tid), err);
		}
		jsonout__set(o, "objects", names, err);
		jsonout__set(o, "edges", edges, err);
	}
	return list;
}

json_t *format__json_stacks(const struct report_row *r,
			    const struct format_config *cfg, int *err)
{
	json_t *list;

	/* No stacks kept (--stack-depth 0, a recording without them). */
	if (!cfg->stacktab)
		return json_null();
	list = json_array();
	for (size_t i = 0; list && i < r->n_stacks; i++) {
		const struct report_stack *st = &r->stacks[i];
		const uint64_t *frames = NULL;
		enum stacktab_end end = STACKTAB_END_STOPPED;
		json_t *o = json_object(), *fl = json_array();
		uint32_t n = 0;

		jsonout__append(list, o, err);
		if (!o || !fl) {
			json_decref(fl);
			*err = -ENOMEM;
			break;
		}
		/* A stack whose frames were lost (full map) has none. */
		stacktab__get(cfg->stacktab, st->stack_id, &frames, &n, &end);
		for (uint32_t f = 0; f < n; f++)
			json_frames_at(fl, cfg->symbolizer, frames[f], err);
		jsonout__set(o, "frames", fl, err);
		jsonout__set(o, "end", json_string(end <= STACKTAB_END_STOPPED ?
			     stack_end_names[end] : "stopped"), err);
		jsonout__set(o, "count", jsonout__uint(st->count), err);
		jsonout__set(o, "wait_ns", jsonout__uint(st->wait_ns), err);
		jsonout__set(o, "max_ns", jsonout__uint(st->max_ns), err);
		jsonout__set(o, "failed", jsonout__uint(st->failed), err);
	}
	return list;
}
