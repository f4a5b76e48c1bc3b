// SPDX-License-Identifier: GPL-2.0
/*
 * Grouping sorts a copy of the entries by (type, call site, [tid],
 * object) and walks it once: a row ends where the group key changes, and
 * distinct objects are counted as changes of object inside a row.  That is
 * O(n log n) with no hash table; n is at most the stats map size.
 * A row's stacks are gathered the same way: (row, stack id) pairs sorted
 * and merged, then each row's run sorted by wait.
 * Rows sort by class before the key, lock rows first: an idle worker's
 * condvar wait (often most of all wait) never pushes the worst lock out
 * of --top.  Rejected: --top per class (--top N is rows per report).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "locktype.h"
#include "sortorder.h"
#include "report.h"
#include "stacktab.h"

uint64_t report__counted_ns(const struct report_row *r)
{
	return r->wait_ns > r->failed_ns ? r->wait_ns - r->failed_ns : 0;
}

size_t report__first_event(const struct report_rows *rows)
{
	size_t i = 0;

	while (i < rows->count &&
	       locktype__class_of(rows->rows[i].type) != LOCK_CLASS_EVENT)
		i++;
	for (size_t k = i; k < rows->count; k++)
		if (locktype__class_of(rows->rows[k].type) != LOCK_CLASS_EVENT)
			return rows->count;
	return i;
}

const char *report__classes_name(enum report_classes classes)
{
	static const char *const names[REPORT_CLASSES__COUNT] = {
		[REPORT_CLASSES_ALL] = "all",
		[REPORT_CLASSES_LOCKS] = "locks",
		[REPORT_CLASSES_EVENTS] = "events",
	};

	return classes < REPORT_CLASSES__COUNT ? names[classes] : "?";
}

/* Whether settings keep the rows of this type. */
static bool report__keeps(const struct report_settings *s, uint32_t type)
{
	switch (s->classes) {
	case REPORT_CLASSES_LOCKS:
		return locktype__class_of(type) == LOCK_CLASS_LOCK;
	case REPORT_CLASSES_EVENTS:
		return locktype__class_of(type) == LOCK_CLASS_EVENT;
	default:
		return true;
	}
}

/* qsort_r comparator: group key, then object. */
static int report__group_cmp(const void *pa, const void *pb, void *arg)
{
	const struct snapshot_entry *a = pa, *b = pb;
	const struct report_settings *s = arg;
	int c;

	if ((c = order__u64(a->key.type, b->key.type)))
		return c;
	if ((c = order__u64(a->key.callsite, b->key.callsite)))
		return c;
	if ((s->per_thread || s->per_process) &&
	    (c = order__u64(a->key.pid, b->key.pid)))
		return c;
	if (s->per_thread && (c = order__u64(a->key.tid, b->key.tid)))
		return c;
	if (s->per_thread && (c = order__u64(a->key.owner_tid, b->key.owner_tid)))
		return c;
	return order__u64(a->key.object, b->key.object);
}

static bool report__same_row(const struct snapshot_entry *a,
			     const struct snapshot_entry *b,
			     const struct report_settings *s)
{
	return a->key.type == b->key.type && a->key.callsite == b->key.callsite &&
	       (!(s->per_thread || s->per_process) ||
		a->key.pid == b->key.pid) &&
	       (!s->per_thread || (a->key.tid == b->key.tid &&
				   a->key.owner_tid == b->key.owner_tid)) &&
	       (s->coalesce || a->key.object == b->key.object);
}

/*
 * Compares means (counted wait / count) exactly; a row without a count
 * has no mean and sorts as a mean of 0, as in QSP.
 */
static int cmp_mean(const struct report_row *a, const struct report_row *b)
{
	uint64_t a_ns = report__counted_ns(a), b_ns = report__counted_ns(b);
	unsigned __int128 lhs, rhs;

	/* A mean of 0 ties only with another mean of exactly 0. */
	if (!a->count && !b->count)
		return 0;
	if (!a->count)
		return b_ns ? -1 : 0;
	if (!b->count)
		return a_ns ? 1 : 0;
	lhs = (unsigned __int128)a_ns * b->count;
	rhs = (unsigned __int128)b_ns * a->count;
	return lhs < rhs ? -1 : lhs > rhs;
}

int report__row_cmp(const struct report_row *a, const struct report_row *b,
		    enum sort_key sort)
{
	int c = order__u64(locktype__class_of(a->type),
			   locktype__class_of(b->type));

	if (c)
		return c;
	/* Largest first. */
	switch (sort) {
	case SORT_TOTAL:
		/* Weighed first (equal to the wait without weights). */
		c = b->impact_ns < a->impact_ns ? -1 : b->impact_ns > a->impact_ns;
		if (!c)
			c = order__u64(b->wait_ns, a->wait_ns);
		break;
	case SORT_MEAN:
		c = cmp_mean(b, a);
		break;
	case SORT_MAX:
		c = order__u64(b->max_ns, a->max_ns);
		break;
	case SORT_COUNT:
		c = order__u64(b->count, a->count);
		break;
	}
	if (c)
		return c;
	/* QSP's tie-breaks: object, call site, type; then thread. */
	c = order__qsp(a->object, a->callsite, a->type, b->object, b->callsite,
		       b->type);
	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->owner_tid < b->owner_tid ? -1 : a->owner_tid > b->owner_tid;
}

