// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot, sorted by pointer value: the first word of each candidate
 * symbol (a few thousand in a large program) read from /proc/PID/mem,
 * the symbols that lie close together in one read, made when a heap
 * object has no name and at most once a second.  Only
 * variables of 8 to 64 bytes are read (a GRWLock is 16): a lock handle
 * is small, and larger objects' first words are rarely lock pointers.
 * Rejected: probing g_rw_lock_*'s argument at entry (a uprobe on every
 * call, which contended mode promises not to pay), and reading the
 * callee-saved register GLib keeps it in at the wait (needs the CFI's
 * register rules for every frame in between).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "demangle.h"
#include "holders.h"

struct holder {
	uint64_t value;
	char *name;
};

struct holders {
	struct holder *v;
	size_t n, cap;
};

/* A data symbol whose first word is to be read: libdwfl's name. */
struct candidate {
	uint64_t addr;
	const char *name;
};

struct scan {
	struct holders *h;
	struct candidate *c;	/* one module's, reused for the next */
	size_t n_c, cap_c;
	char *span;		/* SPAN_MAX bytes */
	int fd;
	int err;
};

/*
 * The candidates of a module are read a span at a time: one pread per
 * symbol was a syscall for each of the thousands of data symbols of a
 * large program, once a second while a heap lock stays unnamed.  A span
 * is cut where two candidates lie a page or more apart, so it reads no
 * page of the target that the reads one by one would not (the target's
 * memory is read, never paged in beyond that).
 */
#define SPAN_MAX (64 * 1024)
#define SPAN_GAP 4096

static int cmp_candidate(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int scan_add(struct scan *s, const char *name, uint64_t value)
{
	char *bare;

	if (array__grow(&s->h->v, &s->h->cap, s->h->n + 1, sizeof(*s->h->v)))
		return -ENOMEM;
	bare = strndup(name, strcspn(name, "@"));
	s->h->v[s->h->n].name = bare ? demangle__name(bare) : NULL;
	free(bare);
	if (!s->h->v[s->h->n].name)
		return -ENOMEM;
	s->h->v[s->h->n++].value = value;
	return 0;
}

/*
 * The first words of the sorted candidates [i, j), which lie within
 * SPAN_MAX bytes: one read of their span, or, when part of it cannot be
 * read (a hole in the mappings), one read each.
 */
static void scan_span(struct scan *s, size_t i, size_t j)
{
	uint64_t lo = s->c[i].addr;
	size_t len = (size_t)(s->c[j - 1].addr - lo) + sizeof(uint64_t);
	bool whole = s->span && pread(s->fd, s->span, len, (off_t)lo) ==
				(ssize_t)len;

	for (size_t k = i; k < j && !s->err; k++) {
		uint64_t value;

		if (whole)
			memcpy(&value, s->span + (s->c[k].addr - lo),
			       sizeof(value));
		else if (pread(s->fd, &value, sizeof(value),
			       (off_t)s->c[k].addr) != (ssize_t)sizeof(value))
			continue;
		if (value >= 4096)
			s->err = scan_add(s, s->c[k].name, value);
	}
}

static int scan_module(Dwfl_Module *mod, void **userdata, const char *mname,
		       Dwarf_Addr start, void *arg)
{
	struct scan *s = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)userdata;
	(void)mname;
	(void)start;
	s->n_c = 0;
	for (int i = 1; i < n && !s->err; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size < 8 ||
		    sym.st_size > 64)
			continue;
		if (array__grow(&s->c, &s->cap_c, s->n_c + 1, sizeof(*s->c))) {
			s->err = -ENOMEM;
			break;
		}
		s->c[s->n_c++] = (struct candidate){ addr, name };
	}
	if (s->n_c > 1)
		qsort(s->c, s->n_c, sizeof(*s->c), cmp_candidate);
	for (size_t i = 0, j; i < s->n_c && !s->err; i = j) {
		for (j = i + 1; j < s->n_c &&
			     s->c[j].addr - s->c[j - 1].addr < SPAN_GAP &&
			     s->c[j].addr - s->c[i].addr <=
			     SPAN_MAX - sizeof(uint64_t); j++)
			;
		scan_span(s, i, j);
	}
	return s->err ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int cmp_holder(const void *pa, const void *pb)
{
	const struct holder *a = pa, *b = pb;

	return a->value < b->value ? -1 : a->value > b->value;
}

int holders__build(Dwfl *dwfl, pid_t pid, struct holders **out)
{
	struct holders *h = calloc(1, sizeof(*h));
	struct scan s = { .h = h };
	char path[64];

	if (!h)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0) {
		free(h);
		return -errno;
	}
	s.span = malloc(SPAN_MAX);
	dwfl_getmodules(dwfl, scan_module, &s, 0);
	close(s.fd);
	free(s.span);
	free(s.c);
	if (s.err) {
		holders__free(h);
		return s.err;
	}
	if (h->n)
		qsort(h->v, h->n, sizeof(*h->v), cmp_holder);
	*out = h;
	return 0;
}

void holders__free(struct holders *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].name);
	free(h->v);
	free(h);
}

const char *holders__find(const struct holders *h, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!h)
		return NULL;
	hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->v[mid].value < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Two variables holding the same pointer: the answer is ambiguous. */
	if (lo < h->n && h->v[lo].value == addr &&
	    !(lo + 1 < h->n && h->v[lo + 1].value == addr))
		return h->v[lo].name;
	return NULL;
}
