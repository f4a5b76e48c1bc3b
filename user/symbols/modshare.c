// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by build, counted by holder.  Under --all, a program run again
 * and again from fresh copies, or a plugin host loading copies of one
 * library, made a new libdwfl module each time, and each module's index
 * walked every DIE of its DWARF again: a tenth of syncprof's CPU on the
 * soak's load.  The walk's result depends only on the DWARF, so it is
 * kept by build ID and DWARF section sizes while a module of the build
 * is held (modules no process maps stay a while, dwflsession.c).
 *
 * Rejected: sharing the whole index with its Dwarf handle (the handle
 * belongs to the first module's libdwfl session, and owning one apart
 * would keep that copy's file, deleted or not, open past its last user);
 * sharing by file identity (each copy is a new inode).  A lookup scans
 * the builds held: a few hundred at most, once per module indexed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "modshare.h"

struct modshare {
	struct modshare_key key;
	struct modshare_func *funcs;
	size_t n_funcs;
	struct modshare_var *vars;
	size_t n_vars;
	bool vars_indexed;
	size_t holders;
};

/* The builds held (one table for the process: symbols are named on the
   loop's thread only). */
static struct {
	struct modshare **v;
	size_t n, cap;
} held;

static bool same_key(const struct modshare_key *a, const struct modshare_key *b)
{
	return a->id_len == b->id_len && a->info_size == b->info_size &&
	       a->abbrev_size == b->abbrev_size && a->str_size == b->str_size &&
	       !memcmp(a->id, b->id, a->id_len);
}

struct modshare *modshare__find(const struct modshare_key *key)
{
	if (!key->id_len)
		return NULL;
	for (size_t i = 0; i < held.n; i++)
		if (same_key(&held.v[i]->key, key)) {
			held.v[i]->holders++;
			return held.v[i];
		}
	return NULL;
}

int modshare__add(const struct modshare_key *key, struct modshare_func *funcs,
		  size_t n, struct modshare **out)
{
	struct modshare *m = calloc(1, sizeof(*m));

	if (!m || array__grow(&held.v, &held.cap, held.n + 1,
			      sizeof(*held.v))) {
		free(m);
		free(funcs);
		return -ENOMEM;
	}
	m->key = *key;
	m->funcs = funcs;
	m->n_funcs = n;
	m->holders = 1;
	/* Without a build ID nothing else is the same build: not listed. */
	if (key->id_len)
		held.v[held.n++] = m;
	*out = m;
	return 0;
}

void modshare__put(struct modshare *m)
{
	if (!m || --m->holders)
		return;
	for (size_t i = 0; i < held.n; i++)
		if (held.v[i] == m) {
			held.v[i] = held.v[--held.n];
			break;
		}
	if (!held.n) {
		free(held.v);
		held.v = NULL;
		held.cap = 0;
	}
	free(m->funcs);
	free(m->vars);
	free(m);
}

const struct modshare_func *modshare__funcs(const struct modshare *m,
					    size_t *n)
{
	*n = m->n_funcs;
	return m->funcs;
}

bool modshare__vars(const struct modshare *m, const struct modshare_var **vars,
		    size_t *n)
{
	*vars = m->vars;
	*n = m->n_vars;
	return m->vars_indexed;
}

void modshare__set_vars(struct modshare *m, struct modshare_var *vars,
			size_t n)
{
	free(m->vars);
	m->vars = vars;
	m->n_vars = n;
	m->vars_indexed = true;
}

size_t modshare__count(void)
{
	return held.n;
}
