// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdbool.h>

#include "procmaps.h"
#include "symbolizer.h"

/*
 * Every maps list ever read is kept: an address resolved against an older
 * list keeps its module string alive, and a library unmapped since still
 * names the addresses that were in it.
 */
struct symbolizer {
	pid_t pid;
	struct procmaps **generations;
	size_t n_generations;
	uint64_t last_refresh_ns;
};

/* Misses on garbage addresses must not re-read the maps every time. */
#define REFRESH_MIN_INTERVAL_NS 50000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool procmaps_same(const struct procmaps *a, const struct procmaps *b)
{
	if (procmaps__count(a) != procmaps__count(b))
		return false;
	for (size_t i = 0; i < procmaps__count(a); i++) {
		const struct procmaps_entry *x = procmaps__entry(a, i);
		const struct procmaps_entry *y = procmaps__entry(b, i);

		if (x->start != y->start || x->end != y->end ||
		    x->offset != y->offset || x->inode != y->inode ||
		    strcmp(x->path, y->path))
			return false;
	}
	return true;
}

static int symbolizer__refresh(struct symbolizer *sym)
{
	struct procmaps *maps;
	void *grown;
	int err = procmaps__read(sym->pid, &maps);

	if (err)
		return err;
	sym->last_refresh_ns = monotonic_ns();
	if (sym->n_generations &&
	    procmaps_same(maps, sym->generations[sym->n_generations - 1])) {
		procmaps__free(maps);
		return 0;
	}
	grown = realloc(sym->generations,
			(sym->n_generations + 1) * sizeof(*sym->generations));
	if (!grown) {
		procmaps__free(maps);
		return -ENOMEM;
	}
	sym->generations = grown;
	sym->generations[sym->n_generations++] = maps;
	return 0;
}

int symbolizer__new(pid_t pid, struct symbolizer **out)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));
	int err;

	if (!sym)
		return -ENOMEM;
	sym->pid = pid;
	/* A target already gone leaves addresses unnamed, not an error. */
	err = symbolizer__refresh(sym);
	if (err == -ENOMEM) {
		symbolizer__free(sym);
		return err;
	}
	*out = sym;
	return 0;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->n_generations; i++)
		procmaps__free(sym->generations[i]);
	free(sym->generations);
	free(sym);
}

static const struct procmaps_entry *symbolizer__find(struct symbolizer *sym,
						     uint64_t addr)
{
	/* Newest first: a reused address belongs to what is mapped now. */
	for (size_t i = sym->n_generations; i-- > 0;) {
		const struct procmaps_entry *e =
			procmaps__find(sym->generations[i], addr);
		if (e)
			return e;
	}
	return NULL;
}

int symbolizer__lookup(struct symbolizer *sym, uint64_t addr,
		       struct symbol_info *info)
{
	const struct procmaps_entry *e = symbolizer__find(sym, addr);

	*info = (struct symbol_info){ 0 };
	if (!e && monotonic_ns() - sym->last_refresh_ns > REFRESH_MIN_INTERVAL_NS &&
	    !symbolizer__refresh(sym))
		e = symbolizer__find(sym, addr);
	if (!e)
		return -ENOENT;
	info->module = e->path;
	info->module_offset = addr - e->start + e->offset;
	return 0;
}
