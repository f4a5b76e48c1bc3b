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
 * Cardinality: at most max_series label sets have series of their own,
 * the top ones by wait time since first seen.  A label set with no room
 * is a candidate: its waits go to object="other", callsite="other" of
 * its process and type at once, and its wait is tallied; when its tally
 * passes the smallest series', that series is evicted (its counters
 * added to its "other", so no sum goes down) and the candidate gets a
 * series of its own, from 0.  An evicted label set never comes back (it
 * would restart from 0, which Prometheus reads as a reset): its 64-bit
 * hash is kept, and its waits go to "other".  Candidates are at most
 * max_series too; the smallest is forgotten for a new one.  Waits summed
 * under "other" this way are counted (syncprof_series_dropped_waits_total),
 * and so are evictions.  Rejected: keeping the first max_series seen (a
 * run's early, small label sets hid a later hot lock for good);
 * recomputing the top from totals at each scrape ("other" would go down
 * as a series left it).  The histogram keeps every other log2 bucket from 1 us to 17 s
 * (le = 2^10 .. 2^34 ns, 13 buckets and +Inf): a quarter of the kernel's
 * resolution, an exposition of ~20 lines per series.
 *
 * Memory: one struct metrics_series (~250 bytes and its labels) per
 * series or candidate, at most 3 * max_series + the process "other" ones
 * per type, and 8 bytes per evicted label set.
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

/* le = 2^(METRICS_FIRST_LOG2 + METRICS_STEP * i) ns. */
#define METRICS_FIRST_LOG2	10
#define METRICS_STEP		2
#define METRICS_BUCKETS		13	/* and +Inf */

enum series_state {
	SERIES_OWN,		/* exposed under its own labels */
	SERIES_OTHER,		/* an "other" series, exposed */
	SERIES_CANDIDATE,	/* tallied only; its waits are in "other" */
};

struct metrics_series {
	char *labels;		/* process\0type\0object\0callsite\0 */
	enum series_state state;
	uint64_t rank_ns;	/* wait since first seen, "other" part too */
	size_t labels_len;
	const char *label[4];
	uint64_t count;
	uint64_t wait_ns;
	uint64_t failed;
	uint64_t buckets[METRICS_BUCKETS + 1];	/* not cumulative; last: +Inf */
	uint64_t hist_total;
};

struct metrics {
	unsigned int max_series;
	struct metrics_series **series;	/* exposed, in the order they came */
	size_t n_series, cap;
	size_t n_own, n_other;	/* with labels of their own; "other" ones */
	struct metrics_series **cands;	/* candidates */
	size_t n_cands, cands_cap;
	htab_t index;		/* of struct metrics_series, by labels */
	htab_t evicted;		/* 64-bit hashes of evicted label sets */
	uint64_t dropped_waits;	/* waits summed under "other" for the bound */
	uint64_t evictions;
};

static const char *const label_names[4] = {
	"process", "type", "object", "callsite",
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
	m->max_series = max_series ? max_series : 1;
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

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_series; i++) {
		free(m->series[i]->labels);
		free(m->series[i]);
	}
	for (size_t i = 0; i < m->n_cands; i++) {
		free(m->cands[i]->labels);
		free(m->cands[i]);
	}
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

/* The labels as one key: four strings, each with its NUL. */
static char *labels_key(const char *const v[4], size_t *len)
{
	size_t n = 0, at = 0;
	char *key;

	for (int i = 0; i < 4; i++)
		n += strlen(v[i]) + 1;
	key = malloc(n);
	if (!key)
		return NULL;
	for (int i = 0; i < 4; i++) {
		size_t l = strlen(v[i]) + 1;

		memcpy(key + at, v[i], l);
		at += l;
	}
	*len = n;
	return key;
}

/*
 * The series of these labels: found, or made when create allows;
 * NULL when not found and not made (*err -ENOMEM if that was why).
 */
static struct metrics_series *metrics__find(struct metrics *m,
					    const char *const v[4],
					    bool create, enum series_state state,
					    int *err)
{
	struct metrics_series probe = { 0 }, *s, **slot;
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
	    !(s = calloc(1, sizeof(*s)))) {
		if (slot)
			htab_clear_slot(m->index, (void **)slot);
		free(probe.labels);
		if (create)
			*err = -ENOMEM;
		return NULL;
	}
	s->labels = probe.labels;
	s->labels_len = probe.labels_len;
	for (int i = 0; i < 4; i++) {
		s->label[i] = s->labels + at;
		at += strlen(s->label[i]) + 1;
	}
	s->state = state;
	*slot = s;
	if (state == SERIES_CANDIDATE)
		m->cands[m->n_cands++] = s;
	else
		m->series[m->n_series++] = s;
	return s;
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
	free(s->labels);
	free(s);
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
 * The "other" series of v's process and type (made while there is room,
 * else process="other" too); NULL only when out of memory.
 */
