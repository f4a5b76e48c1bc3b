// SPDX-License-Identifier: GPL-2.0
/*
 * Why an index: dwarf_getscopes walks a CU's DIEs from the top on every
 * call, and dwfl_module_addrinfo scans the symbol table; on a CU of
 * 10,000 functions that was 2.2 ms per call site (make bench).  Here the
 * symbols and the DWARF subprograms' address ranges are sorted once per
 * module, on first use; a lookup is a binary search, then a descent
 * through one function's own blocks and inlined calls.
 *
 * Variables (for member paths, memberpath.c) are indexed apart, by
 * their DW_OP_addr, when an object of the module is first named: most
 * modules only ever name call sites.  Measured (make bench, tools):
 * libc with Debian's debug file, 836 variables in 17 ms, once, on top
 * of the ~130 ms its functions' index and DWARF cost; ld.so 1.5 ms; a
 * program of 10,000 functions 2.2 ms.
 *
 * The DWARF ranges and variables are the build's, shared by the modules
 * of every copy of it (modshare.c): a copy of a library or program seen
 * again is indexed by its symbols alone.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "modindex.h"
#include "modshare.h"
#include "array.h"

struct symbol {
	GElf_Addr lo;		/* target address */
	GElf_Xword size;
	const char *name;	/* libdwfl's, valid while the module is */
	int type;
	int rank;		/* binding: 0 global, 1 weak, 2 local */
};

struct modindex {
	Dwarf *dwarf;
	Dwarf_Addr bias;
	struct modshare *share;	/* the DWARF's ranges; NULL: no DWARF */
	/* A scan's results (DWARF addresses: target address - bias), until
	   handed to share. */
	struct modshare_func *funcs;
	size_t n_funcs, cap_funcs;
	struct modshare_var *vars;
	size_t n_vars, cap_vars;
	struct symbol *syms;
	size_t n_syms;
	bool dwarf_unsafe;	/* a string section runs past its end */
};

static int cmp_range(const void *pa, const void *pb)
{
	const struct modshare_func *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int cmp_symbol(const void *pa, const void *pb)
{
	const struct symbol *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	return strcmp(a->name, b->name);
}

static int modindex__add_range(struct modindex *idx, Dwarf_Addr lo,
			       Dwarf_Addr hi, Dwarf_Off die)
{
	if (array__grow(&idx->funcs, &idx->cap_funcs, idx->n_funcs + 1,
			sizeof(*idx->funcs)))
		return -ENOMEM;
	idx->funcs[idx->n_funcs++] = (struct modshare_func){ lo, hi, die };
	return 0;
}

/* What a scan keeps of a DIE: 0 or -ENOMEM. */
typedef int (*modindex_visit)(struct modindex *idx, Dwarf_Die *die);

/* Every DIE under parent outside functions, through namespaces and classes. */
static int modindex__scan(struct modindex *idx, Dwarf_Die *parent,
			  modindex_visit visit)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		int err = tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			  tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			  tag == DW_TAG_module
			  ? modindex__scan(idx, &child, visit) : visit(idx, &child);

		if (err)
			return err;
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

/* A subprogram's address ranges. */
static int modindex__visit_function(struct modindex *idx, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t at = 0;

	if (dwarf_tag(die) != DW_TAG_subprogram)
		return 0;
	while ((at = dwarf_ranges(die, at, &base, &lo, &hi)) > 0)
		if (lo < hi && modindex__add_range(idx, lo, hi, dwarf_dieoffset(die)))
			return -ENOMEM;
	return 0;
}

/*
 * Whether every DWARF section that a valid file ends with a NUL (the last
 * DIE's and abbreviation table's terminators, the string tables') does.
 * libdw reads DW_FORM_string values with strlen: in a file without that
 * last NUL (a target's, or a fuzzer's), it would read past the section's
 * end.  Such a module's DWARF is not used at all.  The sizes of the
 * first three go in key.
 */
static bool dwarf_sections_terminated(Dwarf *dwarf, struct modshare_key *key)
{
	uint64_t *sizes[] = {
		&key->info_size, &key->abbrev_size, &key->str_size, NULL,
	};
	static const char *const ends_with_nul[] = {
		".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str",
	};
	Elf *elf = dwarf_getelf(dwarf);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
			continue;
		for (size_t i = 0; i < sizeof(ends_with_nul) / sizeof(*ends_with_nul); i++) {
			if (strcmp(name, ends_with_nul[i]))
				continue;
			data = elf_getdata(scn, NULL);
			if (data && data->d_size &&
			    (!data->d_buf || shdr.sh_type == SHT_NOBITS ||
			     ((const char *)data->d_buf)[data->d_size - 1]))
				return false;
			if (sizes[i])
				*sizes[i] = shdr.sh_size;
		}
	}
	return true;
}

