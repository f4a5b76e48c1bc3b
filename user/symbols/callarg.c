// SPDX-License-Identifier: GPL-2.0
/*
 * Heap locks named by type: a lock in a malloc'ed struct has no symbol,
 * but the code that waited on it usually took it through a typed
 * pointer ("pthread_mutex_lock(&q->lock)"), and the caller's DWARF
 * says so.  The row's call site is the return address of that call.
 *
 * Chosen: GCC's call-site records (-O1 and up, DWARF 4's GNU form and
 * DWARF 5's).  The DW_TAG_call_site whose return pc is the row's call
 * site has a DW_TAG_call_site_parameter per argument register, whose
 * DW_AT_call_value gives the argument in the caller's terms: a register
 * plus an offset (DW_OP_bregN k), or the value a register had at the
 * function's entry plus one (DW_OP_entry_value(DW_OP_regN)
 * DW_OP_plus_uconst k).  The variable or parameter whose location at
 * the same pc is that same register (its location list entry DW_OP_regN,
 * or DW_OP_bregN j DW_OP_stack_value: the register minus j) gives the
 * pointer's type and the member's offset, k - j; for an entry value,
 * the parameter that arrived in that register.  memberpath.c names the
 * offset in the pointed-to type, and it must land on a lock of the
 * row's kind (a condvar for condvar rows, another lock otherwise): the
 * same pc, the same register, the declared type -- nothing guessed.
 * Every candidate variable must agree, or nothing is said.
 *
 * Rejected: reading the target's registers or memory (the wait is over
 * when the report is written, and a pointer's value says nothing of its
 * type); relating a register to a variable at another pc (a register
 * can be reassigned in between); disassembling back from the call to
 * the instruction that set the register (libcapstone could, but a
 * branch into the range defeats it without a control-flow graph); the
 * allocation's type at malloc (a probe on every allocation costs too
 * much, and malloc knows no type).  Where the compiler keeps the
 * member's address in a register no variable is described by (GCC does
 * when the pointer itself is also needed after the call), or at -O0
 * (no call-site records), the lock keeps its address.
 */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callarg.h"
#include "memberpath.h"

#define MAX_CANDIDATES 8

/* A register operand: DW_OP_regN, DW_OP_regx N. */
static bool op_register(const Dwarf_Op *op, unsigned int *reg)
{
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
		*reg = op->atom - DW_OP_reg0;
		return true;
	}
	if (op->atom == DW_OP_regx) {
		*reg = (unsigned int)op->number;
		return true;
	}
	return false;
}

/*
 * The register a DW_OP_entry_value op of attr reads (its block is one
 * DW_OP_regN or DW_OP_regx N); -1: another block.
 */
static int entry_register(Dwarf_Attribute *attr, const Dwarf_Op *ops,
			  size_t n)
{
	Dwarf_Attribute block;
	Dwarf_Op *inner;
	size_t len;
	unsigned int reg;

	if (!n || (ops[0].atom != DW_OP_entry_value &&
		   ops[0].atom != DW_OP_GNU_entry_value) ||
	    dwarf_getlocation_attr(attr, &ops[0], &block) ||
	    dwarf_getlocation(&block, &inner, &len) || len != 1 ||
	    !op_register(&inner[0], &reg))
		return -1;
	return (int)reg;
}

/* A constant pushed by op: DW_OP_litN, DW_OP_constNu/s. */
static bool op_constant(const Dwarf_Op *op, int64_t *value)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*value = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
	case DW_OP_const8u: case DW_OP_constu:
	case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
	case DW_OP_const8s: case DW_OP_consts:
		*value = (int64_t)op->number;
		return true;
	}
	return false;
}

int callarg__parse(const Dwarf_Op *ops, size_t n, int entry_reg,
		   bool location, struct callarg_value *out)
{
	bool stack_value = false;
	size_t i = 1;

	if (!n)
		return -ENOTSUP;
	*out = (struct callarg_value){ 0 };
	if (op_register(&ops[0], &out->reg))
		return location && n == 1 ? 0 : -ENOTSUP;
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		out->reg = ops[0].atom - DW_OP_breg0;
		out->offset = (int64_t)ops[0].number;
	} else if (ops[0].atom == DW_OP_bregx) {
		out->reg = (unsigned int)ops[0].number;
		out->offset = (int64_t)ops[0].number2;
	} else if (ops[0].atom == DW_OP_entry_value ||
		   ops[0].atom == DW_OP_GNU_entry_value) {
		if (entry_reg < 0)
			return -ENOTSUP;
		out->reg = (unsigned int)entry_reg;
		out->entry = true;
	} else {
		return -ENOTSUP;
	}
	while (i < n) {
		int64_t k;

		if (ops[i].atom == DW_OP_plus_uconst) {
			out->offset += (int64_t)ops[i].number;
			i++;
		} else if (op_constant(&ops[i], &k) && i + 1 < n &&
			   (ops[i + 1].atom == DW_OP_plus ||
			    ops[i + 1].atom == DW_OP_minus)) {
			out->offset += ops[i + 1].atom == DW_OP_plus ? k : -k;
			i += 2;
		} else if (ops[i].atom == DW_OP_stack_value && i + 1 == n) {
			stack_value = true;
			i++;
		} else {
			return -ENOTSUP;
		}
	}
	return stack_value == location ? 0 : -ENOTSUP;
}

