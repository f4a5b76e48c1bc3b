// SPDX-License-Identifier: GPL-2.0
/*
 * Grouping sorts a copy of the entries by (type, call site, [tid],
 * object) and walks it once: a row ends where the group key changes, and
 * distinct objects are counted as changes of object inside a row.  That is
 * O(n log n) with no hash table; n is at most the stats map size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *const type_names[SP_TYPE__COUNT] = {
	[SP_TYPE_MUTEX] = "mutex",
	[SP_TYPE_REC_MUTEX] = "rec_mutex",
	[SP_TYPE_CONDVAR] = "condvar",
	[SP_TYPE_RWLOCK_R] = "rwlock-r",
	[SP_TYPE_RWLOCK_W] = "rwlock-w",
	[SP_TYPE_SEM] = "sem",
	[SP_TYPE_LIBC_LOCK] = "libc-lock",
	[SP_TYPE_FUTEX] = "futex",
};

const char *report__type_name(uint32_t type)
{
	return type < SP_TYPE__COUNT ? type_names[type] : "unknown";
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* qsort_r comparator: group key, then object. */
static int report__group_cmp(const void *pa, const void *pb, void *arg)
{
	const struct snapshot_entry *a = pa, *b = pb;
	const struct report_settings *s = arg;
	int c;

	if ((c = cmp_u64(a->key.type, b->key.type)))
		return c;
	if ((c = cmp_u64(a->key.callsite, b->key.callsite)))
		return c;
	if (s->per_thread && (c = cmp_u64(a->key.tid, b->key.tid)))
		return c;
	if (s->per_thread && (c = cmp_u64(a->key.owner_tid, b->key.owner_tid)))
		return c;
	return cmp_u64(a->key.object, b->key.object);
}

static bool report__same_row(const struct snapshot_entry *a,
			     const struct snapshot_entry *b,
			     const struct report_settings *s)
{
	return a->key.type == b->key.type && a->key.callsite == b->key.callsite &&
	       (!s->per_thread || (a->key.tid == b->key.tid &&
				   a->key.owner_tid == b->key.owner_tid)) &&
	       (s->coalesce || a->key.object == b->key.object);
}

/* Compares wait/count means exactly; no count means a mean of 0, as QSP. */
static int cmp_mean(const struct report_row *a, const struct report_row *b)
{
	unsigned __int128 lhs, rhs;

	/* A mean of 0 ties only with another mean of exactly 0. */
	if (!a->count && !b->count)
		return 0;
	if (!a->count)
		return b->wait_ns ? -1 : 0;
	if (!b->count)
		return a->wait_ns ? 1 : 0;
	lhs = (unsigned __int128)a->wait_ns * b->count;
	rhs = (unsigned __int128)b->wait_ns * a->count;
	return lhs < rhs ? -1 : lhs > rhs;
}

int report__row_cmp(const struct report_row *a, const struct report_row *b,
		    enum sort_key sort)
{
	int c = 0;

	/* Largest first. */
	switch (sort) {
	case SORT_TOTAL:
		c = cmp_u64(b->wait_ns, a->wait_ns);
		break;
	case SORT_MEAN:
		c = cmp_mean(b, a);
		break;
	case SORT_MAX:
		c = cmp_u64(b->max_ns, a->max_ns);
		break;
	case SORT_COUNT:
		c = cmp_u64(b->count, a->count);
		break;
	}
	if (c)
		return c;
	/* QSP's tie-breaks: object, call site, type; then thread. */
	if ((c = cmp_u64(a->object, b->object)))
		return c;
	if ((c = cmp_u64(a->callsite, b->callsite)))
		return c;
	if ((c = cmp_u64(a->type, b->type)))
		return c;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->owner_tid < b->owner_tid ? -1 : a->owner_tid > b->owner_tid;
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
	size_t n_rows = 0;

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
	memcpy(sorted, entries, n * sizeof(*sorted));
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
			row->owner_tid = settings->per_thread && e->key.owner_tid
					 ? (int64_t)e->key.owner_tid
					 : REPORT_NO_TID;
		}
		row->count += e->count;
		row->wait_ns += e->wait_ns;
		row->failed += e->failed;
		if (e->max_ns > row->max_ns)
			row->max_ns = e->max_ns;
	}
	free(sorted);

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
	free(rows->rows);
	*rows = (struct report_rows){ 0 };
}