/* The build ID of mod's file, for the key; none: 0 (nothing shared). */
static void modindex__build_id(Dwfl_Module *mod, struct modshare_key *key)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	key->id_len = 0;
	if (n > 0 && (size_t)n <= sizeof(key->id)) {
		memcpy(key->id, bits, (size_t)n);
		key->id_len = (size_t)n;
	}
}

static int modindex__index_dwarf(struct modindex *idx, Dwfl_Module *mod)
{
	struct modshare_key key = { 0 };
	Dwarf_Die *cu = NULL;
	Dwarf_Addr cu_bias;
	int err;

	idx->dwarf = dwfl_module_getdwarf(mod, &idx->bias);
	if (idx->dwarf && !dwarf_sections_terminated(idx->dwarf, &key)) {
		idx->dwarf = NULL;
		idx->dwarf_unsafe = true;
	}
	if (!idx->dwarf)
		return 0;
	modindex__build_id(mod, &key);
	idx->share = modshare__find(&key);
	if (idx->share)
		return 0;
	while ((cu = dwfl_module_nextcu(mod, cu, &cu_bias)))
		if (modindex__scan(idx, cu, modindex__visit_function))
			return -ENOMEM;
	if (idx->n_funcs)
		qsort(idx->funcs, idx->n_funcs, sizeof(*idx->funcs), cmp_range);
	err = modshare__add(&key, idx->funcs, idx->n_funcs, &idx->share);
	idx->funcs = NULL;
	idx->n_funcs = idx->cap_funcs = 0;
	return err;
}

/* The string tables of an ELF file's symbol tables, as libdwfl reads them. */
struct strtabs {
	Elf *elf;
	const char *lo[2], *hi[2];
	int n;
};

static void strtabs__load(struct strtabs *t, Elf *elf)
{
	Elf_Scn *scn = NULL;

	t->elf = elf;
	t->n = 0;
	while (elf && t->n < 2 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(elf_getscn(elf, shdr.sh_link), NULL);
		if (!data || !data->d_buf)
			continue;
		t->lo[t->n] = data->d_buf;
		t->hi[t->n++] = (const char *)data->d_buf + data->d_size;
	}
}

/*
 * Whether a symbol's name ends inside its string table: libdwfl checks
 * only that it starts there, and a file whose table lacks the last NUL
 * (a target's, or a fuzzer's) would be read past its end.  A file whose
 * section headers cannot be read (cut short before them) has its
 * dynamic symbols read through PT_DYNAMIC: those names are taken as
 * libdwfl gives them.
 */
static bool strtabs__terminated(struct strtabs *t, Elf *elf, const char *name)
{
	if (elf != t->elf)
		strtabs__load(t, elf);
	for (int i = 0; i < t->n; i++)
		if (name >= t->lo[i] && name < t->hi[i])
			return memchr(name, 0, (size_t)(t->hi[i] - name)) != NULL;
	return !t->n;
}

