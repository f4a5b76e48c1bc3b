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
 * Cardinality: the first max_series label sets seen get series of their
 * own, for the life of the run (a series that came and went would
 * restart from 0, which Prometheus reads as a reset); later ones are
 * summed under object="other", callsite="other" of their process and
 * type.  The histogram keeps every other log2 bucket from 1 us to 17 s
 * (le = 2^10 .. 2^34 ns, 13 buckets and +Inf): a quarter of the kernel's
 * resolution, an exposition of ~20 lines per series.
 *
 * Memory: one struct metrics_series (~250 bytes and its labels) per
 * series, at most 2 * max_series + the process "other" ones per type.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/hashtab.h>

#include "array.h"
#include "metrics.h"

/* le = 2^(METRICS_FIRST_LOG2 + METRICS_STEP * i) ns. */
#define METRICS_FIRST_LOG2	10
#define METRICS_STEP		2
#define METRICS_BUCKETS		13	/* and +Inf */

struct metrics_series {
	char *labels;		/* process\0type\0object\0callsite\0 */
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
	struct metrics_series **series;	/* in the order they came */
	size_t n_series, cap;
	size_t n_own, n_other;	/* with labels of their own; "other" ones */
	htab_t index;		/* of struct metrics_series, by labels */
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

int metrics__new(unsigned int max_series, struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->max_series = max_series ? max_series : 1;
	m->index = htab_create_alloc(64, series_hash, series_eq, NULL, calloc,
				     free);
	if (!m->index) {
		free(m);
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
	free(m->series);
	htab_delete(m->index);
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
					    bool create, int *err)
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
	    array__grow(&m->series, &m->cap, m->n_series + 1,
			sizeof(*m->series)) ||
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
	*slot = s;
	m->series[m->n_series++] = s;
	return s;
}

int metrics__add(struct metrics *m, const struct metrics_row *row)
{
	const char *v[4] = { row->process, row->type, row->object,
			     row->callsite };
	struct metrics_series *s;
	size_t before = m->n_series;
	int err = 0;

	if (!row->count && !row->wait_ns && !row->failed)
		return 0;
	s = metrics__find(m, v, m->n_own < m->max_series, &err);
	if (s && m->n_series > before)
		m->n_own++;
	if (!s && !err) {
		v[2] = v[3] = "other";
		s = metrics__find(m, v, m->n_other < m->max_series, &err);
		if (!s && !err) {
			v[0] = "other";
			s = metrics__find(m, v, true, &err);
		}
		if (s && m->n_series > before)
			m->n_other++;
	}
	if (!s)
		return err;
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
	write_family(out, "syncprof_cpu_seconds_total", "counter",
		     "CPU time syncprof itself used, user and system.");
	fprintf(out, "syncprof_cpu_seconds_total %.6f\n", h->cpu_seconds);
	write_family(out, "syncprof_resident_memory_bytes", "gauge",
		     "syncprof's resident memory.");
	fprintf(out, "syncprof_resident_memory_bytes %" PRIu64 "\n",
		h->resident_bytes);
	return ferror(out) ? -EIO : 0;
}
