// SPDX-License-Identifier: GPL-2.0
/*
 * The copies are made as rowstacks__name, names__rows and the symbolizer
 * hand the names out, a row at a time, so the loop can stop between rows
 * and go back to its events.  Strings are kept once each (a table of
 * them: a function named in a thousand frames is one copy), mappings
 * and root call sites by the address they were asked for, as
 * pprof__add_from will ask again.  Rejected: handing the symbolizer's
 * own strings over (a module no process maps may be released between
 * two rows, or while the profile is being encoded), and a lock around
 * the symbolizer (libdwfl is not thread-safe, and the loop would wait
 * on the encoder).
 */
#include <errno.h>
#include <stddef.h>		/* before hashtab.h, which needs size_t */
#include <stdlib.h>
#include <string.h>
#include <libiberty/hashtab.h>

#include "profnames.h"
#include "rootsplit.h"

/* A mapping or a call site, by the address it was looked up at. */
struct pn_addr {
	uint64_t addr;
	int err;			/* the lookup's */
	struct symbol_module module;	/* build_id: ours */
	struct symbol_info site;
};

struct pn_row {
	struct rowstacks rs;		/* stacks and pcs: ours */
	struct symbol_frame *frames;	/* every pc's, in order */
};

struct profnames {
	htab_t strings;		/* of char *, ours */
	htab_t modules;		/* of struct pn_addr */
	htab_t sites;		/* of struct pn_addr */
	struct row_names *names;
	struct pn_row *rows;
	size_t n_rows;
	size_t bytes;
	struct rowstacks scratch;	/* the loop's, reused */
	struct pprof_source source;
};

static hashval_t pn_string_hash(const void *s)
{
	return htab_hash_string(s);
}

static int pn_string_eq(const void *a, const void *b)
{
	return !strcmp(a, b);
}

static hashval_t pn_addr_hash(const void *entry)
{
	return iterative_hash(entry, sizeof(uint64_t), 0);
}

static int pn_addr_eq(const void *entry, const void *addr)
{
	return ((const struct pn_addr *)entry)->addr ==
	       *(const uint64_t *)addr;
}

static void pn_addr_free(void *entry)
{
	struct pn_addr *a = entry;

	free((void *)a->module.build_id);
	free(a);
}

/* s's copy (NULL stays NULL); *err -ENOMEM on failure. */
static const char *pn__string(struct profnames *pn, const char *s, int *err)
{
	void **slot;
	char *copy;

	if (!s)
		return NULL;
	slot = htab_find_slot(pn->strings, s, INSERT);
	if (!slot) {
		*err = -ENOMEM;
		return NULL;
	}
	if (*slot)
		return *slot;
	copy = strdup(s);
	if (!copy) {
		htab_clear_slot(pn->strings, slot);
		*err = -ENOMEM;
		return NULL;
	}
	pn->bytes += strlen(s) + 1;
	*slot = copy;
	return copy;
}

static void pn__info(struct profnames *pn, struct symbol_info *info,
		     int *err)
{
	info->module = pn__string(pn, info->module, err);
	info->function = pn__string(pn, info->function, err);
	info->file = pn__string(pn, info->file, err);
}

/* The entry for addr in table, new (*fresh) if not there; NULL: no memory. */
static struct pn_addr *pn__addr(htab_t table, uint64_t addr, bool *fresh)
{
	void **slot = htab_find_slot_with_hash(table, &addr,
		iterative_hash(&addr, sizeof(addr), 0), INSERT);
	struct pn_addr *a;

	*fresh = false;
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	a = calloc(1, sizeof(*a));
	if (!a) {
		htab_clear_slot(table, slot);
		return NULL;
	}
	a->addr = addr;
	*slot = a;
	*fresh = true;
	return a;
}