int callarg__abi(int machine, struct callarg_abi *out)
{
	switch (machine) {
	case EM_X86_64:		/* rdi, rsi */
		*out = (struct callarg_abi){ .arg_reg = { 5, 4 } };
		return 0;
	case EM_AARCH64:	/* x0, x1 */
		*out = (struct callarg_abi){ .arg_reg = { 0, 1 } };
		return 0;
	}
	return -ENOTSUP;
}

static bool die_ref(Dwarf_Die *die, unsigned int name, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	return dwarf_attr_integrate(die, name, &attr) &&
	       dwarf_formref_die(&attr, out);
}

static bool is_call_site(int tag)
{
	return tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site;
}

/* The call site among the scopes' children whose return pc is ret. */
static bool call_site_at(Dwarf_Die *scopes, int n, Dwarf_Addr ret,
			 Dwarf_Die *out)
{
	for (int s = 0; s < n; s++) {
		Dwarf_Die child;

		if (dwarf_child(&scopes[s], &child))
			continue;
		do {
			Dwarf_Attribute attr;
			Dwarf_Addr pc;

			if (!is_call_site(dwarf_tag(&child)))
				continue;
			if (!(dwarf_attr(&child, DW_AT_call_return_pc, &attr) ?
			      !dwarf_formaddr(&attr, &pc) : !dwarf_lowpc(&child, &pc)))
				continue;
			if (pc == ret) {
				*out = child;
				return true;
			}
		} while (!dwarf_siblingof(&child, &child));
	}
	return false;
}

/* Whether the callee waits on a condvar (its second argument: the mutex). */
static bool is_cond_wait(Dwarf_Die *site)
{
	static const char *const waits[] = {
		"pthread_cond_wait", "pthread_cond_timedwait",
		"pthread_cond_clockwait", "cnd_wait", "cnd_timedwait",
	};
	Dwarf_Die callee;
	const char *name;

	if (!die_ref(site, DW_AT_call_origin, &callee) &&
	    !die_ref(site, DW_AT_abstract_origin, &callee))
		return false;
	name = dwarf_diename(&callee);
	for (size_t i = 0; name && i < sizeof(waits) / sizeof(waits[0]); i++)
		if (!strcmp(name, waits[i]))
			return true;
	return false;
}

/* The value the call site passes in register reg. */
static int call_value_of(Dwarf_Die *site, unsigned int reg,
			 struct callarg_value *out)
{
	Dwarf_Die child;

	if (dwarf_child(site, &child))
		return -ENOENT;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute attr;
		Dwarf_Op *ops;
		size_t n;
		unsigned int at;

		if ((tag != DW_TAG_call_site_parameter &&
		     tag != DW_TAG_GNU_call_site_parameter) ||
		    !dwarf_attr(&child, DW_AT_location, &attr) ||
		    dwarf_getlocation(&attr, &ops, &n) || n != 1 ||
		    !op_register(&ops[0], &at) || at != reg)
			continue;
		if (!dwarf_attr(&child, DW_AT_call_value, &attr) &&
		    !dwarf_attr(&child, DW_AT_GNU_call_site_value, &attr))
			return -ENOENT;
		if (dwarf_getlocation(&attr, &ops, &n))
			return -ENOENT;
		return callarg__parse(ops, n, entry_register(&attr, ops, n),
				      false, out) ? -ENOENT : 0;
	} while (!dwarf_siblingof(&child, &child));
	return -ENOENT;
}

/* A variable whose value is a register plus an offset at some pc. */
struct candidate {
	Dwarf_Die type;		/* the variable's declared type */
	int64_t delta;		/* argument - the variable's value */
};

/* The value of var's location at pc, as register + offset. */
static bool variable_value(Dwarf_Die *var, Dwarf_Addr pc,
			   struct callarg_value *out)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t len;

	return dwarf_attr(var, DW_AT_location, &attr) &&
	       dwarf_getlocation_addr(&attr, pc, &expr, &len, 1) == 1 &&
	       !callarg__parse(expr, len, entry_register(&attr, expr, len),
			       true, out);
}

/*
 * The variables and parameters of scope whose value at pc is the
 * register arg is computed from: each its type and the offset between.
 */
static void candidates_in(Dwarf_Die *scope, Dwarf_Addr pc,
			  const struct callarg_value *arg,
			  struct candidate *out, size_t *n)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		struct callarg_value v;

		if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) ||
		    *n == MAX_CANDIDATES || !variable_value(&child, pc, &v) ||
		    v.reg != arg->reg || v.entry != arg->entry ||
		    !die_ref(&child, DW_AT_type, &out[*n].type))
			continue;
		out[*n].delta = arg->offset - v.offset;
		(*n)++;
	} while (!dwarf_siblingof(&child, &child));
}

