// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "folded.h"
#include "locktype.h"
#include "text.h"

struct folded_line {
	char *text;		/* without the value */
	uint64_t wait_ns;
};

struct folded {
	struct folded_line *lines;
	size_t n, cap;
	/* the line being built */
	char *buf;
	size_t len, buf_cap;
};

int folded__new(struct folded **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void folded__clear(struct folded *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->lines[i].text);
	f->n = 0;
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	folded__clear(f);
	free(f->lines);
	free(f->buf);
	free(f);
}

/*
 * Appends one element, sanitized, with ';' before it unless it is the
 * first; a ';' inside a name (Rust's [u8; 4]) would split it, so it
 * becomes ','.
 */
static int folded__element(struct folded *f, const char *text)
{
	char clean[TEXT_MAX];
	size_t n;

	text__sanitize(text, clean, sizeof(clean));
	for (char *p = clean; *p; p++)
		if (*p == ';')
			*p = ',';
	n = strlen(clean);
	if (array__grow(&f->buf, &f->buf_cap, f->len + n + 2, 1))
		return -ENOMEM;
	if (f->len)
		f->buf[f->len++] = ';';
	memcpy(f->buf + f->len, clean, n + 1);
	f->len += n;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int folded__frame(struct folded *f, const struct symbol_frame *frame)
{
	char text[TEXT_MAX];

	if (frame->info.function)
		snprintf(text, sizeof(text), "%s%s", frame->info.function,
			 frame->inlined ? "_[i]" : "");
	else if (frame->info.module)
		snprintf(text, sizeof(text), "[%s]",
			 basename_of(frame->info.module));
	else
		snprintf(text, sizeof(text), "[unknown]");
	return folded__element(f, text);
}

static int folded__stack(struct folded *f, const struct report_row *row,
			 const char *lock, const struct rowstacks_stack *st)
{
	char text[TEXT_MAX];
	int err = 0;

	f->len = 0;
	/* The root: a flame graph's lock waits apart from its events. */
	snprintf(text, sizeof(text), "[%s]", locktype__class(row->type));
	err = folded__element(f, text);
	if (!err && row->tid != REPORT_NO_TID) {
		snprintf(text, sizeof(text), "[tid %" PRId64 "]", row->tid);
		err = folded__element(f, text);
	}
	if (!err && st->end == STACKTAB_END_TRUNCATED)
		err = folded__element(f, "[truncated]");
	else if (!err && st->end == STACKTAB_END_STOPPED)
		err = folded__element(f, "[unwinding stopped]");
	for (size_t p = st->n_pcs; p-- > 0 && !err;) {
		const struct rowstacks_pc *pc = &st->pcs[p];

		for (size_t i = pc->n_frames; i-- > 0 && !err;)
			err = folded__frame(f, &pc->frames[i]);
	}
	if (!err)
		err = folded__element(f, lock);
	if (err)
		return err;
	if (array__grow(&f->lines, &f->cap, f->n + 1, sizeof(*f->lines)))
		return -ENOMEM;
	f->lines[f->n].text = strdup(f->buf);
	if (!f->lines[f->n].text)
		return -ENOMEM;
	f->lines[f->n++].wait_ns = st->wait_ns;
	return 0;
}

int folded__add(struct folded *f, const struct report_row *row,
		const char *object_symbol, const struct rowstacks *rs)
{
	char object[TEXT_MAX], lock[TEXT_MAX + 32];
	int err = 0;

	if (row->n_objects > 1)
		snprintf(object, sizeof(object), "%u objects", row->n_objects);
	else if (object_symbol)
		snprintf(object, sizeof(object), "%s", object_symbol);
	else
		snprintf(object, sizeof(object), "0x%" PRIx64, row->object);
	snprintf(lock, sizeof(lock), "[%s %s]", locktype__name(row->type),
		 object);
	for (size_t i = 0; i < rs->n_stacks && !err; i++)
		if (rs->stacks[i].wait_ns)
			err = folded__stack(f, row, lock, &rs->stacks[i]);
	return err;
}

static int folded__line_cmp(const void *pa, const void *pb)
{
	const struct folded_line *a = pa, *b = pb;

	return strcmp(a->text, b->text);
}

int folded__write(struct folded *f, FILE *out)
{
	if (f->n)
		qsort(f->lines, f->n, sizeof(*f->lines), folded__line_cmp);
	for (size_t i = 0; i < f->n;) {
		uint64_t wait = 0;
		size_t j = i;

		for (; j < f->n && !strcmp(f->lines[j].text, f->lines[i].text); j++)
			wait += f->lines[j].wait_ns;
		fprintf(out, "%s %" PRIu64 "\n", f->lines[i].text, wait);
		i = j;
	}
	folded__clear(f);
	return ferror(out) ? -EIO : 0;
}

int folded__print(FILE *out, struct symbolizer *sym,
		  const struct stacktab *tab, const struct report_rows *rows,
		  const struct row_names *names)
{
	struct rowstacks rs = { 0 };
	struct folded *f;
	int err;

	if (!sym)
		return -EINVAL;
	err = folded__new(&f);
	for (size_t i = 0; i < rows->count && !err; i++) {
		err = rowstacks__name(&rs, sym, tab, &rows->rows[i]);
		if (!err)
			err = folded__add(f, &rows->rows[i],
					  names[i].object_symbol, &rs);
	}
	if (!err)
		err = folded__write(f, out);
	rowstacks__release(&rs);
	folded__free(f);
	return err;
}