/* The mapping pprof will ask for at pc, named now. */
static int pn__module(struct profnames *pn, struct symbolizer *sym,
		      const struct rowstacks_pc *pc)
{
	uint64_t addr = pc->is_return_address ? pc->pc - 1 : pc->pc;
	struct symbol_module mod;
	unsigned char *id;
	bool fresh;
	struct pn_addr *a = pn__addr(pn->modules, addr, &fresh);
	int err = 0;

	if (!a)
		return -ENOMEM;
	if (!fresh)
		return 0;
	pn->bytes += sizeof(*a);
	a->err = symbolizer__module(sym, addr, &mod);
	if (a->err)
		return 0;
	/* The build ID's bytes last until the next lookup: copied first. */
	id = mod.build_id ? malloc(mod.build_id_len ? mod.build_id_len : 1)
			  : NULL;
	if (mod.build_id && !id)
		return -ENOMEM;
	if (id)
		memcpy(id, mod.build_id, mod.build_id_len);
	a->module = mod;
	a->module.build_id = id;
	a->module.path = pn__string(pn, mod.path, &err);
	return err;
}

/* The call sites of the roots row's stacks split by, named now. */
static int pn__roots(struct profnames *pn, struct symbolizer *sym,
		     const struct report_row *row, const struct rowstacks *rs,
		     const struct why *why,
		     const struct report_settings *rows_by)
{
	struct why_row *roots = NULL;
	int err = rootsplit__stacks(why, row, rows_by, rs, &roots);

	for (size_t i = 0; !err && i < rs->n_stacks; i++)
		for (size_t j = 0; !err && j < roots[i].n_roots; j++) {
			uint64_t site = roots[i].roots[j].site;
			bool fresh;
			struct pn_addr *a;

			if (!site)
				continue;
			a = pn__addr(pn->sites, site, &fresh);
			if (!a) {
				err = -ENOMEM;
			} else if (fresh) {
				pn->bytes += sizeof(*a);
				a->err = symbolizer__callsite(sym, site, &a->site);
				pn__info(pn, &a->site, &err);
			}
		}
	rootsplit__stacks_free(roots, roots ? rs->n_stacks : 0);
	return err;
}

/* rs's stacks, pcs and frames copied into row. */
static int pn__copy_stacks(struct profnames *pn, struct pn_row *row,
			   const struct rowstacks *rs)
{
	size_t n_frames = 0, f = 0;
	int err = 0;

	for (size_t i = 0; i < rs->n_pcs; i++)
		n_frames += rs->pcs[i].n_frames;
	row->rs.stacks = calloc(rs->n_stacks ? rs->n_stacks : 1,
				sizeof(*rs->stacks));
	row->rs.pcs = calloc(rs->n_pcs ? rs->n_pcs : 1, sizeof(*rs->pcs));
	row->frames = calloc(n_frames ? n_frames : 1, sizeof(*row->frames));
	if (!row->rs.stacks || !row->rs.pcs || !row->frames)
		return -ENOMEM;
	pn->bytes += rs->n_stacks * sizeof(*rs->stacks) +
		     rs->n_pcs * sizeof(*rs->pcs) +
		     n_frames * sizeof(*row->frames);
	for (size_t i = 0; i < rs->n_pcs; i++) {
		struct rowstacks_pc *pc = &row->rs.pcs[i];

		*pc = rs->pcs[i];
		pc->frames = &row->frames[f];
		for (size_t j = 0; j < pc->n_frames; j++) {
			row->frames[f] = rs->pcs[i].frames[j];
			pn__info(pn, &row->frames[f++].info, &err);
		}
	}
	/* The stacks take the pcs in order, as rowstacks__name gives them. */
	for (size_t i = 0; i < rs->n_stacks; i++) {
		row->rs.stacks[i] = rs->stacks[i];
		row->rs.stacks[i].pcs = row->rs.pcs + (rs->stacks[i].pcs - rs->pcs);
	}
	row->rs.n_stacks = rs->n_stacks;
	row->rs.n_pcs = rs->n_pcs;
	return err;
}

