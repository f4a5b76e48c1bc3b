// SPDX-License-Identifier: GPL-2.0
/*
 * Three sorted arrays (spans, call sites, objects), searched by bisection;
 * spans collect unsorted and are merged every time their count doubles,
 * so a long recording with few distinct rows stays small.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "linereader.h"
#include "locktype.h"
#include "names.h"
#include "sortorder.h"
#include "recnames.h"
#include "rectext.h"
#include "report.h"
#include "srcpath.h"
#include "text.h"

#define RECNAMES_VERSION	1
#define RECNAMES_FIELDS_MAX	10

struct recnames_site {
	uint64_t addr;
	struct symbol_info info;	/* strings owned */
	char *text;			/* the label's call-site part */
};

struct recnames_object {
	uint64_t addr;
	char *symbol;
};

struct recnames {
	struct recnames_span *spans;
	size_t n_spans, cap_spans, sealed;	/* spans[0, sealed): sorted */
	char **labels;				/* per span, once labelled */
	size_t n_labels;			/* spans when labelled */
	struct recnames_site *sites;
	size_t n_sites, cap_sites;
	struct recnames_object *objects;
	size_t n_objects, cap_objects;
};

int recnames__new(struct recnames **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void recnames__free_labels(struct recnames *n)
{
	if (n->labels)
		for (size_t i = 0; i < n->n_labels; i++)
			free(n->labels[i]);
	free(n->labels);
	n->labels = NULL;
	n->n_labels = 0;
}

static void recnames__free_site(struct recnames_site *s)
{
	free((char *)s->info.module);
	free((char *)s->info.function);
	free((char *)s->info.file);
	free(s->text);
}

void recnames__free(struct recnames *n)
{
	if (!n)
		return;
	recnames__free_labels(n);
	for (size_t i = 0; i < n->n_sites; i++)
		recnames__free_site(&n->sites[i]);
	for (size_t i = 0; i < n->n_objects; i++)
		free(n->objects[i].symbol);
	free(n->spans);
	free(n->sites);
	free(n->objects);
	free(n);
}

int recnames__span_cmp(const void *pa, const void *pb)
{
	const struct recnames_span *a = pa, *b = pb;
	int c;

	c = order__qsp(a->object, a->callsite, a->type, b->object, b->callsite,
		       b->type);
	return c ? c : order__u64(a->stack_id, b->stack_id);
}

/* Sorts and merges duplicates; labels, if any, are dropped. */
static void recnames__seal(struct recnames *n)
{
	size_t out = 0;

	if (n->sealed == n->n_spans)
		return;
	recnames__free_labels(n);
	qsort(n->spans, n->n_spans, sizeof(*n->spans), recnames__span_cmp);
	for (size_t i = 0; i < n->n_spans; i++)
		if (!out || recnames__span_cmp(&n->spans[out - 1], &n->spans[i]))
			n->spans[out++] = n->spans[i];
	n->n_spans = n->sealed = out;
}

int recnames__add(struct recnames *n, const struct sp_key *key)
{
	struct recnames_span s = {
		.object = key->object,
		.callsite = key->callsite,
		.stack_id = key->stack_id,
		.type = key->type,
	};

	/* The same span as the last one added: the common case. */
	if (n->n_spans && !recnames__span_cmp(&n->spans[n->n_spans - 1], &s))
		return 0;
	if (n->n_spans >= 2 * n->sealed + 1024)
		recnames__seal(n);
	if (array__grow(&n->spans, &n->cap_spans, n->n_spans + 1,
			sizeof(*n->spans)))
		return -ENOMEM;
	n->spans[n->n_spans++] = s;
	return 0;
}

size_t recnames__count(struct recnames *n)
{
	recnames__seal(n);
	return n->n_spans;
}

long recnames__find(struct recnames *n, const struct sp_key *key)
{
	struct recnames_span s = {
		.object = key->object,
		.callsite = key->callsite,
		.stack_id = key->stack_id,
		.type = key->type,
	};
	size_t lo = 0, hi;

	recnames__seal(n);
	hi = n->n_spans;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = recnames__span_cmp(&s, &n->spans[mid]);

		if (!c)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

const struct recnames_span *recnames__span(struct recnames *n, size_t i)
{
	recnames__seal(n);
	return i < n->n_spans ? &n->spans[i] : NULL;
}

static struct recnames_site *recnames__site(const struct recnames *n,
					    uint64_t addr)
{
	size_t lo = 0, hi = n->n_sites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->sites[mid].addr == addr)
			return &n->sites[mid];
		if (n->sites[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int recnames__callsite(struct recnames *n, uint64_t addr,
		       struct symbol_info *info)
{
	const struct recnames_site *s = recnames__site(n, addr);

	if (!s) {
		memset(info, 0, sizeof(*info));
		return -ENOENT;
	}
	*info = s->info;
	return 0;
}

const char *recnames__object(struct recnames *n, uint64_t addr)
{
	size_t lo = 0, hi = n->n_objects;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->objects[mid].addr == addr)
			return n->objects[mid].symbol;
		if (n->objects[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static char *strdup_or_null(const char *s, int *err)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy)
		*err = -ENOMEM;
	return copy;
}

/* Site and object lists from the spans, sorted, unnamed. */
static int recnames__collect(struct recnames *n)
{
	recnames__seal(n);
	/* Named again (a recording's checkpoints): the older names go. */
	for (size_t i = 0; i < n->n_sites; i++)
		recnames__free_site(&n->sites[i]);
	for (size_t i = 0; i < n->n_objects; i++)
		free(n->objects[i].symbol);
	n->n_sites = n->n_objects = 0;
	if (array__grow(&n->sites, &n->cap_sites, n->n_spans + 1,
			sizeof(*n->sites)) ||
	    array__grow(&n->objects, &n->cap_objects, n->n_spans + 1,
			sizeof(*n->objects)))
		return -ENOMEM;
	for (size_t i = 0; i < n->n_spans; i++) {
		n->sites[i] = (struct recnames_site){ .addr = n->spans[i].callsite };
		n->objects[i] = (struct recnames_object){ .addr = n->spans[i].object };
	}
	qsort(n->sites, n->n_spans, sizeof(*n->sites), order__u64_at);
	qsort(n->objects, n->n_spans, sizeof(*n->objects), order__u64_at);
	n->n_sites = n->n_objects = 0;
	for (size_t i = 0; i < n->n_spans; i++) {
		if (!n->n_sites || n->sites[n->n_sites - 1].addr != n->sites[i].addr)
			n->sites[n->n_sites++] = n->sites[i];
		if (!n->n_objects ||
		    n->objects[n->n_objects - 1].addr != n->objects[i].addr)
			n->objects[n->n_objects++] = n->objects[i];
	}
	return 0;
}

/* The call-site text of every site, with the sites' common root left out. */
static int recnames__site_texts(struct recnames *n)
{
	const char **files = calloc(n->n_sites + 1, sizeof(*files));
	size_t n_files = 0, strip;

	if (!files)
		return -ENOMEM;
	for (size_t i = 0; i < n->n_sites; i++) {
		const struct symbol_info *info = &n->sites[i].info;

		if (info->file && info->line && info->file[0] == '/')
			files[n_files++] = info->file;
	}
	strip = srcpath__common_dir(files, n_files);
	free(files);
	for (size_t i = 0; i < n->n_sites; i++) {
		char text[TEXT_MAX];

		names__callsite_text(&n->sites[i].info, n->sites[i].addr,
				      CALLSITE_LINE, strip, text, sizeof(text));
		free(n->sites[i].text);
		n->sites[i].text = strdup(text);
		if (!n->sites[i].text)
			return -ENOMEM;
	}
	return 0;
}

static int recnames__make_labels(struct recnames *n)
{
	int err;

	recnames__seal(n);
	err = recnames__site_texts(n);
	if (err)
		return err;
	recnames__free_labels(n);
	n->labels = calloc(n->n_spans + 1, sizeof(*n->labels));
	if (!n->labels)
		return -ENOMEM;
	n->n_labels = n->n_spans;
	for (size_t i = 0; i < n->n_spans; i++) {
		const struct recnames_span *s = &n->spans[i];
		const char *symbol = recnames__object(n, s->object);
		const char *site = recnames__callsite_text(n, s->callsite);
		char object[TEXT_MAX], raw[3 * TEXT_MAX];
		char label[3 * TEXT_MAX];

		if (symbol)
			snprintf(object, sizeof(object), "%s", symbol);
		else
			snprintf(object, sizeof(object), "0x%" PRIx64, s->object);
		snprintf(raw, sizeof(raw), "%s %s @ %s",
			 locktype__name(s->type), object, site);
		text__sanitize(raw, label, sizeof(label));
		n->labels[i] = strdup(label);
		if (!n->labels[i])
			return -ENOMEM;
	}
	return 0;
}

const char *recnames__callsite_text(struct recnames *n, uint64_t addr)
{
	const struct recnames_site *s = recnames__site(n, addr);

	return s && s->text ? s->text : "?";
}

const char *recnames__label(struct recnames *n, size_t i)
{
	recnames__seal(n);
	if (!n->labels && recnames__make_labels(n))
		return "?";
	return i < n->n_spans && n->labels[i] ? n->labels[i] : "?";
}

int recnames__resolve(struct recnames *n, struct symbolizer *sym)
{
	int err = recnames__collect(n);

	for (size_t i = 0; !err && i < n->n_sites; i++) {
		struct recnames_site *s = &n->sites[i];
		struct symbol_info info;

		symbolizer__callsite(sym, s->addr, &info);
		s->info = info;
		s->info.module = strdup_or_null(info.module, &err);
		s->info.function = strdup_or_null(info.function, &err);
		s->info.file = strdup_or_null(info.file, &err);
	}
	for (size_t i = 0; !err && i < n->n_objects; i++)
		n->objects[i].symbol = strdup_or_null(
			symbolizer__object(sym, n->objects[i].addr), &err);
	return err ? err : recnames__make_labels(n);
}

void recnames__write(struct recnames *n, FILE *f)
{
	recnames__seal(n);
	fprintf(f, "syncprof-names\t%d\n", RECNAMES_VERSION);
	for (size_t i = 0; i < n->n_sites; i++) {
		const struct symbol_info *info = &n->sites[i].info;

		fprintf(f, "site\t%" PRIx64 "\t", n->sites[i].addr);
		rectext__field(f, info->module);
		fprintf(f, "\t%" PRIx64 "\t", info->module_offset);
		rectext__field(f, info->function);
		fprintf(f, "\t%" PRIx64 "\t", info->function_offset);
		rectext__field(f, info->file);
		fprintf(f, "\t%u\n", info->line);
	}
	for (size_t i = 0; i < n->n_objects; i++) {
		fprintf(f, "object\t%" PRIx64 "\t", n->objects[i].addr);
		rectext__field(f, n->objects[i].symbol);
		fputc('\n', f);
	}
	for (size_t i = 0; i < n->n_spans; i++) {
		const struct recnames_span *s = &n->spans[i];

		fprintf(f, "span\t%u\t%" PRIx64 "\t%" PRIx64 "\t%" PRIx64 "\n",
			s->type, s->object, s->callsite, s->stack_id);
	}
}

static int parse_hex(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

static int parse_dec(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int recnames__parse(struct recnames *n, char **f, int nf)
{
	uint64_t a, b, c, d;
	int err = 0;

	if (!f[0])
		return -EINVAL;
	if (!strcmp(f[0], "site")) {
		struct recnames_site s = { 0 };

		if (nf != 8 || parse_hex(f[1], &s.addr) ||
		    parse_hex(f[3], &s.info.module_offset) ||
		    parse_hex(f[5], &s.info.function_offset) ||
		    parse_dec(f[7], &a) || a > UINT32_MAX ||
		    (n->n_sites && n->sites[n->n_sites - 1].addr >= s.addr))
			return -EINVAL;
		s.info.line = (unsigned int)a;
		s.info.module = strdup_or_null(f[2], &err);
		s.info.function = strdup_or_null(f[4], &err);
		s.info.file = strdup_or_null(f[6], &err);
		if (!err && array__grow(&n->sites, &n->cap_sites,
					n->n_sites + 1, sizeof(*n->sites)))
			err = -ENOMEM;
		if (err) {
			recnames__free_site(&s);
			return err;
		}
		n->sites[n->n_sites++] = s;
		return 0;
	}
	if (!strcmp(f[0], "object")) {
		struct recnames_object o = { 0 };

		if (nf != 3 || parse_hex(f[1], &o.addr) ||
		    (n->n_objects && n->objects[n->n_objects - 1].addr >= o.addr))
			return -EINVAL;
		o.symbol = strdup_or_null(f[2], &err);
		if (!err && array__grow(&n->objects, &n->cap_objects,
					n->n_objects + 1, sizeof(*n->objects)))
			err = -ENOMEM;
		if (err) {
			free(o.symbol);
			return err;
		}
		n->objects[n->n_objects++] = o;
		return 0;
	}
	if (!strcmp(f[0], "span")) {
		struct sp_key key = { 0 };

		if (nf != 5 || parse_dec(f[1], &a) || a >= SP_TYPE__COUNT ||
		    parse_hex(f[2], &b) || parse_hex(f[3], &c) ||
		    parse_hex(f[4], &d))
			return -EINVAL;
		key.type = (uint32_t)a;
		key.object = b;
		key.callsite = c;
		key.stack_id = d;
		return recnames__add(n, &key);
	}
	return 0;	/* a newer kind of line: skipped */
}

int recnames__load(const char *path, struct recnames **out)
{
	char *fields[RECNAMES_FIELDS_MAX], *line;
	struct recnames *n = NULL;
	struct linereader *lines;
	int err, nf, end;

	err = linereader__open(path, &lines);
	if (err)
		return err;
	err = recnames__new(&n);
	if (!err && (!(line = linereader__next(lines, NULL)) ||
		     rectext__split(line, fields, RECNAMES_FIELDS_MAX) != 2 ||
		     !fields[0] || !fields[1] ||
		     strcmp(fields[0], "syncprof-names") ||
		     atoi(fields[1]) != RECNAMES_VERSION))
		err = -EINVAL;
	while (!err && (line = linereader__next(lines, NULL))) {
		nf = rectext__split(line, fields, RECNAMES_FIELDS_MAX);
		err = nf < 0 ? nf : recnames__parse(n, fields, nf);
	}
	end = linereader__close(lines);
	if (!err)
		err = end;
	if (!err)
		err = recnames__make_labels(n);
	if (err) {
		recnames__free(n);
		return err;
	}
	*out = n;
	return 0;
}
