// SPDX-License-Identifier: GPL-2.0
/*
 * The table opens with a handful of lines: the first finding whole (its
 * line, its evidence, its fix), the next two as one line each; JSON has
 * them all.  Names come from the same symbolizer as the rows': each
 * finding is named as a row of one object at its site would be.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "findout.h"
#include "jsonout.h"
#include "locktype.h"
#include "report.h"
#include "sortorder.h"
#include "text.h"
#include "whyrows.h"

#define FINDOUT_TABLE_MAX 3	/* findings the table shows */

static void wait_of(struct findings_wait *w, const struct snapshot_entry *e)
{
	*w = (struct findings_wait){
		.type = e->key.type,
		.event = locktype__class_of(e->key.type) == LOCK_CLASS_EVENT,
		.object = e->key.object,
		.callsite = e->key.callsite,
		.pid = e->key.pid,
		.tid = e->key.tid,
		.count = e->count,
		.wait_ns = e->wait_ns,
		.max_ns = e->max_ns,
		.futile = e->futile,
		.hold_count = e->hold_count,
		.hold_ns = e->hold_ns,
		.hold_max_ns = e->hold_max_ns,
	};
}

struct known_lock {
	uint32_t type;
	uint64_t object;
	char *name;		/* NULL: none found */
};

struct findout_known {
	struct known_lock *locks;
	size_t n, cap;
};

struct findout_known *findout__known_new(void)
{
	return calloc(1, sizeof(struct findout_known));
}

void findout__known_free(struct findout_known *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->locks[i].name);
	free(k->locks);
	free(k);
}

static struct known_lock *known_find(const struct findout_known *k,
				     uint32_t type, uint64_t object)
{
	for (size_t i = 0; k && i < k->n; i++)
		if (k->locks[i].type == type && k->locks[i].object == object)
			return &k->locks[i];
	return NULL;
}

/*
 * Locks alike, one finding (findings.c's merge_alike): the lock is
 * "[N]" and the largest one's address, as a coalesced row's.
 */
static bool merged(const struct finding *x)
{
	return x->n_objects > 1 && x->category != FINDING_HOT_STRIPE;
}

/*
 * Names the findings as rows of one object at their sites; a lock
 * named before takes its name from known (its row as one of several
 * objects: names__rows names only its site), a new one is kept there.
 */
static int findout__name(struct findout *f, struct symbolizer *sym,
			 struct findout_known *known)
{
	struct report_rows rows = { 0 };
	int err;

	if (!f->n || !sym)
		return 0;
	rows.rows = calloc(f->n, sizeof(*rows.rows));
	if (!rows.rows)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		rows.rows[i] = (struct report_row){
			.type = f->list[i].type,
			.object = f->list[i].object,
			.n_objects = merged(&f->list[i]) ||
				     known_find(known, f->list[i].type,
						f->list[i].object) ? 2 : 1,
			.callsite = f->list[i].site,
			.tid = REPORT_NO_TID,
			.pid = f->list[i].pid ? f->list[i].pid : REPORT_NO_TID,
			.owner_tid = REPORT_NO_TID,
		};
	rows.count = rows.total = f->n;
	err = names__rows(sym, &rows, &f->names);
	for (size_t i = 0; !err && known && i < f->n; i++) {
		struct known_lock *k = known_find(known, f->list[i].type,
						  f->list[i].object);
		const char *name = f->names[i].object_symbol;

		if (k || merged(&f->list[i])) {
			f->names[i].object_symbol = k ? k->name : NULL;
			continue;
		}
		if (array__grow(&known->locks, &known->cap, known->n + 1,
				sizeof(*known->locks))) {
			err = -ENOMEM;
			break;
		}
		k = &known->locks[known->n];
		*k = (struct known_lock){ .type = f->list[i].type,
					  .object = f->list[i].object,
					  .name = name ? strdup(name) : NULL };
		if (name && !k->name) {
			err = -ENOMEM;
			break;
		}
		known->n++;
	}
	free(rows.rows);
	return err;
}

