// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "linereader.h"
#include "recmeta.h"
#include "rectext.h"

#define RECMETA_FIELDS_MAX 12

static void recmeta__free_report(struct recmeta_report *r)
{
	free(r->findings_text);
	free(r->findings_json);
	free(r->weights);
	r->findings_text = r->findings_json = r->weights = NULL;
}

void recmeta__clear(struct recmeta *m)
{
	for (size_t i = 0; i < m->n_reports; i++)
		recmeta__free_report(&m->reports[i]);
	free(m->comm);
	free(m->exe);
	free(m->mode);
	free(m->cmdline);
	free(m->reports);
	free(m->threads);
	memset(m, 0, sizeof(*m));
}

int recmeta__set(char **field, const char *s)
{
	char *copy = NULL;

	if (s && !(copy = strdup(s)))
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

int recmeta__add_report(struct recmeta *m, const struct recmeta_report *r)
{
	struct recmeta_report *copy;

	if (array__grow(&m->reports, &m->cap_reports, m->n_reports + 1,
			sizeof(*m->reports)))
		return -ENOMEM;
	copy = &m->reports[m->n_reports];
	*copy = *r;
	copy->findings_text = copy->findings_json = copy->weights = NULL;
	if (recmeta__set(&copy->findings_text, r->findings_text) ||
	    recmeta__set(&copy->findings_json, r->findings_json) ||
	    recmeta__set(&copy->weights, r->weights)) {
		recmeta__free_report(copy);
		return -ENOMEM;
	}
	m->n_reports++;
	return 0;
}

int recmeta__add_thread(struct recmeta *m, uint32_t tid, const char *comm)
{
	struct recmeta_thread *t;

	if (m->n_threads && m->threads[m->n_threads - 1].tid >= tid)
		return -EINVAL;
	if (array__grow(&m->threads, &m->cap_threads, m->n_threads + 1,
			sizeof(*m->threads)))
		return -ENOMEM;
	t = &m->threads[m->n_threads++];
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	return 0;
}

const char *recmeta__thread_comm(const struct recmeta *m, uint32_t tid)
{
	size_t lo = 0, hi = m->n_threads;

	/* The main thread: its name is the process's, known from the start. */
	if (tid == (uint32_t)m->pid && m->comm)
		return m->comm;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->threads[mid].tid == tid)
			return m->threads[mid].comm[0] ? m->threads[mid].comm : NULL;
		if (m->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void recmeta__line(FILE *f, const char *key, const char *value)
{
	fprintf(f, "%s\t", key);
	rectext__field(f, value);
	fputc('\n', f);
}

static void recmeta__number(FILE *f, const char *key, uint64_t value)
{
	fprintf(f, "%s\t%" PRIu64 "\n", key, value);
}

void recmeta__write(const struct recmeta *m, FILE *f)
{
	fprintf(f, "syncprof-recording\t%d\n", RECMETA_VERSION);
	recmeta__number(f, "pid", (uint64_t)m->pid);
	recmeta__line(f, "comm", m->comm);
	recmeta__line(f, "exe", m->exe);
	recmeta__line(f, "mode", m->mode);
	recmeta__line(f, "cmdline", m->cmdline);
	recmeta__number(f, "attach_ns", m->attach_ns);
	recmeta__number(f, "end_ns", m->end_ns);
	recmeta__number(f, "calibration_ns", m->calibration_ns);
	recmeta__number(f, "calibration_emulated_ns", m->calibration_emulated_ns);
	recmeta__number(f, "calibration_stepped_ns", m->calibration_stepped_ns);
	recmeta__number(f, "map_size", m->map_size);
	recmeta__number(f, "ring_size", m->ring_size);
	recmeta__number(f, "events", m->events);
	recmeta__number(f, "lost", m->lost);
	if (m->partial)
		recmeta__number(f, "partial", m->partial);
	for (size_t i = 0; i < m->n_reports; i++) {
		const struct recmeta_report *r = &m->reports[i];

		fprintf(f, "report\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%"
			PRIu64 "\t%" PRIu64 "\n", r->sequence, r->first_window,
			r->last_window, r->start_ns, r->end_ns, r->dropped,
			r->unwind_stopped);
		fprintf(f, "report_more\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", r->sequence,
			r->abandoned, r->map_full, r->no_storage, r->nested,
			r->skipped, r->ring);
		if (r->wall_ns)
			fprintf(f, "report_wall\t%u\t%" PRIu64 "\n", r->sequence,
				r->wall_ns);
		if (r->findings_text || r->findings_json || r->weights) {
			fprintf(f, "report_findings\t%u\t", r->sequence);
			rectext__field(f, r->findings_text);
			fputc('\t', f);
			rectext__field(f, r->findings_json);
			fputc('\t', f);
			rectext__field(f, r->weights);
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < m->n_threads; i++) {
		fprintf(f, "thread\t%u\t", m->threads[i].tid);
		rectext__field(f, m->threads[i].comm);
		fputc('\n', f);
	}
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = parse_u64(s, &v);

	if (!err && v > UINT32_MAX)
		err = -EINVAL;
	*out = (uint32_t)v;
	return err;
}

/* One "key value..." line into m. */
static int recmeta__parse(struct recmeta *m, char **f, int n)
{
	static const struct {
		const char *key;
		size_t offset;
	} strings[] = {
		{ "comm", offsetof(struct recmeta, comm) },
		{ "exe", offsetof(struct recmeta, exe) },
		{ "mode", offsetof(struct recmeta, mode) },
		{ "cmdline", offsetof(struct recmeta, cmdline) },
	}, numbers[] = {
		{ "attach_ns", offsetof(struct recmeta, attach_ns) },
		{ "end_ns", offsetof(struct recmeta, end_ns) },
		{ "calibration_ns", offsetof(struct recmeta, calibration_ns) },
		{ "calibration_emulated_ns",
		  offsetof(struct recmeta, calibration_emulated_ns) },
		{ "calibration_stepped_ns",
		  offsetof(struct recmeta, calibration_stepped_ns) },
		{ "events", offsetof(struct recmeta, events) },
		{ "lost", offsetof(struct recmeta, lost) },
		{ "partial", offsetof(struct recmeta, partial) },
	};
	uint64_t v;

	if (!f[0])
		return -EINVAL;
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		if (!strcmp(f[0], strings[i].key))
			return n == 2 ? recmeta__set((char **)((char *)m +
					strings[i].offset), f[1]) : -EINVAL;
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		if (!strcmp(f[0], numbers[i].key))
			return n == 2 ? parse_u64(f[1], (uint64_t *)((char *)m +
					numbers[i].offset)) : -EINVAL;
	if (!strcmp(f[0], "pid")) {
		if (n != 2 || parse_u64(f[1], &v) || !v || v > INT32_MAX)
			return -EINVAL;
		m->pid = (pid_t)v;
		return 0;
	}
	if (!strcmp(f[0], "ring_size"))
		return n == 2 ? parse_u32(f[1], &m->ring_size) : -EINVAL;
	if (!strcmp(f[0], "map_size"))
		return n == 2 ? parse_u32(f[1], &m->map_size) : -EINVAL;
	if (!strcmp(f[0], "report_more")) {
		struct recmeta_report *r = NULL;
		uint32_t sequence;

		if (n != 8 || parse_u32(f[1], &sequence))
			return -EINVAL;
		for (size_t i = m->n_reports; i-- > 0 && !r;)
			if (m->reports[i].sequence == sequence)
				r = &m->reports[i];
		if (!r || parse_u64(f[2], &r->abandoned) ||
		    parse_u64(f[3], &r->map_full) ||
		    parse_u64(f[4], &r->no_storage) ||
		    parse_u64(f[5], &r->nested) || parse_u64(f[6], &r->skipped) ||
		    parse_u64(f[7], &r->ring))
			return -EINVAL;
		return 0;
	}
	if (!strcmp(f[0], "report_wall")) {
		uint32_t sequence;

		if (n != 3 || parse_u32(f[1], &sequence))
			return -EINVAL;
		for (size_t i = m->n_reports; i-- > 0;)
			if (m->reports[i].sequence == sequence)
				return parse_u64(f[2], &m->reports[i].wall_ns);
		return -EINVAL;
	}
	if (!strcmp(f[0], "report_findings")) {
		uint32_t sequence;

		if (n != 5 || parse_u32(f[1], &sequence))
			return -EINVAL;
		for (size_t i = m->n_reports; i-- > 0;) {
			struct recmeta_report *r = &m->reports[i];

			if (r->sequence != sequence)
				continue;
			return recmeta__set(&r->findings_text, f[2]) ?:
			       recmeta__set(&r->findings_json, f[3]) ?:
			       recmeta__set(&r->weights, f[4]);
		}
		return -EINVAL;
	}
	if (!strcmp(f[0], "report")) {
		struct recmeta_report r = { 0 };

		if (n != 8 || parse_u32(f[1], &r.sequence) ||
		    parse_u32(f[2], &r.first_window) ||
		    parse_u32(f[3], &r.last_window) ||
		    parse_u64(f[4], &r.start_ns) || parse_u64(f[5], &r.end_ns) ||
		    parse_u64(f[6], &r.dropped) ||
		    parse_u64(f[7], &r.unwind_stopped) ||
		    r.first_window > r.last_window)
			return -EINVAL;
		return recmeta__add_report(m, &r);
	}
	if (!strcmp(f[0], "thread")) {
		uint32_t tid;

		if (n != 3 || parse_u32(f[1], &tid))
			return -EINVAL;
		return recmeta__add_thread(m, tid, f[2]);
	}
	return 0;	/* a newer key: skipped */
}

int recmeta__load(const char *path, struct recmeta *m)
{
	char *fields[RECMETA_FIELDS_MAX], *line;
	struct linereader *lines;
	uint64_t version;
	int err, n, end;

	memset(m, 0, sizeof(*m));
	err = linereader__open(path, &lines);
	if (err)
		return err;
	if (!(line = linereader__next(lines, NULL)) ||
	    rectext__split(line, fields, RECMETA_FIELDS_MAX) != 2 ||
	    !fields[0] || strcmp(fields[0], "syncprof-recording") ||
	    parse_u64(fields[1], &version) || version != RECMETA_VERSION) {
		err = -EINVAL;
		goto out;
	}
	while (!err && (line = linereader__next(lines, NULL))) {
		n = rectext__split(line, fields, RECMETA_FIELDS_MAX);
		err = n < 0 ? n : recmeta__parse(m, fields, n);
	}
	if (!err && (!m->pid || !m->mode))
		err = -EINVAL;
out:
	end = linereader__close(lines);
	if (!err)
		err = end;
	if (err)
		recmeta__clear(m);
	return err;
}