static int modindex__index_symbols(struct modindex *idx, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct strtabs tabs = { 0 };

	if (n <= 0)
		return 0;
	idx->syms = calloc((size_t)n, sizeof(*idx->syms));
	if (!idx->syms)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		int bind = GELF_ST_BIND(sym.st_info);

		if (!name || !strtabs__terminated(&tabs, elf, name) || !*name ||
		    sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_OBJECT))
			continue;
		idx->syms[idx->n_syms++] = (struct symbol){
			.lo = addr,
			.size = sym.st_size,
			.name = name,
			.type = type,
			.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
		};
	}
	if (idx->n_syms)
		qsort(idx->syms, idx->n_syms, sizeof(*idx->syms), cmp_symbol);
	return 0;
}

int modindex__build(Dwfl_Module *mod, struct modindex **out)
{
	struct modindex *idx = calloc(1, sizeof(*idx));
	int err;

	if (!idx)
		return -ENOMEM;
	err = modindex__index_symbols(idx, mod);
	if (!err)
		err = modindex__index_dwarf(idx, mod);
	if (err) {
		modindex__free(idx);
		return err;
	}
	*out = idx;
	return 0;
}

void modindex__free(struct modindex *idx)
{
	if (!idx)
		return;
	modshare__put(idx->share);
	free(idx->funcs);
	free(idx->syms);
	free(idx->vars);
	free(idx);
}

const char *modindex__symbol(const struct modindex *idx, GElf_Addr addr,
			     GElf_Off *offset, int *type)
{
	size_t lo = 0, hi = idx->n_syms;

	/* The first symbol starting above addr; candidates precede it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->syms[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct symbol *s = &idx->syms[lo];
		size_t first = lo;

		/* The best-ranked alias at this address comes first. */
		while (first > 0 && idx->syms[first - 1].lo == s->lo)
			first--;
		for (size_t i = first; i <= lo; i++) {
			s = &idx->syms[i];
			/* addr >= s->lo; a size past the address space's end
			 * must not wrap around. */
			if (addr - s->lo < s->size || (!s->size && addr == s->lo)) {
				*offset = addr - s->lo;
				*type = s->type;
				return s->name;
			}
		}
		/* A larger symbol further down may still enclose addr. */
		lo = first;
		if (addr - idx->syms[first].lo > (1u << 24))
			break;
	}
	return NULL;
}

static bool is_scope(int tag)
{
	return tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
	       tag == DW_TAG_with_stmt;
}

int modindex__scopes(const struct modindex *idx, GElf_Addr pc,
		     Dwarf_Die **scopes)
{
	Dwarf_Addr at = pc - idx->bias;
	size_t lo = 0, hi = 0, depth = 0, cap = 0;
	const struct modshare_func *funcs;
	Dwarf_Die *path = NULL, die;

	*scopes = NULL;
	if (!idx->share)
		return 0;
	funcs = modshare__funcs(idx->share, &hi);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (funcs[mid].lo <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Functions do not overlap: only the nearest start can hold pc. */
	if (!lo || at >= funcs[lo - 1].hi ||
	    !dwarf_offdie(idx->dwarf, funcs[lo - 1].die, &die))
		return 0;
	if (array__grow(&path, &cap, 8, sizeof(*path)))
		return 0;
	path[depth++] = die;
	for (;;) {
		Dwarf_Die child;
		bool deeper = false;

		if (dwarf_child(&path[depth - 1], &child))
			break;
		do {
			if (is_scope(dwarf_tag(&child)) && dwarf_haspc(&child, at) > 0) {
				deeper = true;
				break;
			}
		} while (!dwarf_siblingof(&child, &child));
		if (!deeper)
			break;
		if (array__grow(&path, &cap, depth + 1, sizeof(*path)))
			break;
		path[depth++] = child;
	}
	/* Innermost first, as dwarf_getscopes. */
	for (size_t i = 0; i < depth / 2; i++) {
		Dwarf_Die t = path[i];

		path[i] = path[depth - 1 - i];
		path[depth - 1 - i] = t;
	}
	*scopes = path;
	return (int)depth;
}

/* A static variable's address: DW_OP_addr (or its DWARF 5 index form). */
static bool variable_address(Dwarf_Die *var, Dwarf_Addr *out)
{
	Dwarf_Attribute attr, addr;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(var, DW_AT_location, &attr) ||
	    dwarf_getlocation(&attr, &ops, &n) || n != 1)
		return false;
	if (ops[0].atom == DW_OP_addr) {
		*out = ops[0].number;
		return true;
	}
	return (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) &&
	       !dwarf_getlocation_attr(&attr, &ops[0], &addr) &&
	       !dwarf_formaddr(&addr, out);
}

