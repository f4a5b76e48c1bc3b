// SPDX-License-Identifier: GPL-2.0
/*
 * Counters that never go down, from rows that come and go.  Each read's
 * change (a delta: snapshot.c counts a folded row once) is named and
 * added to its series here; a series is never recomputed from totals.
 * Rejected: exposing the totals snapshot directly.  Its rows change keys
 * (an exited thread's rows fold, an exited process's addresses may no
 * longer resolve), and a series whose members move between "other" and
 * its own labels would go down; adding changes to the series a row names
 * now cannot.
 *
 * Cardinality: at most max_series series in all, the "other" ones
 * included.  A tenth of them (at least 2) is kept for "other" series:
 * one per process, class and type ({process, class, type,
 * object="other", callsite="other"}) while that room lasts, so a sum by
 * program or type still holds every wait, and then one per class
 * ({process="other", class, type="other", ...}, the last two slots), so
 * a sum by class always does.  The rest have labels of their own, the
 * top label sets by wait time since first seen.  A label set with no
 * room is a candidate: its waits go to "other" at once, and its wait is
 * tallied; when its tally passes the smallest series', that series is
 * evicted (its counters added to its "other", so no sum goes down) and
 * the candidate gets a series of its own, from 0.  An evicted label set
 * never comes back (it would restart from 0, which Prometheus reads as a
 * reset): its 64-bit hash is kept, and its waits go to "other".
 * Candidates are at most max_series too; the smallest is forgotten for a
 * new one.  Waits summed under "other" this way are counted
 * (syncprof_series_dropped_waits_total), and so are evictions.
 * Rejected: keeping the first max_series seen (a run's early, small
 * label sets hid a later hot lock for good); recomputing the top from
 * totals at each scrape ("other" would go down as a series left it);
 * "other" series outside the bound (one per program of a busy host: 916
 * series under a bound of 500); only one "other" per class (a program
 * whose first waits came before its series had room lost them from its
 * sums).
 *
 * The histogram keeps every other log2 bucket from 1 us to 17 s (le =
 * 2^10 .. 2^34 ns, 13 buckets and +Inf): a quarter of the kernel's
 * resolution, an exposition of ~20 lines per series (le written with
 * ten significant digits, as the first version of these series did).  Each series' label
 * text is escaped once, when it is made: a scrape copies it.
 *
 * Memory: one struct metrics_series (~250 bytes and its labels, twice)
 * per series or candidate, at most 2 * max_series, and 8 bytes per
 * evicted label set.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/hashtab.h>

#include "array.h"
#include "cachemetrics.h"
#include "metrics.h"
#include "promtext.h"

/* le = 2^(METRICS_FIRST_LOG2 + METRICS_STEP * i) ns. */
#define METRICS_FIRST_LOG2	10
#define METRICS_STEP		2
#define METRICS_BUCKETS		13	/* and +Inf */
#define METRICS_LABELS		5

enum series_state {
	SERIES_OWN,		/* exposed under its own labels */
	SERIES_OTHER,		/* a class's "other" series, exposed */
	SERIES_CANDIDATE,	/* tallied only; its waits are in "other" */
};

struct metrics_series {
	char *labels;		/* process\0class\0type\0object\0callsite\0 */
	size_t labels_len;
	const char *label[METRICS_LABELS];
	char *text;		/* process="...",class="...",... escaped */
	size_t text_len;
	enum series_state state;
	uint64_t rank_ns;	/* wait since first seen, "other" part too */
	uint64_t count;
	uint64_t wait_ns;
	uint64_t failed;
	uint64_t buckets[METRICS_BUCKETS + 1];	/* not cumulative; last: +Inf */
	uint64_t hist_total;
};

struct metrics {
	unsigned int max_series;
	size_t own_max;		/* series with labels of their own */
	size_t other_max;	/* "other" ones of a process, class and type */
	struct metrics_series **series;	/* exposed, in the order they came */
	size_t n_series, cap;
	size_t n_own, n_other;	/* with labels of their own; "other" of a
				   process (the rest: of a class) */
	struct metrics_series **cands;	/* candidates */
	size_t n_cands, cands_cap;
	htab_t index;		/* of struct metrics_series, by labels */
	htab_t evicted;		/* 64-bit hashes of evicted label sets */
	uint64_t dropped_waits;	/* waits summed under "other" for the bound */
	uint64_t evictions;
};

