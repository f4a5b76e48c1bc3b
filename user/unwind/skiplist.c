// SPDX-License-Identifier: GPL-2.0
/*
 * Names are matched as the symbolizer prints them (demangled), against
 * the symbol table, not DWARF: a function that has a symbol has an
 * extent, which is what the kernel needs, and stripped files keep
 * .dynsym.  An inlined wrapper has no range of its own and cannot be
 * skipped; its caller's frame is the call site anyway.
 *
 * The built-in wrappers are a hundred globs tried against every function
 * of every module: a name is tried only against the globs whose prefix
 * starts with its first byte and those without a prefix (in the list's
 * order: the first match wins), each glob's literal prefix is compared
 * first, and a glob without one looks for its longest literal run before
 * fnmatch runs, so a name costs its demangling and a few string compares.  A stripped
 * library's static slow path (GLib's g_mutex_lock_slowpath) has no
 * symbol at all: the wrappers that say so (WRAPPER_F_CALLEES) are
 * decoded (capstone) for direct calls and jumps to code no symbol
 * names, and the .eh_frame FDE at the target bounds that function.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "demangle.h"
#include "skiplist.h"
#include "wrappers.h"

/* Bytes of a wrapper decoded for its symbol-less callees. */
#define CALLEES_CODE_MAX 4096

struct skip_glob {
	char *glob;
	size_t prefix;		/* literal characters before the first [*?\ */
	/* A glob with no prefix: its longest run of literal characters,
	   which every name it matches contains (none: 0). */
	size_t infix, infix_len;
	uint32_t attrs;		/* row attributes of its functions */
	unsigned int flags;	/* enum wrapper_flags */
	bool user;
};

/* The globs a name that starts with one byte can match, in list order. */
struct skip_bucket {
	uint32_t *v;
	size_t n, cap;
};

struct skiplist {
	struct skip_glob *globs;
	size_t n, cap;
	/* By a name's first byte: the globs whose prefix starts with it and
	   those without a prefix.  The hundred built-in globs were all
	   tried for every function of every module. */
	struct skip_bucket by_first[256];
	bool user;
};

/*
 * A glob that starts with a wildcard ("*std::barrier<*>::*") has no
 * prefix to compare, and fnmatch ran for it against every function of
 * every module (a third of the matching's time for a C++ program):
 * its longest literal run is looked for first (memmem).  Only for globs
 * of '*' and '?' alone: a bracket or an escape would need parsing.
 */
static void skip_glob__infix(struct skip_glob *g)
{
	const char *glob = g->glob;

	g->infix = g->infix_len = 0;
	if (g->prefix || strpbrk(glob, "[\\"))
		return;
	for (size_t at = 0; glob[at];) {
		size_t run = strcspn(glob + at, "*?");

		if (run > g->infix_len) {
			g->infix = at;
			g->infix_len = run;
		}
		at += run;
		at += glob[at] != '\0';
	}
}

static int skiplist__push(struct skiplist *list, const char *glob,
			  int type, unsigned int flags, bool user)
{
	struct skip_glob *g;

	if (array__grow(&list->globs, &list->cap, list->n + 1,
			sizeof(*list->globs)))
		return -ENOMEM;
	g = &list->globs[list->n];
	g->glob = strdup(glob);
	if (!g->glob)
		return -ENOMEM;
	g->prefix = strcspn(glob, "*?[\\");
	skip_glob__infix(g);
	g->attrs = SP_UNWIND_A_SKIP;
	if (type != WRAPPER_UNTYPED)
		g->attrs |= SP_UNWIND_A_TYPE(type);
	if (flags & WRAPPER_F_WHOLE)
		g->attrs |= SP_UNWIND_A_WHOLE;
	g->flags = flags;
	g->user = user;
	list->n++;
	list->user |= user;
	/* A glob goes after those pushed before it, in each of its buckets. */
	for (unsigned int c = 0; c < 256; c++) {
		struct skip_bucket *b = &list->by_first[c];

		if (g->prefix && (unsigned char)g->glob[0] != c)
			continue;
		if (array__grow(&b->v, &b->cap, b->n + 1, sizeof(*b->v)))
			return -ENOMEM;
		b->v[b->n++] = (uint32_t)(list->n - 1);
	}
	return 0;
}