static int cmp_var(const void *pa, const void *pb)
{
	const struct modshare_var *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->die < b->die ? -1 : a->die > b->die;
}

/* A variable with an address of its own. */
static int modindex__visit_variable(struct modindex *idx, Dwarf_Die *die)
{
	Dwarf_Addr addr;

	if (dwarf_tag(die) != DW_TAG_variable || !variable_address(die, &addr))
		return 0;
	if (array__grow(&idx->vars, &idx->cap_vars, idx->n_vars + 1,
			sizeof(*idx->vars)))
		return -ENOMEM;
	idx->vars[idx->n_vars++] = (struct modshare_var){ addr,
							  dwarf_dieoffset(die) };
	return 0;
}

/* The build's variables, indexed for every module of it. */
static int modindex__index_vars(struct modindex *idx)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;

	while (!dwarf_get_units(idx->dwarf, cu, &cu, NULL, NULL, &cudie, NULL))
		if (modindex__scan(idx, &cudie, modindex__visit_variable)) {
			free(idx->vars);
			idx->vars = NULL;
			idx->n_vars = idx->cap_vars = 0;
			return -ENOMEM;
		}
	if (idx->n_vars)
		qsort(idx->vars, idx->n_vars, sizeof(*idx->vars), cmp_var);
	modshare__set_vars(idx->share, idx->vars, idx->n_vars);
	idx->vars = NULL;
	idx->n_vars = idx->cap_vars = 0;
	return 0;
}

static int cmp_var_addr(const void *key, const void *pv)
{
	const Dwarf_Addr *a = key;
	const struct modshare_var *v = pv;

	return *a < v->addr ? -1 : *a > v->addr;
}

int modindex__variable(struct modindex *idx, GElf_Addr addr, Dwarf_Die *die)
{
	Dwarf_Addr at = addr - idx->bias;
	const struct modshare_var *vars, *v, *end;
	size_t n;
	int err;

	if (!idx->share)
		return -ENOENT;
	if (!modshare__vars(idx->share, &vars, &n) &&
	    (err = modindex__index_vars(idx)))
		return err;
	modshare__vars(idx->share, &vars, &n);
	v = n ? bsearch(&at, vars, n, sizeof(*v), cmp_var_addr) : NULL;
	if (!v)
		return -ENOENT;
	/* Definitions at one address (C++'s inline variables): each in turn. */
	while (v > vars && v[-1].addr == at)
		v--;
	for (end = vars + n; v < end && v->addr == at; v++) {
		Dwarf_Attribute type;

		/* A definition may leave its type to its declaration. */
		if (dwarf_offdie(idx->dwarf, v->die, die) &&
		    dwarf_attr_integrate(die, DW_AT_type, &type))
			return 0;
	}
	return -ENOENT;
}

bool modindex__dwarf_usable(const struct modindex *idx)
{
	return idx && !idx->dwarf_unsafe;
}

bool modindex__name_ends(Elf *elf, const char *name)
{
	struct strtabs tabs = { 0 };

	return strtabs__terminated(&tabs, elf, name);
}