static const char *const label_names[METRICS_LABELS] = {
	"process", "class", "type", "object", "callsite",
};

/* The le of each bucket but +Inf, as the exposition writes it. */
static const char *const bucket_le[METRICS_BUCKETS] = {
	"1.024e-06", "4.096e-06", "1.6384e-05", "6.5536e-05", "0.000262144",
	"0.001048576", "0.004194304", "0.016777216", "0.067108864",
	"0.268435456", "1.073741824", "4.294967296", "17.17986918",
};

static hashval_t series_hash(const void *entry)
{
	const struct metrics_series *s = entry;

	return iterative_hash(s->labels, s->labels_len, 0);
}

static int series_eq(const void *a, const void *b)
{
	const struct metrics_series *x = a, *y = b;

	return x->labels_len == y->labels_len &&
	       !memcmp(x->labels, y->labels, x->labels_len);
}

/* The evicted set holds hashes as pointers: never 0 (an empty slot). */
static void *evicted_key(const char *labels, size_t len)
{
	uint64_t h = ((uint64_t)iterative_hash(labels, len, 0) << 32) |
		     iterative_hash(labels, len, 0x9e3779b9u);

	return (void *)(uintptr_t)(h | 1);
}

static hashval_t evicted_hash(const void *entry)
{
	return (hashval_t)(uintptr_t)entry;
}

static int evicted_eq(const void *a, const void *b)
{
	return a == b;
}