int profnames__name(struct profnames *pn, size_t i, struct symbolizer *sym,
		    const struct stacktab *tab, const struct report_row *row,
		    const struct why *why,
		    const struct report_settings *rows_by)
{
	const struct report_rows one = {
		.rows = (struct report_row *)row, .count = 1, .total = 1,
	};
	struct row_names *names = NULL;
	struct rowstacks *rs = &pn->scratch;
	int err;

	if (i >= pn->n_rows)
		return -EINVAL;
	err = names__rows(sym, &one, &names);
	if (!err) {
		pn->names[i] = names[0];
		pn__info(pn, &pn->names[i].callsite, &err);
		pn->names[i].object_symbol =
			pn__string(pn, names[0].object_symbol, &err);
	}
	free(names);
	if (!err)
		err = rowstacks__name(rs, sym, tab, row);
	for (size_t j = 0; !err && j < rs->n_pcs; j++)
		err = pn__module(pn, sym, &rs->pcs[j]);
	if (!err && why)
		err = pn__roots(pn, sym, row, rs, why, rows_by);
	if (!err)
		err = pn__copy_stacks(pn, &pn->rows[i], rs);
	return err;
}

static int pn__source_module(void *ctx, uint64_t addr,
			     struct symbol_module *out)
{
	const struct profnames *pn = ctx;
	const struct pn_addr *a = htab_find_with_hash(pn->modules, &addr,
		iterative_hash(&addr, sizeof(addr), 0));

	if (!a || a->err)
		return a ? a->err : -ENOENT;
	*out = a->module;
	return 0;
}

static void pn__source_callsite(void *ctx, uint64_t addr,
				struct symbol_info *out)
{
	const struct profnames *pn = ctx;
	const struct pn_addr *a = htab_find_with_hash(pn->sites, &addr,
		iterative_hash(&addr, sizeof(addr), 0));

	*out = a ? a->site : (struct symbol_info){ 0 };
}

int profnames__new(size_t n_rows, struct profnames **out)
{
	struct profnames *pn = calloc(1, sizeof(*pn));

	*out = NULL;
	if (!pn)
		return -ENOMEM;
	pn->n_rows = n_rows;
	pn->strings = htab_create_alloc(256, pn_string_hash, pn_string_eq,
					free, calloc, free);
	pn->modules = htab_create_alloc(256, pn_addr_hash, pn_addr_eq,
					pn_addr_free, calloc, free);
	pn->sites = htab_create_alloc(16, pn_addr_hash, pn_addr_eq,
				      pn_addr_free, calloc, free);
	pn->names = calloc(n_rows ? n_rows : 1, sizeof(*pn->names));
	pn->rows = calloc(n_rows ? n_rows : 1, sizeof(*pn->rows));
	if (!pn->strings || !pn->modules || !pn->sites || !pn->names ||
	    !pn->rows) {
		profnames__free(pn);
		return -ENOMEM;
	}
	pn->source = (struct pprof_source){
		.module = pn__source_module,
		.callsite = pn__source_callsite,
		.ctx = pn,
	};
	*out = pn;
	return 0;
}

void profnames__free(struct profnames *pn)
{
	if (!pn)
		return;
	for (size_t i = 0; pn->rows && i < pn->n_rows; i++) {
		free(pn->rows[i].rs.stacks);
		free(pn->rows[i].rs.pcs);
		free(pn->rows[i].frames);
	}
	rowstacks__release(&pn->scratch);
	if (pn->strings)
		htab_delete(pn->strings);
	if (pn->modules)
		htab_delete(pn->modules);
	if (pn->sites)
		htab_delete(pn->sites);
	free(pn->names);
	free(pn->rows);
	free(pn);
}

const struct row_names *profnames__names(const struct profnames *pn)
{
	return pn->names;
}

const struct rowstacks *profnames__stacks(const struct profnames *pn,
					  size_t i)
{
	return &pn->rows[i].rs;
}

const struct pprof_source *profnames__source(const struct profnames *pn)
{
	return &pn->source;
}

size_t profnames__bytes(const struct profnames *pn)
{
	return pn->bytes;
}
