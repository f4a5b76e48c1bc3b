// SPDX-License-Identifier: GPL-2.0
/*
 * Names of lock objects.  A lock inside a global struct is named by its
 * member path (memberpath.c) from the variable's DWARF type; without
 * DWARF, by symbol+0xoff.  A lock in no module (heap) is named by the
 * variable whose first word points to it (holders.c: GLib's GRWLock),
 * whose table is read from the live target at most once a second (an
 * address it did not name: at most every 30 s), or,
 * by the caller's choice, by the type of the pointer the lock call was
 * passed (callarg.c).  Lookups by name (--object NAME) search every
 * module's symbol table, then a member path in the variable's type.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "callarg.h"
#include "clock.h"
#include "demangle.h"
#include "dwflsession.h"
#include "holders.h"
#include "memberpath.h"
#include "modindex.h"
#include "objectnames.h"
#include "symcache.h"

/* A heap address the table read at built_ns did not name. */
struct unheld {
	uint64_t addr;
	uint64_t built_ns;
};

struct objectnames {
	struct dwflsession *session;	/* not owned */
	struct symcache *strings;	/* not owned */
	pid_t pid;
	struct holders *holders;	/* heap locks' named handles */
	uint64_t holders_ns;		/* when they were read */
	struct unheld *unheld;		/* addresses no table named */
	size_t n_unheld, cap_unheld;
};

int objectnames__new(struct dwflsession *session, struct symcache *strings,
		     pid_t pid, struct objectnames **out)
{
	struct objectnames *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->session = session;
	o->strings = strings;
	o->pid = pid;
	*out = o;
	return 0;
}

void objectnames__free(struct objectnames *o)
{
	if (!o)
		return;
	holders__free(o->holders);
	free(o->unheld);
	free(o);
}

/* A table is read again at most once a second ... */
#define HOLDERS_REFRESH_NS	1000000000ull
/* ... and for an address it did not name, not before this: most heap
   locks have no named holder (a lock in a malloc'd struct), and each
   read of the table reads every data symbol of the target's modules. */
#define HOLDERS_RETRY_NS	(30 * 1000000000ull)
/* Addresses remembered as unnamed; past this, forgotten together. */
#define HOLDERS_UNHELD_MAX	4096

static struct unheld *objectnames__unheld(struct objectnames *o, uint64_t addr)
{
	for (size_t i = 0; i < o->n_unheld; i++)
		if (o->unheld[i].addr == addr)
			return &o->unheld[i];
	return NULL;
}

/* Whether addr, not named by the table now, may be named by a new one. */
static bool objectnames__worth_reading(struct objectnames *o, uint64_t addr,
				       uint64_t now)
{
	struct unheld *u = objectnames__unheld(o, addr);

	if (o->holders && now - o->holders_ns < HOLDERS_REFRESH_NS)
		return false;
	return !u || now - u->built_ns >= HOLDERS_RETRY_NS;
}

/* addr not named by a table read for it at built_ns. */
static void objectnames__note_unheld(struct objectnames *o, uint64_t addr,
				     uint64_t built_ns)
{
	struct unheld *u = objectnames__unheld(o, addr);

	if (u) {
		u->built_ns = built_ns;
		return;
	}
	if (o->n_unheld >= HOLDERS_UNHELD_MAX)
		o->n_unheld = 0;
	if (!array__grow(&o->unheld, &o->cap_unheld, o->n_unheld + 1,
			 sizeof(*o->unheld)))
		o->unheld[o->n_unheld++] = (struct unheld){ addr, built_ns };
}

/*
 * A heap object (in no module): the variable whose first word points to
 * it (holders.h), from a table read from the live target at most once a
 * second, and for an address an earlier table did not name, at most
 * every HOLDERS_RETRY_NS.
 */
static const char *objectnames__held(struct objectnames *o, uint64_t addr,
				     bool live)
{
	uint64_t now = clock__monotonic_ns();
	const char *name = holders__find(o->holders, addr);
	struct holders *h;

	if (name || !live || !objectnames__worth_reading(o, addr, now))
		return name ? symcache__own(o->strings, strdup(name)) : NULL;
	if (holders__build(dwflsession__dwfl(o->session), o->pid, &h))
		return NULL;
	holders__free(o->holders);
	o->holders = h;
	o->holders_ns = now;
	name = holders__find(h, addr);
	if (!name) {
		objectnames__note_unheld(o, addr, now);
		return NULL;
	}
	return symcache__own(o->strings, strdup(name));
}

/* The DWARF type of the variable whose symbol starts at addr. */
static bool variable_type(struct modindex *idx, uint64_t addr, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	Dwarf_Die var;

	return !modindex__variable(idx, addr, &var) &&
	       dwarf_attr_integrate(&var, DW_AT_type, &attr) &&
	       dwarf_formref_die(&attr, type);
}