int metrics__new(unsigned int max_series, struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->max_series = max_series < METRICS_MIN_SERIES ? METRICS_MIN_SERIES
							: max_series;
	/* A tenth for "other", two of it for the classes' own. */
	m->other_max = m->max_series / 10 > 2 ? m->max_series / 10 - 2 : 0;
	m->own_max = m->max_series - m->other_max - 2;
	m->index = htab_create_alloc(64, series_hash, series_eq, NULL, calloc,
				     free);
	m->evicted = htab_create_alloc(16, evicted_hash, evicted_eq, NULL,
				       calloc, free);
	if (!m->index || !m->evicted) {
		metrics__free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

static void series__free(struct metrics_series *s)
{
	free(s->labels);
	free(s->text);
	free(s);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_series; i++)
		series__free(m->series[i]);
	for (size_t i = 0; i < m->n_cands; i++)
		series__free(m->cands[i]);
	free(m->series);
	free(m->cands);
	if (m->index)
		htab_delete(m->index);
	if (m->evicted)
		htab_delete(m->evicted);
	free(m);
}

size_t metrics__series(const struct metrics *m)
{
	return m->n_series;
}

/* The labels as one key: the strings, each with its NUL. */
static char *labels_key(const char *const v[METRICS_LABELS], size_t *len)
{
	size_t n = 0, at = 0;
	char *key;

	for (int i = 0; i < METRICS_LABELS; i++)
		n += strlen(v[i]) + 1;
	key = malloc(n);
	if (!key)
		return NULL;
	for (int i = 0; i < METRICS_LABELS; i++) {
		size_t l = strlen(v[i]) + 1;

		memcpy(key + at, v[i], l);
		at += l;
	}
	*len = n;
	return key;
}

/* A label value, escaped as the exposition format wants. */
static void write_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/* s->text: its labels as the exposition writes them.  0 or -ENOMEM. */
static int series__render(struct metrics_series *s)
{
	FILE *f = open_memstream(&s->text, &s->text_len);

	if (!f)
		return -ENOMEM;
	for (int i = 0; i < METRICS_LABELS; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", label_names[i]);
		write_value(f, s->label[i]);
		fputc('"', f);
	}
	if (fclose(f)) {
		free(s->text);
		s->text = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * The series of these labels: found, or made when create allows;
 * NULL when not found and not made (*err -ENOMEM if that was why).
 */
static struct metrics_series *metrics__find(struct metrics *m,
					    const char *const v[METRICS_LABELS],
					    bool create, enum series_state state,
					    int *err)
{
	struct metrics_series probe = { 0 }, *s = NULL, **slot;
	size_t at = 0;

	probe.labels = labels_key(v, &probe.labels_len);
	if (!probe.labels) {
		*err = -ENOMEM;
		return NULL;
	}
	slot = (struct metrics_series **)htab_find_slot(m->index, &probe,
			create ? INSERT : NO_INSERT);
	if (slot && *slot) {
		free(probe.labels);
		return *slot;
	}
	if (!create || !slot ||
	    (state == SERIES_CANDIDATE ?
	     array__grow(&m->cands, &m->cands_cap, m->n_cands + 1,
			 sizeof(*m->cands)) :
	     array__grow(&m->series, &m->cap, m->n_series + 1,
			 sizeof(*m->series))) ||
	    !(s = calloc(1, sizeof(*s))))
		goto fail;
	s->labels = probe.labels;
	s->labels_len = probe.labels_len;
	for (int i = 0; i < METRICS_LABELS; i++) {
		s->label[i] = s->labels + at;
		at += strlen(s->label[i]) + 1;
	}
	if (series__render(s))
		goto fail;
	s->state = state;
	*slot = s;
	if (state == SERIES_CANDIDATE)
		m->cands[m->n_cands++] = s;
	else
		m->series[m->n_series++] = s;
	return s;
fail:
	if (slot)
		htab_clear_slot(m->index, (void **)slot);
	free(probe.labels);
	free(s);
	if (create)
		*err = -ENOMEM;
	return NULL;
}

/* Out of the index and of list (n items), and freed. */
static void metrics__drop(struct metrics *m, struct metrics_series *s,
			  struct metrics_series **list, size_t *n)
{
	htab_remove_elt(m->index, s);
	for (size_t i = 0; i < *n; i++) {
		if (list[i] == s) {
			memmove(list + i, list + i + 1,
				(*n - i - 1) * sizeof(*list));
			(*n)--;
			break;
		}
	}
	series__free(s);
}

/* The smallest by rank_ns of list's items in state; NULL if none. */
static struct metrics_series *metrics__smallest(struct metrics_series **list,
						size_t n,
						enum series_state state)
{
	struct metrics_series *min = NULL;

	for (size_t i = 0; i < n; i++)
		if (list[i]->state == state &&
		    (!min || list[i]->rank_ns < min->rank_ns))
			min = list[i];
	return min;
}

/*
 * The labels of the "other" series of v's process, class and type, or
 * (process NULL) of its class.
 */
static void other_labels(const char *const v[METRICS_LABELS], bool process,
			 const char *out[METRICS_LABELS])
{
	out[0] = process ? v[0] : "other";
	out[1] = v[1];
	out[2] = process ? v[2] : "other";
	out[3] = out[4] = "other";
}

/* Adds from's counters to s's. */
static void series__add(struct metrics_series *s,
			const struct metrics_series *from)
{
	s->count += from->count;
	s->wait_ns += from->wait_ns;
	s->failed += from->failed;
	s->hist_total += from->hist_total;
	for (int b = 0; b <= METRICS_BUCKETS; b++)
		s->buckets[b] += from->buckets[b];
}

/*
 * The "other" series of a label set v: of its process, class and type
 * while there is room for those, else of its class (always: two at
 * most).  NULL only with *err set.
 */
static struct metrics_series *metrics__other(struct metrics *m,
					     const char *const v[METRICS_LABELS],
					     int *err)
{
	const char *o[METRICS_LABELS];
	size_t before = m->n_series;
	struct metrics_series *s;

	other_labels(v, true, o);
	s = metrics__find(m, o, m->n_other < m->other_max, SERIES_OTHER, err);
	if (s && m->n_series > before)
		m->n_other++;
	if (s || *err)
		return s;
	other_labels(v, false, o);
	return metrics__find(m, o, true, SERIES_OTHER, err);
}

/*
 * A series out for room: its counters into its "other" (which only
 * grows), its label set never exposed again.  0 or -ENOMEM.
 */
static int metrics__evict(struct metrics *m, struct metrics_series *s)
{
	struct metrics_series *other;
	void **slot;
	int err = 0;

	other = metrics__other(m, s->label, &err);
	if (!other)
		return err;
	slot = htab_find_slot(m->evicted, evicted_key(s->labels,
						      s->labels_len), INSERT);
	if (!slot)
		return -ENOMEM;
	*slot = evicted_key(s->labels, s->labels_len);
	series__add(other, s);
	m->dropped_waits += s->count + s->failed;
	m->evictions++;
	m->n_own--;
	metrics__drop(m, s, m->series, &m->n_series);
	return 0;
}

/* Whether the label set v lost its series for good. */
static int metrics__was_evicted(struct metrics *m,
				const char *const v[METRICS_LABELS],
				bool *gone)
{
	size_t len;
	char *key = labels_key(v, &len);

	if (!key)
		return -ENOMEM;
	*gone = htab_find(m->evicted, evicted_key(key, len)) != NULL;
	free(key);
	return 0;
}

/*
 * The series a row of labels v counts in: its own, or its class's
 * "other" (then *dropped); see the design comment.  NULL only with *err
 * set.
 */
static struct metrics_series *metrics__series_of(struct metrics *m,
						 const char *const v[METRICS_LABELS],
						 uint64_t wait_ns,
						 bool *dropped, int *err)
{
	struct metrics_series *s = metrics__find(m, v, false, SERIES_OWN, err);
	struct metrics_series *min;
	bool gone;

	*dropped = false;
	if (s && s->state != SERIES_CANDIDATE)
		return s;
	if (!s) {
		*err = metrics__was_evicted(m, v, &gone);
		if (*err)
			return NULL;
		if (gone) {
			*dropped = true;
			return metrics__other(m, v, err);
		}
		if (m->n_own < m->own_max) {
			s = metrics__find(m, v, true, SERIES_OWN, err);
			if (s)
				m->n_own++;
			return s;
		}
		if (m->n_cands >= m->max_series)
			metrics__drop(m, metrics__smallest(m->cands, m->n_cands,
							   SERIES_CANDIDATE),
				      m->cands, &m->n_cands);
		s = metrics__find(m, v, true, SERIES_CANDIDATE, err);
		if (!s)
			return NULL;
	}
	s->rank_ns += wait_ns;
	min = metrics__smallest(m->series, m->n_series, SERIES_OWN);
	if (min && s->rank_ns > min->rank_ns &&
	    !array__grow(&m->series, &m->cap, m->n_series + 2,
			 sizeof(*m->series))) {
		*err = metrics__evict(m, min);
		if (*err)
			return NULL;
		/* From the candidates to the series, from 0. */
		for (size_t i = 0; i < m->n_cands; i++) {
			if (m->cands[i] == s) {
				m->cands[i] = m->cands[--m->n_cands];
				break;
			}
		}
		s->state = SERIES_OWN;
		m->series[m->n_series++] = s;
		m->n_own++;
		/* Its rank counted this row already. */
		s->rank_ns -= wait_ns;
		return s;
	}
	*dropped = true;
	return metrics__other(m, v, err);
}

int metrics__add(struct metrics *m, const struct metrics_row *row)
{
	const char *v[METRICS_LABELS] = {
		row->process, row->class, row->type, row->object,
		row->callsite,
	};
	struct metrics_series *s;
	bool dropped;
	int err = 0;

	if (!row->count && !row->wait_ns && !row->failed)
		return 0;
	s = metrics__series_of(m, v, row->wait_ns, &dropped, &err);
	if (!s)
		return err ? err : -ENOMEM;
	if (dropped)
		m->dropped_waits += row->count + row->failed;
	else
		s->rank_ns += row->wait_ns;
	s->count += row->count;
	s->wait_ns += row->wait_ns;
	s->failed += row->failed;
	for (size_t k = 0; row->hist && k < SP_HIST_SLOTS; k++) {
		size_t b = 0;

		if (!row->hist[k])
			continue;
		while (b < METRICS_BUCKETS &&
		       k > (size_t)(METRICS_FIRST_LOG2 + METRICS_STEP * b))
			b++;
		/* The kernel's last slot is open: only +Inf holds it. */
		if (k == SP_HIST_SLOTS - 1)
			b = METRICS_BUCKETS;
		s->buckets[b] += row->hist[k];
		s->hist_total += row->hist[k];
	}
	return 0;
}

/*
 * A scrape's lines, built in memory and written a chunk at a time: the
 * exposition is ~20 lines per series, and stdio's formatting per number
 * was most of a scrape's cost.
 */
struct metrics_out {
	FILE *out;
	char *data;
	size_t len, cap;
	int err;
};

#define METRICS_FLUSH	(64 * 1024)

static void out__put(struct metrics_out *o, const char *text, size_t n)
{
	if (o->err)
		return;
	if (array__grow(&o->data, &o->cap, o->len + n, 1)) {
		o->err = -ENOMEM;
		return;
	}
	memcpy(o->data + o->len, text, n);
	o->len += n;
}

static void out__str(struct metrics_out *o, const char *text)
{
	out__put(o, text, strlen(text));
}

/* v in decimal, at least width digits (leading zeros). */
static void out__u64(struct metrics_out *o, uint64_t v, int width)
{
	char digits[24];
	size_t at = sizeof(digits);

	do {
		digits[--at] = (char)('0' + v % 10);
		v /= 10;
		width--;
	} while (v || width > 0);
	out__put(o, digits + at, sizeof(digits) - at);
}

static void out__flush(struct metrics_out *o)
{
	if (!o->err && o->len && fwrite(o->data, 1, o->len, o->out) != o->len)
		o->err = -EIO;
	o->len = 0;
}

/* name{labels[,le="le"]} */
static void out__head(struct metrics_out *o, const char *name,
		      const struct metrics_series *s, const char *le)
{
	out__str(o, name);
	out__put(o, "{", 1);
	out__put(o, s->text, s->text_len);
	if (le) {
		out__put(o, ",le=\"", 5);
		out__str(o, le);
		out__put(o, "\"", 1);
	}
	out__put(o, "} ", 2);
}

static void out__u64_line(struct metrics_out *o, uint64_t v)
{
	out__u64(o, v, 1);
	out__put(o, "\n", 1);
}

/* ns as seconds, to the nanosecond. */
static void out__seconds_line(struct metrics_out *o, uint64_t ns)
{
	out__u64(o, ns / UINT64_C(1000000000), 1);
	out__put(o, ".", 1);
	out__u64(o, ns % UINT64_C(1000000000), 9);
	out__put(o, "\n", 1);
}

/* Which value of a series a counter family shows. */
enum metrics_value {
	VALUE_WAIT,
	VALUE_COUNT,
	VALUE_FAILED,
};

static void metrics__write_counter(const struct metrics *m,
				   struct metrics_out *o, const char *name,
				   enum metrics_value value)
{
	for (size_t i = 0; i < m->n_series; i++) {
		const struct metrics_series *s = m->series[i];

		out__head(o, name, s, NULL);
		if (value == VALUE_WAIT)
			out__seconds_line(o, s->wait_ns);
		else
			out__u64_line(o, value == VALUE_COUNT ? s->count
							      : s->failed);
		if (o->len >= METRICS_FLUSH)
			out__flush(o);
	}
	out__flush(o);
}

static void metrics__write_histogram(const struct metrics_series *s,
				     struct metrics_out *o)
{
	uint64_t cum = 0;

	for (int b = 0; b <= METRICS_BUCKETS; b++) {
		cum += s->buckets[b];
		out__head(o, "syncprof_lock_wait_seconds_bucket", s,
			  b < METRICS_BUCKETS ? bucket_le[b] : "+Inf");
		out__u64_line(o, cum);
	}
	out__head(o, "syncprof_lock_wait_seconds_sum", s, NULL);
	out__seconds_line(o, s->wait_ns);
	out__head(o, "syncprof_lock_wait_seconds_count", s, NULL);
	out__u64_line(o, s->hist_total);
	if (o->len >= METRICS_FLUSH)
		out__flush(o);
}

/*
 * --duty: the lock series count the calls entered in the windows, exactly;
 * the whole run's is an estimate the reader makes, by the windows' share.
 */
static void metrics__write_duty(const struct metrics_health *h, FILE *out)
{
	promtext__one(out, "syncprof_duty_percent", "gauge",
		      "--duty: the share of each period full mode's "
		      "probes count; the syncprof_lock_* series count the "
		      "calls entered in these windows only. The whole "
		      "run's rate is estimated as rate(x) * "
		      "rate(syncprof_duty_seconds_total) / "
		      "rate(syncprof_duty_window_seconds_total).",
		      h->duty_pct);
	promtext__one_real(out, "syncprof_duty_window_seconds_total", "counter",
			   "--duty: the time the windows were open.",
			   h->duty_window_seconds);
	promtext__one_real(out, "syncprof_duty_seconds_total", "counter",
			   "--duty: the time since the probes went live.",
			   h->duty_seconds);
	promtext__one(out, "syncprof_duty_cut_total", "counter",
		      "--duty: calls and holds still going when their "
		      "probes left, not counted (not lost: outside the "
		      "sample).", h->duty_cut);
}

/* One family of a charge table's rows: only --blame's so far. */
static void blame_table_metric(FILE *out, const char *name,
			       const char *type, const char *help,
			       uint64_t value)
{
	promtext__family(out, name, type, help);
	fprintf(out, "%s{table=\"blame\"} %" PRIu64 "\n", name, value);
}

int metrics__write(const struct metrics *m, const struct metrics_health *h,
		   FILE *out)
{
	struct metrics_out o = { .out = out };

	promtext__family(out, "syncprof_lock_wait_seconds_total", "counter",
			 "Time threads spent blocked waiting on the lock "
			 "(class=\"lock\") or for the event (class=\"event\").");
	metrics__write_counter(m, &o, "syncprof_lock_wait_seconds_total",
			       VALUE_WAIT);
	promtext__family(out, "syncprof_lock_waits_total", "counter",
			 "Waits that ended with the lock (contended "
			 "acquisitions).");
	metrics__write_counter(m, &o, "syncprof_lock_waits_total", VALUE_COUNT);
	promtext__family(out, "syncprof_lock_failed_total", "counter",
			 "Waits that ended without the lock (timeouts, failed "
			 "trylocks, errors).");
	metrics__write_counter(m, &o, "syncprof_lock_failed_total",
			       VALUE_FAILED);
	promtext__family(out, "syncprof_lock_wait_seconds", "histogram",
			 "Single waits by duration (the kernel's log2 "
			 "buckets, every other one).");
	for (size_t i = 0; i < m->n_series; i++)
		metrics__write_histogram(m->series[i], &o);
	out__flush(&o);
	free(o.data);
	if (o.err)
		return o.err;
	promtext__family(out, "syncprof_dropped_total", "counter",
			 "Waits and events syncprof could not count, by cause.");
	for (size_t i = 0; i < h->n_drops; i++)
		fprintf(out, "syncprof_dropped_total{cause=\"%s\"} %" PRIu64 "\n",
			h->drop_causes[i], h->drops[i]);
	promtext__family(out, "syncprof_charges_lost_total", "counter",
			 "Records of counted waits a full kernel table could "
			 "not keep (no wait lost): a wait's charge to the "
			 "release that ended it (blame), a part charged to a "
			 "hold (caused, for the findings).");
	fprintf(out, "syncprof_charges_lost_total{table=\"blame\"} %" PRIu64
		"\nsyncprof_charges_lost_total{table=\"caused\"} %" PRIu64 "\n",
		h->charges_lost[0], h->charges_lost[1]);
	promtext__family(out, "syncprof_kernel_entries", "gauge",
			 "Entries in the kernel's tables at the last read: "
			 "rows of waits (the bound is --map-size), stacks "
			 "made since the read before (drained at each read).");
	fprintf(out, "syncprof_kernel_entries{table=\"rows\"} %" PRIu64
		"\nsyncprof_kernel_entries{table=\"stacks\"} %" PRIu64 "\n",
		h->kernel_rows, h->kernel_stacks);
	promtext__one(out, "syncprof_processes_followed", "gauge",
		      "Processes whose waits are counted now.",
		      h->processes_followed);
	promtext__one(out, "syncprof_series", "gauge",
		      "Series of waits exposed, the \"other\" ones "
		      "included.", m->n_series);
	promtext__one(out, "syncprof_series_max", "gauge",
		      "The bound on syncprof_series (--max-series).",
		      m->max_series);
	promtext__one(out, "syncprof_series_dropped_waits_total", "counter",
		      "Waits summed under a class's \"other\" series "
		      "because --max-series left their series no room "
		      "(evicted series' waits included).",
		      m->dropped_waits);
	promtext__one(out, "syncprof_series_evicted_total", "counter",
		      "Series given up for one with more wait time.",
		      m->evictions);
	promtext__one_real(out, "syncprof_cpu_seconds_total", "counter",
			   "CPU time syncprof itself used, user and system.",
			   h->cpu_seconds);
	promtext__family(out, "syncprof_serve_loop_seconds_total", "counter",
			 "CPU time the loop that reads the probes spent on "
			 "--serve's requests: reads for them, and the "
			 "profiles' copies and names (the rest is the "
			 "server's threads').");
	fprintf(out, "syncprof_serve_loop_seconds_total{work=\"read\"} %.6f\n"
		"syncprof_serve_loop_seconds_total{work=\"profiles\"} %.6f\n",
		h->loop_read_seconds, h->loop_profile_seconds);
	promtext__family(out, "syncprof_exited_rows", "gauge",
			 "Rows of exited threads kept: of processes still "
			 "named (the newest exited), and of those forgotten, "
			 "merged by program, call site and stack.");
	fprintf(out, "syncprof_exited_rows{processes=\"named\"} %zu\n",
		h->exited_rows - h->exited_rows_forgotten);
	fprintf(out, "syncprof_exited_rows{processes=\"forgotten\"} %zu\n",
		h->exited_rows_forgotten);
	promtext__one(out, "syncprof_exited_rows_merged_total", "counter",
		      "Rows of forgotten processes merged into the "
		      "\"other\" row of their lock type by the bound on "
		      "such rows.", h->exited_rows_merged);
	blame_table_metric(out, "syncprof_charge_rows_kept", "gauge",
			 "Rows of a charge table (blame: --blame's) of exited "
			 "threads and processes, taken out of the kernel's "
			 "table and kept.",
			   h->blame_rows_kept);
	blame_table_metric(out, "syncprof_charge_rows_merged_total", "counter",
			 "Rows of a charge table merged into the \"other\" "
			 "row of their lock type by the bound on the rows "
			 "kept.",
			   h->blame_rows_merged);
	blame_table_metric(out, "syncprof_charge_rows_own", "gauge",
			 "Of the rows of a charge table kept, those of the "
			 "newest exited threads and processes, under their "
			 "own keys (process and PID named).",
			   h->blame_rows_own);
	blame_table_metric(out, "syncprof_charge_rows_own_max", "gauge",
			 "The bound on syncprof_charge_rows_own: beyond it "
			 "the oldest are folded by program.",
			   h->blame_rows_own_max);
	blame_table_metric(out, "syncprof_charge_rows_folded_total", "counter",
			 "Rows of a charge table folded from their own keys "
			 "into their program's rows (process 0) by the bound "
			 "on own rows, their charges kept.",
			   h->blame_rows_folded);
	promtext__one(out, "syncprof_resident_memory_bytes", "gauge",
		      "syncprof's resident memory.", h->resident_bytes);
	if (h->cache)
		cachemetrics__write(out, h->cache);
	if (h->duty_pct)
		metrics__write_duty(h, out);
	return ferror(out) ? -EIO : 0;
}
