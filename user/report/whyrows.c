// SPDX-License-Identifier: GPL-2.0
/*
 * --why's charges by report row (see whyrows.h): the charges
 * (waits/whycharges.c) are a flat array of the map's entries, sorted by
 * key; rows and roots are found by a pass over it: the map holds one
 * entry per (row, root), a few per row, so a report's rows times entries
 * stays small next to symbolizing them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "sortorder.h"
#include "whyrows.h"

/* Whether report__build put an entry with this key into row. */
static bool why__in_row(const struct sp_key *k, const struct report_row *row,
			const struct report_settings *s)
{
	int64_t pid = k->pid ? (int64_t)k->pid : REPORT_NO_TID;
	int64_t owner = k->owner_tid ? (int64_t)k->owner_tid : REPORT_NO_TID;

	if (k->type != row->type || k->callsite != row->callsite)
		return false;
	if ((s->per_thread || s->per_process) && pid != row->pid)
		return false;
	if (s->per_thread && ((int64_t)k->tid != row->tid ||
			      owner != row->owner_tid))
		return false;
	return s->coalesce || k->object == row->object;
}

/* Adds ns at (site, pid, state) to a list of roots. */
static int why__root_add(struct why_root **roots, size_t *n, size_t *cap,
			 const struct why_root *add)
{
	int err;

	for (size_t i = 0; i < *n; i++) {
		struct why_root *r = &(*roots)[i];

		if (r->site == add->site && r->pid == add->pid &&
		    r->state == add->state) {
			r->ns += add->ns;
			r->waits += add->waits;
			return 0;
		}
	}
	err = array__grow(roots, cap, *n + 1, sizeof(**roots));
	if (!err)
		(*roots)[(*n)++] = *add;
	return err;
}

/* The roots of one (row, site) entry, one per state charged. */
static int why__entry_roots(const struct why_entry *e, struct why_root **roots,
			    size_t *n, size_t *cap)
{
	int err = 0;

	for (uint32_t k = 0; !err && k < SP_WHY__COUNT; k++) {
		const struct why_root add = {
			.site = e->key.site, .pid = e->key.pid, .state = k,
			.ns = e->value.ns[k], .waits = e->value.waits[k],
		};

		if (add.ns)
			err = why__root_add(roots, n, cap, &add);
	}
	return err;
}

static int why__root_cmp(const void *pa, const void *pb)
{
	const struct why_root *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->state < b->state ? -1 : a->state > b->state;
}

/* The charges of row's entries, those with stack_id alone if by_stack. */
static int why__collect(const struct why *w, const struct report_row *row,
			const struct report_settings *settings, bool by_stack,
			uint64_t stack_id, struct why_row *out)
{
	size_t cap = 0;
	int err = 0;

	*out = (struct why_row){ 0 };
	size_t n = 0;
	const struct why_entry *items = w ? why__entries(w, &n) : NULL;

	for (size_t i = 0; !err && i < n; i++) {
		const struct why_entry *e = &items[i];

		if (!why__in_row(&e->key.row, row, settings) ||
		    (by_stack && e->key.row.stack_id != stack_id))
			continue;
		if (e->key.kind == SP_WHY_HOLDER) {
			for (size_t k = 0; k < SP_WHY__COUNT; k++)
				out->holder[k] += e->value.ns[k];
			continue;
		}
		err = why__entry_roots(e, &out->roots, &out->n_roots, &cap);
	}
	if (err) {
		why__row_free(out);
		return err;
	}
	if (out->n_roots)
		qsort(out->roots, out->n_roots, sizeof(*out->roots),
		      why__root_cmp);
	return 0;
}

int why__row(const struct why *w, const struct report_row *row,
	     const struct report_settings *settings, struct why_row *out)
{
	return why__collect(w, row, settings, false, 0, out);
}

int why__row_stack(const struct why *w, const struct report_row *row,
		   const struct report_settings *settings, uint64_t stack_id,
		   struct why_row *out)
{
	return why__collect(w, row, settings, true, stack_id, out);
}

