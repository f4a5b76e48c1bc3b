// SPDX-License-Identifier: GPL-2.0
/*
 * Names are matched as the symbolizer prints them (demangled), against
 * the symbol table, not DWARF: a function that has a symbol has an
 * extent, which is what the kernel needs, and stripped files keep
 * .dynsym.  An inlined wrapper has no range of its own and cannot be
 * skipped; its caller's frame is the call site anyway.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "demangle.h"
#include "skiplist.h"

struct skiplist {
	char **globs;
	size_t n;
};

int skiplist__new(const char *const *globs, size_t n, struct skiplist **out)
{
	struct skiplist *list = calloc(1, sizeof(*list));

	if (!list)
		return -ENOMEM;
	list->globs = calloc(n ? n : 1, sizeof(*list->globs));
	if (!list->globs) {
		free(list);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		list->globs[i] = strdup(globs[i]);
		if (!list->globs[i]) {
			list->n = i;
			skiplist__free(list);
			return -ENOMEM;
		}
	}
	list->n = n;
	*out = list;
	return 0;
}

void skiplist__free(struct skiplist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		free(list->globs[i]);
	free(list->globs);
	free(list);
}

bool skiplist__empty(const struct skiplist *list)
{
	return !list || !list->n;
}

size_t skiplist__base_len(const char *demangled)
{
	const char *clone = strstr(demangled, " [clone ");
	size_t len = clone ? (size_t)(clone - demangled) : strlen(demangled);
	size_t end = len;
	int depth = 0;

	/* A C name's clone: "f.cold", "f.constprop.0". */
	if (!memchr(demangled, '(', len)) {
		const char *dot = memchr(demangled, '.', len);

		return dot && dot != demangled ? (size_t)(dot - demangled) : len;
	}
	/* Qualifiers after the parameter list: const, volatile, &, &&. */
	while (end && demangled[end - 1] != ')') {
		char c = demangled[end - 1];

		if (!(c == ' ' || c == '&' || (c >= 'a' && c <= 'z')))
			return len;
		end--;
	}
	/* Back to the '(' that opens the list. */
	for (size_t i = end; i-- > 0;) {
		if (demangled[i] == ')')
			depth++;
		else if (demangled[i] == '(' && --depth == 0)
			return i ? i : len;
	}
	return len;
}

bool skiplist__match(const struct skiplist *list, const char *demangled)
{
	size_t base = skiplist__base_len(demangled);
	char *short_name = NULL;
	bool match = false;

	if (skiplist__empty(list))
		return false;
	if (base < strlen(demangled))
		short_name = strndup(demangled, base);
	for (size_t i = 0; i < list->n && !match; i++)
		match = !fnmatch(list->globs[i], demangled, 0) ||
			(short_name && !fnmatch(list->globs[i], short_name, 0));
	free(short_name);
	return match;
}

struct range_collect {
	const struct skiplist *list;
	struct cfitable_range *v;
	size_t n, cap;
};

static int skiplist__collect(void *ctx, const char *name, uint64_t vaddr,
			     uint64_t size)
{
	struct range_collect *c = ctx;
	const char *at = strchr(name, '@');
	char *bare = at ? strndup(name, (size_t)(at - name)) : NULL;
	char *demangled;
	bool match;

	if (at && !bare)
		return -ENOMEM;
	demangled = demangle__name(bare ? bare : name);
	free(bare);
	if (!demangled)
		return -ENOMEM;
	match = size && skiplist__match(c->list, demangled);
	free(demangled);
	if (!match)
		return 0;
	if (array__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->n++] = (struct cfitable_range){ vaddr, vaddr + size };
	return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct cfitable_range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

int skiplist__ranges(const struct skiplist *list, struct elfimage *image,
		     struct cfitable_range **out, size_t *n)
{
	struct range_collect c = { .list = list };
	size_t j = 0;
	int err;

	*out = NULL;
	*n = 0;
	if (skiplist__empty(list))
		return 0;
	err = elfimage__for_each_func(image, skiplist__collect, &c);
	if (err && err != -ENOENT) {
		free(c.v);
		return err;
	}
	if (!c.n) {
		free(c.v);
		return 0;
	}
	qsort(c.v, c.n, sizeof(*c.v), cmp_range);
	for (size_t i = 1; i < c.n; i++) {
		if (c.v[i].start <= c.v[j].end) {
			if (c.v[i].end > c.v[j].end)
				c.v[j].end = c.v[i].end;
		} else {
			c.v[++j] = c.v[i];
		}
	}
	*out = c.v;
	*n = j + 1;
	return 0;
}