int skiplist__new(const char *const *globs, size_t n, struct skiplist **out)
{
	struct skiplist *list = calloc(1, sizeof(*list));
	int err = 0;

	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		err = skiplist__push(list, globs[i], WRAPPER_UNTYPED, 0, true);
	if (err) {
		skiplist__free(list);
		return err;
	}
	*out = list;
	return 0;
}

int skiplist__add_wrappers(struct skiplist *list)
{
	size_t n;
	const struct wrapper *w = wrappers__table(&n);
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = skiplist__push(list, w[i].glob, w[i].type, w[i].flags,
				     false);
	return err;
}

void skiplist__free(struct skiplist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		free(list->globs[i].glob);
	for (unsigned int c = 0; c < 256; c++)
		free(list->by_first[c].v);
	free(list->globs);
	free(list);
}

bool skiplist__empty(const struct skiplist *list)
{
	return !list || !list->n;
}

bool skiplist__has_user_globs(const struct skiplist *list)
{
	return list && list->user;
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

static bool glob_matches(const struct skip_glob *g, const char *name,
			 size_t len)
{
	if (len < g->prefix || strncmp(name, g->glob, g->prefix))
		return false;
	if (g->infix_len && !memmem(name, len, g->glob + g->infix,
				    g->infix_len))
		return false;
	return !fnmatch(g->glob, name, 0);
}

static const struct skip_glob *skiplist__find(const struct skiplist *list,
					      const char *demangled)
{
	size_t len = strlen(demangled);
	size_t base = skiplist__base_len(demangled);
	const struct skip_glob *found = NULL;
	const struct skip_bucket *bucket;
	char *short_name = NULL;

	if (skiplist__empty(list))
		return NULL;
	if (base < len) {
		short_name = strndup(demangled, base);
		if (!short_name)
			return NULL;
	}
	/* The short name starts as the whole one: one bucket for both. */
	bucket = &list->by_first[(unsigned char)demangled[0]];
	for (size_t i = 0; i < bucket->n && !found; i++) {
		const struct skip_glob *g = &list->globs[bucket->v[i]];

		if (glob_matches(g, demangled, len) ||
		    (short_name && glob_matches(g, short_name, base)))
			found = g;
	}
	free(short_name);
	return found;
}

bool skiplist__lookup(const struct skiplist *list, const char *demangled,
		      uint32_t *attrs, bool *user)
{
	const struct skip_glob *g = skiplist__find(list, demangled);

	if (!g)
		return false;
	if (attrs)
		*attrs = g->attrs;
	if (user)
		*user = g->user;
	return true;
}

bool skiplist__match(const struct skiplist *list, const char *demangled)
{
	return skiplist__find(list, demangled) != NULL;
}

struct range_collect {
	const struct skiplist *list;
	struct skiplist_range *v;
	size_t n, cap;
	struct cfitable_range *funcs;	/* every function symbol */
	size_t n_funcs, cap_funcs;
	struct cfitable_range *callers;	/* WRAPPER_F_CALLEES matches */
	uint32_t *caller_attrs;
	size_t n_callers, cap_callers, cap_attrs;
};

static int range_collect__push(struct range_collect *c, uint64_t start,
			       uint64_t end, uint32_t attrs, bool user)
{
	if (array__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->n++] = (struct skiplist_range){ start, end, attrs, user };
	return 0;
}

static int skiplist__collect(void *ctx, const char *name, uint64_t vaddr,
			     uint64_t size)
{
	struct range_collect *c = ctx;
	const char *at = strchr(name, '@');
	char *bare = at ? strndup(name, (size_t)(at - name)) : NULL;
	const struct skip_glob *g;
	char *demangled;

	if (at && !bare)
		return -ENOMEM;
	if (!size) {
		free(bare);
		return 0;
	}
	if (array__grow(&c->funcs, &c->cap_funcs, c->n_funcs + 1,
			sizeof(*c->funcs))) {
		free(bare);
		return -ENOMEM;
	}
	c->funcs[c->n_funcs++] = (struct cfitable_range){ vaddr, vaddr + size };
	demangled = demangle__name(bare ? bare : name);
	free(bare);
	if (!demangled)
		return -ENOMEM;
	g = skiplist__find(c->list, demangled);
	free(demangled);
	if (!g)
		return 0;
	if (g->flags & WRAPPER_F_CALLEES) {
		if (array__grow(&c->callers, &c->cap_callers, c->n_callers + 1,
				sizeof(*c->callers)) ||
		    array__grow(&c->caller_attrs, &c->cap_attrs,
				c->n_callers + 1, sizeof(*c->caller_attrs)))
			return -ENOMEM;
		c->callers[c->n_callers] = (struct cfitable_range){
			vaddr, vaddr + size };
		c->caller_attrs[c->n_callers++] = g->attrs;
	}
	return range_collect__push(c, vaddr, vaddr + size, g->attrs, g->user);
}

static int cmp_func(const void *pa, const void *pb)
{
	const struct cfitable_range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Whether some function symbol's extent holds addr (funcs sorted). */
static bool range_collect__named(const struct range_collect *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n_funcs;

	/* The last function starting at or before addr; extents may nest. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->funcs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (addr < c->funcs[i].end)
			return true;
	return false;
}

static bool direct_branch(const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x86 = &insn->detail->x86;
	bool branch = false;

	for (uint8_t g = 0; g < insn->detail->groups_count; g++)
		if (insn->detail->groups[g] == CS_GRP_JUMP ||
		    insn->detail->groups[g] == CS_GRP_CALL)
			branch = true;
	if (!branch || x86->op_count != 1 || x86->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x86->operands[0].imm;
	return true;
}

/* Adds the symbol-less functions one wrapper calls or jumps to. */
static int skiplist__callees(struct range_collect *c, struct elfimage *image,
			     const struct cfitable *cfi, csh cs,
			     struct cfitable_range f, uint32_t attrs)
{
	uint64_t offset, size = f.end - f.start, address = f.start;
	const uint8_t *p;
	Elf_Data *data;
	cs_insn *insn;
	int err = 0;

	if (size > CALLEES_CODE_MAX)
		size = CALLEES_CODE_MAX;
	if (elfimage__file_offset(image, f.start, &offset))
		return 0;
	data = elf_getdata_rawchunk(elfimage__elf(image), (int64_t)offset,
				    size, ELF_T_BYTE);
	if (!data || !data->d_buf)
		return 0;
	p = data->d_buf;
	size = data->d_size;
	insn = cs_malloc(cs);
	if (!insn)
		return -ENOMEM;
	while (!err && cs_disasm_iter(cs, &p, &size, &address, insn)) {
		struct cfitable_range callee;
		uint64_t target;

		if (!direct_branch(insn, &target) ||
		    (target >= f.start && target < f.end) ||
		    range_collect__named(c, target))
			continue;
		if (cfitable__function_at(cfi, target, &callee) ||
		    callee.start != target)
			continue;	/* not a function's entry (PLT...) */
		err = range_collect__push(c, callee.start, callee.end, attrs,
					  false);
	}
	cs_free(insn, 1);
	return err;
}

static int skiplist__follow_callees(struct range_collect *c,
				    struct elfimage *image,
				    const struct cfitable *cfi)
{
	int err = 0;
	csh cs;

	if (!c->n_callers || !cfi)
		return 0;
	qsort(c->funcs, c->n_funcs, sizeof(*c->funcs), cmp_func);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;	/* the symbols' ranges are still there */
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (size_t i = 0; i < c->n_callers && !err; i++)
		err = skiplist__callees(c, image, cfi, cs, c->callers[i],
					c->caller_attrs[i]);
	cs_close(&cs);
	return err;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct skiplist_range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

int skiplist__ranges(const struct skiplist *list, struct elfimage *image,
		     const struct cfitable *cfi, struct skiplist_range **out,
		     size_t *n)
{
	struct range_collect c = { .list = list };
	size_t j = 0;
	int err;

	*out = NULL;
	*n = 0;
	if (skiplist__empty(list))
		return 0;
	err = elfimage__for_each_func(image, skiplist__collect, &c);
	if (err == -ENOENT)
		err = 0;
	if (!err)
		err = skiplist__follow_callees(&c, image, cfi);
	free(c.funcs);
	free(c.callers);
	free(c.caller_attrs);
	if (err || !c.n) {
		free(c.v);
		return err;
	}
	qsort(c.v, c.n, sizeof(*c.v), cmp_range);
	for (size_t i = 1; i < c.n; i++) {
		if (c.v[i].start < c.v[j].end ||
		    (c.v[i].start == c.v[j].end && c.v[i].attrs == c.v[j].attrs)) {
			if (c.v[i].end > c.v[j].end)
				c.v[j].end = c.v[i].end;
			c.v[j].user |= c.v[i].user;
		} else {
			c.v[++j] = c.v[i];
		}
	}
	*out = c.v;
	*n = j + 1;
	return 0;
}