static struct metrics_series *metrics__other(struct metrics *m,
					     const char *const labels[4],
					     int *err)
{
	const char *v[4] = { labels[0], labels[1], "other", "other" };
	size_t before = m->n_series;
	struct metrics_series *s = metrics__find(m, v,
			m->n_other < m->max_series, SERIES_OTHER, err);

	if (!s && !*err) {
		v[0] = "other";
		s = metrics__find(m, v, true, SERIES_OTHER, err);
	}
	if (s && m->n_series > before)
		m->n_other++;
	return s;
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
 * A series out for a larger one: its counters into its "other" (which
 * only grows), its label set never exposed again.  0 or -ENOMEM.
 */
static int metrics__evict(struct metrics *m, struct metrics_series *s)
{
	int err = 0;
	struct metrics_series *other = metrics__other(m, s->label, &err);
	void **slot;

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

/*
 * The series a row of labels v counts in: its own, or an "other" one
 * (then *dropped); see the design comment.  NULL only with *err set.
 */
static struct metrics_series *metrics__series_of(struct metrics *m,
						 const char *const v[4],
						 uint64_t wait_ns,
						 bool *dropped, int *err)
{
	size_t before = m->n_series;
	struct metrics_series *s = metrics__find(m, v, false, SERIES_OWN, err);
	struct metrics_series *min;
	size_t len;
	char *key;
	bool gone;

	*dropped = false;
	if (s && s->state != SERIES_CANDIDATE)
		return s;
	if (!s) {
		key = labels_key(v, &len);
		if (!key) {
			*err = -ENOMEM;
			return NULL;
		}
		gone = htab_find(m->evicted, evicted_key(key, len)) != NULL;
		free(key);
		if (gone) {
			*dropped = true;
			return metrics__other(m, v, err);
		}
		if (m->n_own < m->max_series) {
			s = metrics__find(m, v, true, SERIES_OWN, err);
			if (s && m->n_series > before)
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
	    !array__grow(&m->series, &m->cap, m->n_series + 1,
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
	const char *v[4] = { row->process, row->type, row->object,
			     row->callsite };
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

static void write_labels(FILE *out, const struct metrics_series *s,
			 const char *le)
{
	fputc('{', out);
	for (int i = 0; i < 4; i++) {
		fprintf(out, "%s%s=\"", i ? "," : "", label_names[i]);
		write_value(out, s->label[i]);
		fputc('"', out);
	}
	if (le)
		fprintf(out, ",le=\"%s\"", le);
	fputc('}', out);
}

static void write_family(FILE *out, const char *name, const char *type,
			 const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int metrics__write(const struct metrics *m, const struct metrics_health *h,
		   FILE *out)
{
	write_family(out, "syncprof_lock_wait_seconds_total", "counter",
		     "Time threads spent blocked waiting on the lock.");
	for (size_t i = 0; i < m->n_series; i++) {
		fputs("syncprof_lock_wait_seconds_total", out);
		write_labels(out, m->series[i], NULL);
		fprintf(out, " %.9f\n", (double)m->series[i]->wait_ns * 1e-9);
	}
	write_family(out, "syncprof_lock_waits_total", "counter",
		     "Waits that ended with the lock (contended acquisitions).");
	for (size_t i = 0; i < m->n_series; i++) {
		fputs("syncprof_lock_waits_total", out);
		write_labels(out, m->series[i], NULL);
		fprintf(out, " %" PRIu64 "\n", m->series[i]->count);
	}
	write_family(out, "syncprof_lock_failed_total", "counter",
		     "Waits that ended without the lock (timeouts, failed "
		     "trylocks, errors).");
	for (size_t i = 0; i < m->n_series; i++) {
		fputs("syncprof_lock_failed_total", out);
		write_labels(out, m->series[i], NULL);
		fprintf(out, " %" PRIu64 "\n", m->series[i]->failed);
	}
	write_family(out, "syncprof_lock_wait_seconds", "histogram",
		     "Single waits by duration (the kernel's log2 buckets, "
		     "every other one).");
	for (size_t i = 0; i < m->n_series; i++) {
		const struct metrics_series *s = m->series[i];
		uint64_t cum = 0;
		char le[32];

		for (int b = 0; b <= METRICS_BUCKETS; b++) {
			cum += s->buckets[b];
			if (b < METRICS_BUCKETS)
				snprintf(le, sizeof(le), "%.10g",
					 (double)(1ull << (METRICS_FIRST_LOG2 +
							   METRICS_STEP * b)) * 1e-9);
			else
				strcpy(le, "+Inf");
			fputs("syncprof_lock_wait_seconds_bucket", out);
			write_labels(out, s, le);
			fprintf(out, " %" PRIu64 "\n", cum);
		}
		fputs("syncprof_lock_wait_seconds_sum", out);
		write_labels(out, s, NULL);
		fprintf(out, " %.9f\n", (double)s->wait_ns * 1e-9);
		fputs("syncprof_lock_wait_seconds_count", out);
		write_labels(out, s, NULL);
		fprintf(out, " %" PRIu64 "\n", s->hist_total);
	}
	write_family(out, "syncprof_dropped_total", "counter",
		     "Waits and events syncprof could not count, by cause.");
	for (size_t i = 0; i < h->n_drops; i++)
		fprintf(out, "syncprof_dropped_total{cause=\"%s\"} %" PRIu64 "\n",
			h->drop_causes[i], h->drops[i]);
	write_family(out, "syncprof_processes_followed", "gauge",
		     "Processes whose waits are counted now.");
	fprintf(out, "syncprof_processes_followed %zu\n", h->processes_followed);
	write_family(out, "syncprof_series", "gauge",
		     "Series of waits exposed, the \"other\" ones included.");
	fprintf(out, "syncprof_series %zu\n", m->n_series);
	write_family(out, "syncprof_series_dropped_waits_total", "counter",
		     "Waits summed under object=\"other\", callsite=\"other\" "
		     "because --max-series left their series no room "
		     "(evicted series' waits included).");
	fprintf(out, "syncprof_series_dropped_waits_total %" PRIu64 "\n",
		m->dropped_waits);
	write_family(out, "syncprof_series_evicted_total", "counter",
		     "Series given up for one with more wait time.");
	fprintf(out, "syncprof_series_evicted_total %" PRIu64 "\n",
		m->evictions);
	write_family(out, "syncprof_cpu_seconds_total", "counter",
		     "CPU time syncprof itself used, user and system.");
	fprintf(out, "syncprof_cpu_seconds_total %.6f\n", h->cpu_seconds);
	write_family(out, "syncprof_resident_memory_bytes", "gauge",
		     "syncprof's resident memory.");
	fprintf(out, "syncprof_resident_memory_bytes %" PRIu64 "\n",
		h->resident_bytes);
	cachemetrics__write(out);
	return ferror(out) ? -EIO : 0;
}