/* A wait through one stack, on its way into row `row`. */
struct stack_part {
	size_t row;
	struct report_stack stack;
};

static int report__part_cmp(const void *pa, const void *pb)
{
	const struct stack_part *a = pa, *b = pb;
	int c = order__u64(a->row, b->row);

	return c ? c : order__u64(a->stack.stack_id, b->stack.stack_id);
}

static int report__stack_cmp(const void *pa, const void *pb)
{
	const struct report_stack *a = pa, *b = pb;
	int c = order__u64(b->wait_ns, a->wait_ns);

	if (!c)
		c = order__u64(b->count, a->count);
	return c ? c : order__u64(a->stack_id, b->stack_id);
}

/* Gives every row its stacks, merged by id, largest wait first. */
static int report__gather_stacks(struct report_row *rows,
				 struct stack_part *parts, size_t n_parts)
{
	size_t i = 0;

	if (!n_parts)
		return 0;	/* no stacks: parts is NULL */
	qsort(parts, n_parts, sizeof(*parts), report__part_cmp);
	while (i < n_parts) {
		struct report_row *row = &rows[parts[i].row];
		size_t end = i, cap = 0, n = 0;

		while (end < n_parts && parts[end].row == parts[i].row)
			end++;
		for (; i < end; i++) {
			const struct report_stack *in = &parts[i].stack;
			struct report_stack *acc;

			if (n && row->stacks[n - 1].stack_id == in->stack_id) {
				acc = &row->stacks[n - 1];
				acc->count += in->count;
				acc->wait_ns += in->wait_ns;
				acc->failed += in->failed;
				if (in->max_ns > acc->max_ns)
					acc->max_ns = in->max_ns;
				continue;
			}
			if (array__grow(&row->stacks, &cap, n + 1,
					sizeof(*row->stacks)))
				return -ENOMEM;
			row->stacks[n++] = *in;
		}
		row->n_stacks = n;
		qsort(row->stacks, n, sizeof(*row->stacks), report__stack_cmp);
	}
	return 0;
}

static int report__sort_cmp(const void *pa, const void *pb, void *arg)
{
	return report__row_cmp(pa, pb, *(const enum sort_key *)arg);
}

int report__build(const struct snapshot_entry *entries, size_t n,
		  const struct report_settings *settings,
		  struct report_rows *out)
{
	struct snapshot_entry *sorted = NULL;
	struct report_row *rows = NULL;
	struct stack_part *parts = NULL;
	size_t n_rows = 0, n_parts = 0, parts_cap = 0, kept = 0;
	int err = 0;

	*out = (struct report_rows){ 0 };
	if (!n)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	rows = calloc(n, sizeof(*rows));
	if (!sorted || !rows) {
		free(sorted);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (report__keeps(settings, entries[i].key.type))
			sorted[kept++] = entries[i];
	n = kept;
	if (!n) {
		free(sorted);
		free(rows);
		return 0;
	}
	qsort_r(sorted, n, sizeof(*sorted), report__group_cmp,
		(void *)settings);

	for (size_t i = 0; i < n; i++) {
		const struct snapshot_entry *e = &sorted[i];
		struct report_row *row;

		if (i && report__same_row(&sorted[i - 1], e, settings)) {
			row = &rows[n_rows - 1];
			if (sorted[i - 1].key.object != e->key.object)
				row->n_objects++;
		} else {
			row = &rows[n_rows++];
			row->type = e->key.type;
			row->object = e->key.object;	/* lowest: sorted */
			row->n_objects = 1;
			row->callsite = e->key.callsite;
			row->tid = settings->per_thread ? (int64_t)e->key.tid
							: REPORT_NO_TID;
			row->pid = (settings->per_thread ||
				    settings->per_process) && e->key.pid
				   ? (int64_t)e->key.pid : REPORT_NO_TID;
			row->owner_tid = settings->per_thread && e->key.owner_tid
					 ? (int64_t)e->key.owner_tid
					 : REPORT_NO_TID;
		}
		wait_stats__add(&row->stats, &e->stats);
		row->impact_ns += (double)e->wait_ns *
				  (settings->weigh ?
				   settings->weigh(settings->weigh_ctx,
						   e->key.pid, e->key.tid,
						   e->key.object) : 1.0);
		if (!e->key.stack_id)
			continue;
		if (array__grow(&parts, &parts_cap, n_parts + 1,
				sizeof(*parts))) {
			err = -ENOMEM;
			break;
		}
		parts[n_parts++] = (struct stack_part){
			.row = n_rows - 1,
			.stack = { stacktab__canonical(settings->stacks,
						       e->key.stack_id),
				   e->count, e->wait_ns,
				   e->max_ns, e->failed },
		};
	}
	free(sorted);
	if (!err)
		err = report__gather_stacks(rows, parts, n_parts);
	free(parts);
	if (err) {
		out->rows = rows;
		out->total = out->count = n_rows;
		report__free(out);
		return err;
	}

	qsort_r(rows, n_rows, sizeof(*rows), report__sort_cmp,
		(void *)&settings->sort);
	out->rows = rows;
	out->total = n_rows;
	out->count = settings->top && settings->top < n_rows ? settings->top
							      : n_rows;
	return 0;
}

void report__free(struct report_rows *rows)
{
	for (size_t i = 0; i < rows->total; i++)
		free(rows->rows[i].stacks);
	free(rows->rows);
	*rows = (struct report_rows){ 0 };
}
