// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot, sorted by pointer value: one pread of /proc/PID/mem per
 * candidate symbol (a few thousand in a large program, a few ms), made
 * when a heap object has no name and at most once a second.  Only
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

struct scan {
	struct holders *h;
	int fd;
	int err;
};

static int scan_module(Dwfl_Module *mod, void **userdata, const char *mname,
		       Dwarf_Addr start, void *arg)
{
	struct scan *s = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)userdata;
	(void)mname;
	(void)start;
	for (int i = 1; i < n && !s->err; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		uint64_t value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   NULL, NULL, NULL);
		char *bare;

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size < 8 ||
		    sym.st_size > 64)
			continue;
		if (pread(s->fd, &value, sizeof(value), (off_t)addr) !=
		    (ssize_t)sizeof(value) || value < 4096)
			continue;
		if (array__grow(&s->h->v, &s->h->cap, s->h->n + 1,
				sizeof(*s->h->v))) {
			s->err = -ENOMEM;
			break;
		}
		bare = strndup(name, strcspn(name, "@"));
		s->h->v[s->h->n].name = bare ? demangle__name(bare) : NULL;
		free(bare);
		if (!s->h->v[s->h->n].name) {
			s->err = -ENOMEM;
			break;
		}
		s->h->v[s->h->n++].value = value;
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
	dwfl_getmodules(dwfl, scan_module, &s, 0);
	close(s.fd);
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