void why__row_free(struct why_row *r)
{
	free(r->roots);
	*r = (struct why_row){ 0 };
}

/* The root row of (type, object, site) in out, or NULL. */
static struct report_row *why_root_row(struct report_rows *out,
				       const struct report_row *r,
				       uint64_t site)
{
	for (size_t i = 0; i < out->count; i++) {
		struct report_row *o = &out->rows[i];

		if (o->type == r->type && o->object == r->object &&
		    o->n_objects == r->n_objects && o->callsite == site)
			return o;
	}
	return NULL;
}

/* Largest charge first; ties in QSP's order. */
static int why_root_row_order(const void *pa, const void *pb)
{
	const struct report_row *a = pa, *b = pb;
	int c = order__u64(b->wait_ns, a->wait_ns);

	return c ? c : order__qsp(a->object, a->callsite, a->type,
				  b->object, b->callsite, b->type);
}

int why__state_rows(const struct why *w, const struct report_rows *rows,
		    const struct report_settings *settings, uint32_t state,
		    struct report_rows *out)
{
	size_t cap = 0;
	int err = 0;

	*out = (struct report_rows){ 0 };
	for (size_t i = 0; !err && i < rows->count; i++) {
		const struct report_row *r = &rows->rows[i];
		struct why_row wr;

		err = why__row(w, r, settings, &wr);
		for (size_t k = 0; !err && k < wr.n_roots; k++) {
			const struct why_root *root = &wr.roots[k];
			struct report_row *o;

			if (root->state != state)
				continue;
			o = why_root_row(out, r, root->site);
			if (o) {
				o->count += root->waits;
				o->wait_ns += root->ns;
				continue;
			}
			err = array__grow(&out->rows, &cap, out->count + 1,
					  sizeof(*out->rows));
			if (err)
				break;
			out->rows[out->count++] = (struct report_row){
				.type = r->type, .object = r->object,
				.n_objects = r->n_objects,
				.callsite = root->site,
				.tid = REPORT_NO_TID,
				.pid = REPORT_NO_TID,
				.owner_tid = REPORT_NO_TID,
				.count = root->waits,
				.wait_ns = root->ns,
			};
		}
		why__row_free(&wr);
	}
	if (err) {
		free(out->rows);
		*out = (struct report_rows){ 0 };
		return err;
	}
	if (out->count)
		qsort(out->rows, out->count, sizeof(*out->rows),
		      why_root_row_order);
	out->total = out->count;
	return 0;
}

const char *why__state_title(uint32_t state)
{
	static const char *const titles[SP_WHY__COUNT] = {
		[SP_WHY_RUNNING] = "the last holder was running",
		[SP_WHY_RUNNABLE] = "the last holder waited for a CPU",
		[SP_WHY_LOCK] = "a holder in a lock wait whose chain was "
				"not followed",
		[SP_WHY_SLEEP] = "the last holder slept (I/O, timers, poll)",
		[SP_WHY_STOLEN] = "the last holder's CPU ran something else "
				  "(the hypervisor's steal time)",
		[SP_WHY_UNKNOWN] = "no owner known (condvars, semaphores, "
				   "...): the releaser",
		[SP_WHY_WOKEN] = "released: the waiter's own wait for a CPU "
				 "after the wakeup",
	};

	return state < SP_WHY__COUNT ? titles[state] : titles[SP_WHY_UNKNOWN];
}

const char *why__state_name(uint32_t state)
{
	static const char *const names[SP_WHY__COUNT] = {
		[SP_WHY_RUNNING] = "running",
		[SP_WHY_RUNNABLE] = "runnable",
		[SP_WHY_LOCK] = "lock",
		[SP_WHY_SLEEP] = "sleep",
		[SP_WHY_STOLEN] = "stolen",
		[SP_WHY_UNKNOWN] = "unknown",
		[SP_WHY_WOKEN] = "woken",
	};

	return state < SP_WHY__COUNT ? names[state] : "unknown";
}