static int thread_tid_cmp(const void *pa, const void *pb)
{
	const struct findings_thread *a = pa, *b = pb;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/*
 * --why: each lock row's holder states and roots, by the rows of one
 * object per call site (what why__row groups by).
 */
static int holders_of(const struct snapshot *waits, const struct why *why,
		      struct findings_holder **out, size_t *n)
{
	const struct report_settings by_object = {
		.coalesce = false, .per_process = true, .sort = SORT_TOTAL,
		.classes = REPORT_CLASSES_LOCKS,
	};
	struct report_rows rows = { 0 };
	int err;

	*out = NULL;
	*n = 0;
	if (!why || !waits)
		return 0;
	err = report__build(snapshot__entries(waits), snapshot__count(waits),
			    &by_object, &rows);
	if (err)
		return err;
	*out = calloc(rows.total + 1, sizeof(**out));
	if (!*out) {
		report__free(&rows);
		return -ENOMEM;
	}
	for (size_t i = 0; !err && i < rows.total; i++) {
		const struct report_row *r = &rows.rows[i];
		struct findings_holder *h = &(*out)[*n];
		struct why_row wr = { 0 };

		err = why__row(why, r, &by_object, &wr);
		if (err)
			break;
		*h = (struct findings_holder){
			.pid = r->pid == REPORT_NO_TID ? 0 : (uint32_t)r->pid,
			.type = r->type, .object = r->object,
			.runnable_ns = wr.holder[SP_WHY_RUNNABLE],
			.sleep_ns = wr.holder[SP_WHY_SLEEP],
		};
		for (int k = 0; k < SP_WHY__COUNT; k++)
			h->total_ns += wr.holder[k];
		for (size_t k = 0; k < wr.n_roots; k++) {
			const struct why_root *root = &wr.roots[k];

			if (root->state == SP_WHY_RUNNABLE &&
			    root->ns > h->runnable_site_ns) {
				h->runnable_site_ns = root->ns;
				h->runnable_site = root->site;
			}
			if (root->state == SP_WHY_SLEEP &&
			    root->ns > h->sleep_site_ns) {
				h->sleep_site_ns = root->ns;
				h->sleep_site = root->site;
			}
		}
		why__row_free(&wr);
		(*n)++;
	}
	report__free(&rows);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

int findout__build(const struct snapshot *waits, const struct snapshot *charges,
		   const struct why *why, bool every_call,
		   const struct findings_thread *threads, size_t n_threads,
		   uint64_t elapsed_ns, struct symbolizer *sym,
		   struct findout_known *known, struct findout *out)
{
	size_t n_w = waits ? snapshot__count(waits) : 0;
	size_t n_c = charges ? snapshot__count(charges) : 0;
	struct findings_wait *w = calloc(n_w + 1, sizeof(*w));
	struct findings_release *r = calloc(n_c + 1, sizeof(*r));
	struct findings_holder *h = NULL;
	size_t n_h = 0;
	int err;

	*out = (struct findout){ 0 };
	if (!w || !r) {
		free(w);
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_w; i++)
		wait_of(&w[i], &snapshot__entries(waits)[i]);
	for (size_t i = 0; i < n_c; i++) {
		const struct snapshot_entry *e = &snapshot__entries(charges)[i];

		r[i] = (struct findings_release){
			.type = e->key.type, .object = e->key.object,
			.site = e->key.callsite, .pid = e->key.pid,
			.count = e->count, .wait_ns = e->wait_ns,
			.max_ns = e->max_ns,
		};
	}
	err = holders_of(waits, why, &h, &n_h);
	if (err) {
		free(w);
		free(r);
		return err;
	}
	struct findings_input in = {
		.waits = w, .n_waits = n_w,
		.releases = r, .n_releases = n_c,
		.holders = h, .n_holders = n_h,
		.every_call = every_call,
		.threads = threads, .n_threads = n_threads,
		.elapsed_ns = elapsed_ns,
	};
	/* One weighing serves the findings and the table's order. */
	err = findings__weigh_threads(&in, &out->threads);
	if (!err) {
		out->n_threads = n_threads;
		in.weighed = out->threads;
		err = findings__build(&in, &out->list, &out->n);
	}
	if (!err)
		err = findings__folded_weights(&in, &out->folded,
					       &out->n_folded);
	free(w);
	free(r);
	free(h);
	if (!err)
		err = findout__name(out, sym, known);
	if (err)
		findout__free(out);
	return err;
}

static int lock_weight_cmp(const void *pa, const void *pb)
{
	const struct findings_lock_weight *a = pa, *b = pb;

	return order__u64(a->pid, b->pid) ?: order__u64(a->object, b->object);
}

double findout__weigh(const void *ctx, uint32_t pid, uint32_t tid,
		      uint64_t object)
{
	const struct findout *f = ctx;
	const struct findings_thread key = { .tid = tid };
	const struct findings_lock_weight lock = { .pid = pid, .object = object };
	const struct findings_thread *t;
	const struct findings_lock_weight *l;

	if (!f)
		return 1.0;
	if (!tid) {
		l = f->folded ? bsearch(&lock, f->folded, f->n_folded,
					sizeof(lock), lock_weight_cmp) : NULL;
		return l ? l->busy : 1.0;
	}
	/* Thread ids are the host's: one is one thread. */
	t = f->threads ? bsearch(&key, f->threads, f->n_threads, sizeof(key),
				 thread_tid_cmp) : NULL;
	return t ? t->busy : 1.0;
}

char *findout__weights_text(const struct findout *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	for (size_t i = 0; i < f->n_threads; i++)
		fprintf(out, "%s%u:%.17g", i ? "," : "", f->threads[i].tid,
			f->threads[i].busy);
	for (size_t i = 0; i < f->n_folded; i++)
		fprintf(out, "%s@%u.%" PRIx64 ":%.17g",
			i || f->n_threads ? "," : "", f->folded[i].pid,
			f->folded[i].object, f->folded[i].busy);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

int findout__weights_parse(const char *text, struct findout *out)
{
	size_t n = 1, k = 0;
	const char *p = text;

	*out = (struct findout){ 0 };
	if (!text || !*text)
		return 0;
	for (const char *c = text; *c; c++)
		n += *c == ',';
	out->threads = calloc(n, sizeof(*out->threads));
	out->folded = calloc(n, sizeof(*out->folded));
	if (!out->threads || !out->folded) {
		findout__free(out);
		return -ENOMEM;
	}
	while (k + out->n_folded < n) {
		unsigned int tid;
		uint64_t object;
		double busy;
		int used = 0;

		if (sscanf(p, "@%u.%" SCNx64 ":%lf%n", &tid, &object, &busy,
			   &used) == 3 && used) {
			out->folded[out->n_folded++] =
				(struct findings_lock_weight){
					.pid = tid, .object = object,
					.busy = busy };
		} else if (sscanf(p, "%u:%lf%n", &tid, &busy, &used) == 2 &&
			   used) {
			out->threads[k++] = (struct findings_thread){
				.tid = tid, .busy = busy };
		} else {
			findout__free(out);
			return -EINVAL;
		}
		p += used;
		if (*p == ',')
			p++;
		else
			break;
	}
	out->n_threads = k;
	qsort(out->threads, k, sizeof(*out->threads), thread_tid_cmp);
	qsort(out->folded, out->n_folded, sizeof(*out->folded),
	      lock_weight_cmp);
	return 0;
}

void findout__free(struct findout *f)
{
	free(f->threads);
	free(f->folded);
	free(f->list);
	free(f->names);
	*f = (struct findout){ 0 };
}

/* "table_lock", "[8] stripes[3].lock" or the address. */
static void lock_text(const struct findout *f, size_t i, char *buf,
		      size_t len)
{
	const char *sym = f->names ? f->names[i].object_symbol : NULL;
	char raw[TEXT_MAX / 2];

	if (merged(&f->list[i]))
		snprintf(raw, sizeof(raw), "[%u] 0x%" PRIx64,
			 f->list[i].n_objects, f->list[i].object);
	else if (sym)
		snprintf(raw, sizeof(raw), "%s", sym);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, f->list[i].object);
	text__sanitize(raw, buf, len);
}

/*
 * The directory the findings' absolute source files share, left out of
 * their sites as the table's rows leave out theirs: its length.
 */
static size_t source_root(const struct findout *f)
{
	const char *first = NULL;
	size_t root = 0;

	for (size_t i = 0; f->names && i < f->n; i++) {
		const char *file = f->names[i].callsite.file;
		size_t k = 0;

		if (!file || file[0] != '/' || !f->names[i].callsite.line)
			continue;
		if (!first) {
			first = file;
			root = strlen(file);
		}
		while (k < root && file[k] && file[k] == first[k])
			k++;
		root = k;
	}
	while (root && first[root - 1] != '/')
		root--;
	return root;
}

static void site_text(const struct findout *f, size_t i,
		      enum callsite_style style, char *buf, size_t len)
{
	static const struct symbol_info none;

	names__callsite_text(f->names ? &f->names[i].callsite : &none,
			     f->list[i].site, style, source_root(f), buf, len);
}

/* "long-hold  table_lock at kv.c:88 (its release)  impact 41.2%" */
static void head_text(const struct findout *f, size_t i,
		      enum callsite_style style, char *buf, size_t len)
{
	const struct finding *x = &f->list[i];
	char lock[TEXT_MAX / 2], site[TEXT_MAX / 2], kind[64] = "";

	lock_text(f, i, lock, sizeof(lock));
	site_text(f, i, style, site, sizeof(site));
	if (x->category == FINDING_HOT_STRIPE)
		snprintf(kind, sizeof(kind), " (1 of %u)", x->n_objects);
	snprintf(buf, len, "%s  %s %s%s at %s%s  impact %.1f%%",
		 findings__category_name(x->category),
		 locktype__name(x->type), lock, kind, site,
		 x->site_release ? " (the holder's unlock)" : "",
		 x->impact_pct);
}

void findout__table(FILE *out, const struct findout *f,
		    enum callsite_style style)
{
	char line[2 * TEXT_MAX];

	if (!f->n) {
		fputs("What to fix first: nothing (no lock's waits cost the "
		      "threads 5% of their work)\n", out);
		return;
	}
	fputs("What to fix first (impact: the share of the threads' work "
	      "a fix could give back)\n", out);
	for (size_t i = 0; i < f->n && i < FINDOUT_TABLE_MAX; i++) {
		head_text(f, i, style, line, sizeof(line));
		fprintf(out, " %zu. %s\n", i + 1, line);
		if (i)
			continue;
		fprintf(out, "    %s\n    fix: %s\n", f->list[i].evidence,
			f->list[i].fix);
	}
}

void findout__line(const struct findout *f, char *buf, size_t len)
{
	char head[2 * TEXT_MAX];

	if (!len)
		return;
	if (!f || !f->n) {
		snprintf(buf, len, "fix first: nothing");
		return;
	}
	head_text(f, 0, CALLSITE_LINE, head, sizeof(head));
	snprintf(buf, len, "fix first: %s%s", head,
		 f->n > 1 ? "  (+more)" : "");
}

static json_t *site_json(const struct findout *f, size_t i, int *err)
{
	static const struct symbol_info none;
	const struct symbol_info *cs = f->names ? &f->names[i].callsite : &none;
	json_t *o = json_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	jsonout__set(o, "address", jsonout__hex(true, f->list[i].site), err);
	jsonout__set(o, "module", jsonout__string(cs->module), err);
	jsonout__set(o, "offset", jsonout__hex(cs->module != NULL,
					       cs->module_offset), err);
	jsonout__set(o, "function", jsonout__string(cs->function), err);
	jsonout__set(o, "file", jsonout__string(cs->file), err);
	jsonout__set(o, "line", jsonout__uint_or_null(cs->line, cs->line), err);
	jsonout__set(o, "inline", json_false(), err);
	return o;
}

json_t *findout__json(const struct findout *f, int *err)
{
	json_t *list = json_array();

	if (!list) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; f && i < f->n && !*err; i++) {
		const struct finding *x = &f->list[i];
		json_t *o = json_object();
		char lock[TEXT_MAX];

		if (!o) {
			*err = -ENOMEM;
			break;
		}
		lock_text(f, i, lock, sizeof(lock));
		jsonout__set(o, "category", json_string(
				     findings__category_name(x->category)), err);
		jsonout__set(o, "object", json_string(lock), err);
		jsonout__set(o, "object_address", jsonout__hex(true, x->object),
			     err);
		jsonout__set(o, "objects", jsonout__uint(x->n_objects), err);
		jsonout__set(o, "type", json_string(locktype__name(x->type)), err);
		jsonout__set(o, "site", site_json(f, i, err), err);
		jsonout__set(o, "site_is_release", json_boolean(x->site_release),
			     err);
		jsonout__set(o, "impact_pct", json_real(x->impact_pct), err);
		jsonout__set(o, "wait_ns", jsonout__uint(x->wait_ns), err);
		jsonout__set(o, "lock_wait_ns", jsonout__uint(x->lock_wait_ns),
			     err);
		jsonout__set(o, "evidence", json_string(x->evidence), err);
		jsonout__set(o, "fix", json_string(x->fix), err);
		jsonout__append(list, o, err);
	}
	return list;
}