const char *objectnames__name(struct objectnames *o, uint64_t addr, bool live)
{
	Dwfl_Module *mod = dwflsession__module(o->session, addr);
	struct modindex *idx = mod ? dwflsession__index(mod) : NULL;
	Dwarf_Die type;
	const char *name;
	GElf_Off offset;
	char *full, *out;
	int kind;

	if (!idx)
		return objectnames__held(o, addr, live);
	name = modindex__symbol(idx, addr, &offset, &kind);
	if (!name || kind != STT_OBJECT)
		return NULL;
	full = demangle__symbol(name);
	if (!full)
		return NULL;
	/* With DWARF, the member's path ("queue.not_empty", memberpath.h). */
	if (variable_type(idx, addr - offset, &type) &&
	    !memberpath__name(&type, offset, full, &out)) {
		free(full);
		return symcache__own(o->strings, out);
	}
	if (!offset)
		return symcache__own(o->strings, full);
	if (asprintf(&out, "%s+0x%" PRIx64, full, (uint64_t)offset) < 0)
		out = NULL;
	free(full);
	return symcache__own(o->strings, out);
}

/* The lock passed at the call returning to ret_addr, by its pointer's type. */
const char *objectnames__argument(struct objectnames *o, uint64_t ret_addr,
				  bool condvar, bool *known)
{
	Dwfl_Module *mod = dwflsession__module(o->session, ret_addr - 1);
	struct modindex *idx = mod ? dwflsession__index(mod) : NULL;
	struct callarg_abi abi;
	Dwarf_Die *scopes = NULL;
	Dwarf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf;
	char *name;
	int n;

	*known = idx != NULL;	/* without the module, it may come later */
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (!idx || !elf || !gelf_getehdr(elf, &ehdr) ||
	    callarg__abi(ehdr.e_machine, &abi) ||
	    !dwfl_module_getdwarf(mod, &bias))
		return NULL;
	n = modindex__scopes(idx, ret_addr - 1, &scopes);
	if (callarg__lock_name(scopes, n, ret_addr - bias, &abi, condvar, &name))
		name = NULL;
	free(scopes);
	return name ? symcache__own(o->strings, name) : NULL;
}

/* What objectnames__find looks for, and what it found. */
struct object_search {
	const char *name;
	uint64_t start, size;
	int found;
};

static int find_object_in(Dwfl_Module *mod, void **userdata __attribute__((unused)),
			  const char *modname __attribute__((unused)),
			  Dwarf_Addr base __attribute__((unused)), void *arg)
{
	struct object_search *q = arg;
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &addr,
							   NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
		    s.st_shndx == SHN_UNDEF || strcmp(name, q->name))
			continue;
		q->start = addr;
		q->size = s.st_size;
		q->found++;
		break;
	}
	return DWARF_CB_OK;
}

static int objectnames__find_symbol(struct objectnames *o, const char *name,
				    uint64_t *start, uint64_t *size)
{
	struct object_search q = { .name = name };

	if (dwfl_getmodules(dwflsession__dwfl(o->session), find_object_in, &q,
			    0) < 0)
		return -EIO;
	if (!q.found)
		return -ENOENT;
	if (q.found > 1)
		return -ENOTUNIQ;
	*start = q.start;
	*size = q.size;
	return 0;
}

/* A member path ("queue.not_empty", "table[3].lock"), by DWARF. */
static int objectnames__find_member(struct objectnames *o, const char *name,
				    uint64_t *start, uint64_t *size)
{
	/* The variable's name ends at the first '.' or '[' ("ns::v.m"). */
	size_t len = strcspn(name, ".[");
	Dwfl_Module *mod;
	struct modindex *idx;
	Dwarf_Die type;
	uint64_t offset, base, bytes;
	char *symbol;
	int err;

	if (!name[len] || !len)
		return -ENOENT;
	symbol = strndup(name, len);
	if (!symbol)
		return -ENOMEM;
	err = objectnames__find_symbol(o, symbol, &base, &bytes);
	free(symbol);
	if (err)
		return err;
	mod = dwflsession__module(o->session, base);
	idx = mod ? dwflsession__index(mod) : NULL;
	if (!idx || !variable_type(idx, base, &type) ||
	    memberpath__find(&type, name + len, &offset, size))
		return -ENOENT;
	*start = base + offset;
	return 0;
}

int objectnames__find(struct objectnames *o, const char *name,
		      uint64_t *start, uint64_t *size)
{
	int err = objectnames__find_symbol(o, name, start, size);

	return err == -ENOENT ? objectnames__find_member(o, name, start, size)
			      : err;
}