/*
 * An entry value: the subprogram's parameter that arrived in the
 * register (its location at the function's entry).
 */
static void entry_candidates(Dwarf_Die *subprogram,
			     const struct callarg_value *arg,
			     struct candidate *out, size_t *n)
{
	struct callarg_value at_entry = { .reg = arg->reg, .offset = arg->offset };
	Dwarf_Addr entry;

	if (dwarf_tag(subprogram) != DW_TAG_subprogram ||
	    dwarf_entrypc(subprogram, &entry))
		return;
	candidates_in(subprogram, entry, &at_entry, out, n);
}

static bool is_cond_type(const char *lock)
{
	static const char *const conds[] = {
		"pthread_cond_t", "cnd_t", "condition_variable",
		"condition_variable_any", "GCond", "QemuCond", "Condvar",
	};
	size_t len = strcspn(lock, "<");

	for (size_t i = 0; i < sizeof(conds) / sizeof(conds[0]); i++)
		if (strlen(conds[i]) == len && !strncmp(lock, conds[i], len))
			return true;
	return false;
}

/*
 * "(struct queue *)", "(queue_t *)", "(Queue *)": the pointed-to type
 * as declared (a typedef's name; C's struct, union and enum keywords),
 * qualifiers left out.  NULL: an anonymous type.
 */
static char *pointer_text(Dwarf_Die *pointee)
{
	Dwarf_Die at = *pointee, cu;
	const char *keyword = "";
	char *text;

	while (dwarf_tag(&at) == DW_TAG_const_type ||
	       dwarf_tag(&at) == DW_TAG_volatile_type ||
	       dwarf_tag(&at) == DW_TAG_restrict_type ||
	       dwarf_tag(&at) == DW_TAG_atomic_type)
		if (!die_ref(&at, DW_AT_type, &at))
			return NULL;
	if (!dwarf_diename(&at))
		return NULL;
	if (dwarf_diecu(&at, &cu, NULL, NULL)) {
		int lang = dwarf_srclang(&cu);
		bool c = lang == DW_LANG_C89 || lang == DW_LANG_C ||
			 lang == DW_LANG_C99 || lang == DW_LANG_C11 ||
			 lang == 0x2c /* DW_LANG_C17 */;

		if (c && dwarf_tag(&at) == DW_TAG_structure_type)
			keyword = "struct ";
		else if (c && dwarf_tag(&at) == DW_TAG_union_type)
			keyword = "union ";
	}
	if (asprintf(&text, "(%s%s *)->", keyword, dwarf_diename(&at)) < 0)
		return NULL;
	return text;
}

/* The name of candidate c's member, if it is a lock of the row's kind. */
static char *candidate_name(const struct candidate *c, bool condvar)
{
	Dwarf_Die type = c->type, pointee;
	const char *lock;
	char *base, *name = NULL;
	size_t len;

	if (c->delta < 0 || dwarf_peel_type(&type, &type) ||
	    dwarf_tag(&type) != DW_TAG_pointer_type ||
	    !die_ref(&type, DW_AT_type, &pointee))
		return NULL;
	base = pointer_text(&pointee);
	if (!base)
		return NULL;
	len = strlen(base);
	if (memberpath__lock(&pointee, (uint64_t)c->delta, base, &lock, &name) ||
	    is_cond_type(lock) != condvar || strlen(name) <= len ||
	    (name[len] != '.' && name[len] != '[')) {
		free(name);	/* the pointer is the lock's own: no member */
		free(base);
		return NULL;
	}
	free(base);
	/* "(struct q *)->.lock" reads "(struct q *)->lock". */
	if (name[len] == '.')
		memmove(name + len, name + len + 1, strlen(name + len + 1) + 1);
	return name;
}

int callarg__lock_name(Dwarf_Die *scopes, int n_scopes, Dwarf_Addr ret,
		       const struct callarg_abi *abi, bool condvar,
		       char **out)
{
	struct candidate cands[MAX_CANDIDATES];
	struct callarg_value arg;
	Dwarf_Die site;
	size_t n = 0;
	char *name = NULL;
	unsigned int reg;

	*out = NULL;
	if (n_scopes <= 0 || !call_site_at(scopes, n_scopes, ret, &site))
		return -ENOENT;
	reg = abi->arg_reg[!condvar && is_cond_wait(&site) ? 1 : 0];
	if (call_value_of(&site, reg, &arg))
		return -ENOENT;
	for (int s = 0; s < n_scopes; s++)
		candidates_in(&scopes[s], ret - 1, &arg, cands, &n);
	if (arg.entry)
		entry_candidates(&scopes[n_scopes - 1], &arg, cands, &n);
	/* Every variable that holds the pointer must say the same. */
	for (size_t i = 0; i < n; i++) {
		char *other = candidate_name(&cands[i], condvar);

		if (!other)
			continue;
		if (name && strcmp(name, other)) {
			free(other);
			free(name);
			return -ENOENT;
		}
		free(name);
		name = other;
	}
	if (!name)
		return -ENOENT;
	*out = name;
	return 0;
}
