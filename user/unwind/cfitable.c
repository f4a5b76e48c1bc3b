// SPDX-License-Identifier: GPL-2.0
/*
 * Why a table, and how it is built.  The BPF program that steps out of
 * libc's frames cannot run a DWARF CFI interpreter: it needs, for each pc,
 * one rule of the form "CFA = rsp|rbp + k, ra at CFA-8, rbp unchanged or
 * at CFA+j".  This module precomputes those rules per address range.
 *
 * Chosen: libdw evaluates the CFI.  dwarf_next_cfi lists the FDEs; their
 * [initial_location, +address_range) is decoded here (libdw does not
 * expose it), then each FDE is stepped with dwarf_cfi_addrframe at its
 * start and at every end that dwarf_frame_info reports: one call per rule
 * change.  For glibc 2.36 (1.4 MB of .text, 3713 FDEs) that is 25,212
 * calls and ~10 ms.  Neighbouring rows with the same rule, within an FDE
 * (a change to a register the walker does not use) or across FDEs, are
 * merged: 24,870 rows of 32 bytes remain, 9 of them unsupported.  Where
 * FDEs overlap, an address is walked once, under the rule libdw's own
 * lookup picks.  .debug_frame only fills the
 * addresses that no .eh_frame FDE covers (.eh_frame is what the process's
 * own unwinder trusts); FDEs outside executable sections (code dropped
 * by --gc-sections keeps .debug_frame FDEs at address 0) are ignored.
 *
 * Rejected:
 *  - dwarf_cfi_addrframe at every byte: 1.39 M calls, 0.22 s for libc's
 *    .text (159 ns a call), 20x slower; at every instruction it needs a
 *    decoder and is still ~350 k calls.
 *  - an own interpreter of the CFA instructions (one pass per FDE, as
 *    perf does): a second reading of CIE initial state, remember/restore
 *    state and the x86-64 ABI defaults that libdw, and hence our
 *    symbolizer, already gets right; 10 ms does not call for it.  Since
 *    measured: a compiler's module (cc1, 441,669 rows) takes 0.6-0.9 s,
 *    three quarters of it in dwarf_cfi_addrframe (each call finds its
 *    FDE and interprets it from the start), and under --all on a host
 *    that builds software such tables are most of what the tables
 *    cost: the interpreter may now pay.
 *  - FDE starts from .eh_frame_hdr's search table: no lengths, and
 *    nothing for .debug_frame.
 *  - merging rows across the alignment padding between functions: 1,590
 *    fewer rows for libc (6%), but a pc in a gap would get a rule that
 *    no CFI gives.
 *  - guessing: a rule that is not expressible (CFA as an expression or on
 *    another register, ra elsewhere, rbp in a register or an expression,
 *    rsp not the CFA, signal frames, the outermost frame) becomes a row
 *    flagged SP_UNWIND_F_UNSUPPORTED with the reason, so the walk stops
 *    there and can say why.  Only rsp, rbp and the return address are
 *    examined: they are all the walker recovers, so how rbx or r12 are
 *    restored cannot make a step wrong.  A CFA expression that is a single
 *    DW_OP_breg7/breg6 is rsp/rbp + k, and is taken as such.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfitable.h"
#include "targetfile.h"
#include "array.h"

/* DWARF register numbers, x86-64 psABI. */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RA 16

/* FDEs looked back over for one that holds an address (nesting depth). */
#define FUNCTION_SCAN_MAX 64

struct span {
	uint64_t lo, hi;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

struct cfitable {
	struct sp_unwind_row *rows;
	size_t n_rows, cap_rows;
	struct spans functions;	/* .eh_frame FDEs walked, sorted by lo */
	struct cfitable_stats stats;
};

/* One CFI section being read with dwarf_next_cfi. */
struct cfi_section {
	const unsigned char *ident;
	Elf_Data *data;
	uint64_t vaddr;		/* sh_addr: the base of pcrel pointers */
	bool eh_frame;
	/* The last CIE looked up: FDEs mostly follow their CIE. */
	Dwarf_Off cie_off;
	uint8_t cie_encoding;
	bool cie_cached;
};

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct sp_unwind_row *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * Rows come out of the walk, and out of modtable's marking, in address
 * order nearly always (disjoint, so no two share a start): a pass that
 * finds them sorted spares the sort, which was a sixth of the time a
 * large module's table took (cc1's two sorts: 0.15 s of 0.9 s).
 */
void cfitable__sort_rows(struct sp_unwind_row *rows, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (rows[i].start < rows[i - 1].start) {
			qsort(rows, n, sizeof(*rows), cmp_row);
			return;
		}
	}
}

static int spans__push(struct spans *s, uint64_t lo, uint64_t hi)
{
	if (array__grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n++] = (struct span){ lo, hi };
	return 0;
}

/* Sorted, and overlapping or touching spans joined. */
static void spans__normalize(struct spans *s)
{
	size_t j = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_span);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].lo <= s->v[j].hi) {
			if (s->v[i].hi > s->v[j].hi)
				s->v[j].hi = s->v[i].hi;
		} else {
			s->v[++j] = s->v[i];
		}
	}
	s->n = j + 1;
}

/* out = a & b, or a - b when subtract; both normalized, and so is out. */
static int spans__combine(const struct spans *a, const struct spans *b,
			  bool subtract, struct spans *out)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		uint64_t lo = a->v[i].lo, hi = a->v[i].hi;

		while (j < b->n && b->v[j].hi <= lo)
			j++;
		for (size_t k = j; k < b->n && b->v[k].lo < hi; k++) {
			const struct span *c = &b->v[k];
			uint64_t clo = c->lo > lo ? c->lo : lo;
			uint64_t chi = c->hi < hi ? c->hi : hi;

			if (subtract) {
				if (lo < clo && spans__push(out, lo, clo))
					return -ENOMEM;
				lo = chi;
			} else if (spans__push(out, clo, chi)) {
				return -ENOMEM;
			}
		}
		if (subtract && lo < hi && spans__push(out, lo, hi))
			return -ENOMEM;
	}
	return 0;
}

static void spans__free(struct spans *s)
{
	free(s->v);
	*s = (struct spans){ 0 };
}

/* The first span of s that ends above addr (s sorted and disjoint). */
static size_t spans__first_above(const struct spans *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where code can be: executable sections (SHT_NOBITS ones too, as in a
 * separate debug file), else executable PT_LOAD segments.
 */
static int exec_spans(Elf *elf, struct spans *out)
{
	Elf_Scn *scn = NULL;
	size_t n;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_size &&
		    (shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
		    (SHF_ALLOC | SHF_EXECINSTR) &&
		    spans__push(out, shdr.sh_addr, shdr.sh_addr + shdr.sh_size))
			return -ENOMEM;
	}
	if (!out->n && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr phdr;

			if (gelf_getphdr(elf, (int)i, &phdr) &&
			    phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) &&
			    phdr.p_memsz &&
			    spans__push(out, phdr.p_vaddr,
					phdr.p_vaddr + phdr.p_memsz))
				return -ENOMEM;
		}
	}
	spans__normalize(out);
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (s && !strcmp(s, name))
			return shdr->sh_type == SHT_NOBITS ? NULL : scn;
	}
	return NULL;
}

static int read_leb(const uint8_t **pp, const uint8_t *end, bool is_signed,
		    uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t byte;

	do {
		if (p >= end || shift >= 64)
			return -EINVAL;
		byte = *p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (is_signed && shift < 64 && (byte & 0x40))
		v |= ~(uint64_t)0 << shift;
	*pp = p;
	*out = v;
	return 0;
}

/*
 * Reads a pointer encoded as DW_EH_PE_* says (little-endian, 64-bit).
 * Only absolute and pc-relative ones are applied: the others never
 * appear in an x86-64 FDE.
 */
static int read_encoded(const struct cfi_section *sec, const uint8_t **pp,
			const uint8_t *end, uint8_t encoding, bool apply,
			uint64_t *out)
{
	const uint8_t *base = sec->data->d_buf, *p = *pp;
	size_t size;
	uint64_t v = 0;

	switch (encoding & 0x0f) {
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		if (read_leb(&p, end, encoding & DW_EH_PE_signed, &v))
			return -EINVAL;
		size = 0;
		break;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	default:
		return -EINVAL;
	}
	if (size) {
		if ((size_t)(end - p) < size)
			return -EINVAL;
		for (size_t i = 0; i < size; i++)
			v |= (uint64_t)p[i] << (8 * i);
		if ((encoding & DW_EH_PE_signed) && size < 8 &&
		    (v >> (8 * size - 1)) & 1)
			v |= ~(uint64_t)0 << (8 * size);
		p += size;
	}
	if (apply) {
		if (encoding & DW_EH_PE_indirect)
			return -EOPNOTSUPP;
		switch (encoding & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:	/* from the field's own address */
			v += sec->vaddr + (uint64_t)(*pp - base);
			break;
		default:
			return -EOPNOTSUPP;
		}
	}
	*pp = p;
	*out = v;
	return 0;
}

/* The encoding of the FDE addresses of the CIE at off ('R' augmentation). */
static int cfi_section__fde_encoding(struct cfi_section *sec, Dwarf_Off off,
				     uint8_t *encoding)
{
	Dwarf_CFI_Entry entry;
	Dwarf_Off next;
	const char *aug;
	const uint8_t *p, *end;
	uint8_t enc = DW_EH_PE_absptr;

	if (sec->cie_cached && sec->cie_off == off) {
		*encoding = sec->cie_encoding;
		return 0;
	}
	if (dwarf_next_cfi(sec->ident, sec->data, sec->eh_frame, off, &next,
			   &entry) || !dwarf_cfi_cie_p(&entry))
		return -EINVAL;
	aug = entry.cie.augmentation;
	p = entry.cie.augmentation_data;
	end = p + entry.cie.augmentation_data_size;
	if (aug[0] == 'e' && aug[1] == 'h')
		return -EOPNOTSUPP;	/* g++ 2: a pointer comes first */
	/* Sized ("z...") or not (.debug_frame's "S"), the letters are read
	 * alike; an unknown one may hide the 'R' behind it. */
	for (aug += *aug == 'z'; *aug; aug++) {
		uint64_t ignored;
		uint8_t penc;

		if (*aug == 'R') {
			if (p >= end)
				return -EINVAL;
			enc = *p;
			break;
		} else if (*aug == 'L') {
			p++;
		} else if (*aug == 'P') {
			if (p >= end)
				return -EINVAL;
			penc = *p++;
			if ((penc & 0x70) == DW_EH_PE_aligned ||
			    read_encoded(sec, &p, end, penc, false, &ignored))
				return -EOPNOTSUPP;
		} else if (*aug != 'S' && *aug != 'B' && *aug != 'G') {
			return -EOPNOTSUPP;
		}
	}
	sec->cie_off = off;
	sec->cie_encoding = enc;
	sec->cie_cached = true;
	*encoding = enc;
	return 0;
}

/* [initial_location, +address_range) of every FDE, sorted by start. */
static int cfi_section__fdes(struct cfi_section *sec, struct spans *fdes,
			     size_t *bad)
{
	Dwarf_Off off = 0, next;

	for (;; off = next) {
		Dwarf_CFI_Entry entry;
		const uint8_t *p, *end;
		uint64_t lo, len;
		uint8_t enc;
		int rc;

		next = (Dwarf_Off)-1;
		rc = dwarf_next_cfi(sec->ident, sec->data, sec->eh_frame, off,
				    &next, &entry);
		if (rc > 0)
			break;
		if (rc < 0) {
			/* Skippable when libdw got past it; .eh_frame's zero
			 * terminator is not. */
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			(*bad)++;
			continue;
		}
		if (dwarf_cfi_cie_p(&entry))
			continue;
		p = entry.fde.start;
		end = entry.fde.end;
		if (cfi_section__fde_encoding(sec, entry.fde.CIE_pointer,
					      &enc) ||
		    read_encoded(sec, &p, end, enc, true, &lo) ||
		    read_encoded(sec, &p, end, enc & 0x0f, false, &len) ||
		    lo + len < lo) {
			(*bad)++;
			continue;
		}
		if (len && spans__push(fdes, lo, lo + len))
			return -ENOMEM;
	}
	if (fdes->n)
		qsort(fdes->v, fdes->n, sizeof(*fdes->v), cmp_span);
	return 0;
}

/* A DW_OP_plus_uconst operand that libdw stores from a signed offset. */
static bool fits_s32(Dwarf_Word number, int32_t *out)
{
	int64_t v = (int64_t)number;

	if (v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

/* CFA + off as a location: DW_OP_call_frame_cfa [DW_OP_plus_uconst off]. */
static bool cfa_location(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	return nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	       ops[1].atom == DW_OP_plus_uconst && fits_s32(ops[1].number, off);
}

/* The rule a frame state gives, as a row's rule fields and flags. */
static void classify(Dwarf_Frame *frame, int ra_reg, bool signal,
		     struct sp_unwind_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	uint16_t flags = 0;
	uint64_t reg = 0;
	Dwarf_Word off = 0;
	int32_t at;

	if (signal)
		flags |= SP_UNWIND_F_SIGNAL;

	if (dwarf_frame_cfa(frame, &ops, &nops)) {
		flags |= SP_UNWIND_F_ERROR;
	} else if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 &&
		   ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = ops[0].number;
	} else {
		flags |= SP_UNWIND_F_CFA_EXPR;
	}
	if (!(flags & (SP_UNWIND_F_ERROR | SP_UNWIND_F_CFA_EXPR))) {
		if (reg == DWARF_RSP)
			row->cfa_reg = SP_UNWIND_CFA_RSP;
		else if (reg == DWARF_RBP)
			row->cfa_reg = SP_UNWIND_CFA_RBP;
		else
			flags |= SP_UNWIND_F_CFA_REG;
		if (!fits_s32(off, &row->cfa_offset))
			flags |= SP_UNWIND_F_CFA_EXPR;
	}

	/* The return address: saved at CFA-8, or undefined at the bottom. */
	if (ra_reg != DWARF_RA) {
		flags |= ra_reg < 0 ? SP_UNWIND_F_ERROR : SP_UNWIND_F_RA;
	} else if (dwarf_frame_register(frame, DWARF_RA, mem, &ops, &nops)) {
		flags |= SP_UNWIND_F_ERROR;
	} else if (ops == mem && !nops) {
		flags |= SP_UNWIND_F_RA_UNDEFINED;
	} else if (!cfa_location(ops, nops, &at) || at != -8) {
		flags |= SP_UNWIND_F_RA;
	}

	/* The caller's rsp is the CFA: the ABI's DW_CFA_val_offset rsp, 0. */
	if (dwarf_frame_register(frame, DWARF_RSP, mem, &ops, &nops))
		flags |= SP_UNWIND_F_ERROR;
	else if (!(nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		   ops[1].atom == DW_OP_stack_value))
		flags |= SP_UNWIND_F_RSP;

	if (dwarf_frame_register(frame, DWARF_RBP, mem, &ops, &nops)) {
		flags |= SP_UNWIND_F_ERROR;
	} else if (!ops && !nops) {
		row->rbp_rule = SP_UNWIND_RBP_SAME;
	} else if (ops == mem && !nops) {
		row->rbp_rule = SP_UNWIND_RBP_UNDEFINED;
	} else if (cfa_location(ops, nops, &at)) {
		row->rbp_rule = SP_UNWIND_RBP_AT_CFA;
		row->rbp_offset = at;
	} else {
		flags |= SP_UNWIND_F_RBP;
	}

	if (flags) {
		/* Unsupported: no half-rule for the walker to misuse. */
		row->cfa_reg = SP_UNWIND_CFA_NONE;
		row->cfa_offset = 0;
		row->rbp_rule = SP_UNWIND_RBP_SAME;
		row->rbp_offset = 0;
		flags |= SP_UNWIND_F_UNSUPPORTED;
	}
	row->flags = flags;
}

static int cfitable__push(struct cfitable *table,
			  const struct sp_unwind_row *row)
{
	if (array__grow(&table->rows, &table->cap_rows, table->n_rows + 1,
			sizeof(*table->rows)))
		return -ENOMEM;
	table->rows[table->n_rows++] = *row;
	return 0;
}

/* Rows for [lo, hi), one per rule that libdw reports there. */
static int cfitable__walk_span(struct cfitable *table, Dwarf_CFI *cfi,
			       uint64_t lo, uint64_t hi)
{
	for (uint64_t pc = lo; pc < hi;) {
		struct sp_unwind_row row = { 0 };
		Dwarf_Frame *frame;
		Dwarf_Addr start, end = hi;
		bool signal = false;

		if (dwarf_cfi_addrframe(cfi, pc, &frame)) {
			/* Inside an FDE: CFI that libdw cannot evaluate. */
			row.flags = SP_UNWIND_F_UNSUPPORTED | SP_UNWIND_F_ERROR;
		} else {
			int ra_reg = dwarf_frame_info(frame, &start, &end,
						      &signal);

			classify(frame, ra_reg, signal, &row);
			free(frame);
			if (end <= pc) {
				memset(&row, 0, sizeof(row));
				row.flags = SP_UNWIND_F_UNSUPPORTED |
					    SP_UNWIND_F_ERROR;
				end = hi;
			}
		}
		row.start = pc;
		row.end = end < hi ? end : hi;
		if (cfitable__push(table, &row))
			return -ENOMEM;
		pc = row.end;
	}
	return 0;
}

/*
 * Walks the FDEs (sorted by start) where they meet allowed; an address
 * that two FDEs cover is walked once, under the first.
 */
static int cfitable__walk(struct cfitable *table, Dwarf_CFI *cfi,
			  const struct spans *fdes, const struct spans *allowed,
			  size_t *walked)
{
	uint64_t done = 0;

	for (size_t i = 0; i < fdes->n; i++) {
		uint64_t lo = fdes->v[i].lo > done ? fdes->v[i].lo : done;
		uint64_t hi = fdes->v[i].hi;
		bool used = false;

		if (lo >= hi)
			continue;
		done = hi;
		for (size_t k = spans__first_above(allowed, lo);
		     k < allowed->n && allowed->v[k].lo < hi; k++) {
			const struct span *ok = &allowed->v[k];

			if (cfitable__walk_span(table, cfi,
						ok->lo > lo ? ok->lo : lo,
						ok->hi < hi ? ok->hi : hi))
				return -ENOMEM;
			used = true;
		}
		*walked += used;
	}
	return 0;
}

static bool same_rule(const struct sp_unwind_row *a,
		      const struct sp_unwind_row *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_offset == b->cfa_offset &&
	       a->rbp_rule == b->rbp_rule && a->rbp_offset == b->rbp_offset &&
	       a->flags == b->flags;
}

/* Sorts the rows and joins neighbours that carry the same rule. */
static void cfitable__merge(struct cfitable *table)
{
	size_t j = 0;

	if (!table->n_rows)
		return;
	cfitable__sort_rows(table->rows, table->n_rows);
	for (size_t i = 1; i < table->n_rows; i++) {
		struct sp_unwind_row *last = &table->rows[j];

		if (last->end == table->rows[i].start &&
		    same_rule(last, &table->rows[i]))
			last->end = table->rows[i].end;
		else
			table->rows[++j] = table->rows[i];
	}
	table->n_rows = j + 1;
	for (size_t i = 0; i < table->n_rows; i++)
		table->stats.unsupported +=
			!!(table->rows[i].flags & SP_UNWIND_F_UNSUPPORTED);
	table->stats.rows = table->n_rows;
}

static int check_elf(Elf *elf)
{
	const char *ident;
	GElf_Ehdr ehdr;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		return -ENOEXEC;
	ident = elf_getident(elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64 ||
	    ident[EI_DATA] != ELFDATA2LSB || ehdr.e_machine != EM_X86_64 ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
		return -EOPNOTSUPP;
	return 0;
}

/* Addresses to cover: code, within the caller's ranges if any. */
static int allowed_spans(Elf *elf, const struct cfitable_range *ranges,
			 size_t n_ranges, struct spans *out)
{
	struct spans code = { 0 }, wanted = { 0 };
	int err = exec_spans(elf, n_ranges ? &code : out);

	if (err || !n_ranges)
		goto out;
	for (size_t i = 0; i < n_ranges && !err; i++)
		if (ranges[i].start < ranges[i].end)
			err = spans__push(&wanted, ranges[i].start,
					  ranges[i].end);
	if (!err) {
		spans__normalize(&wanted);
		err = spans__combine(&code, &wanted, false, out);
	}
out:
	spans__free(&code);
	spans__free(&wanted);
	return err;
}

static void cfi_section__init(struct cfi_section *sec, Elf *elf, Elf_Scn *scn,
			      const GElf_Shdr *shdr, bool eh_frame)
{
	memset(sec, 0, sizeof(*sec));
	sec->ident = (const unsigned char *)elf_getident(elf, NULL);
	sec->vaddr = shdr->sh_addr;
	sec->eh_frame = eh_frame;
	if ((shdr->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return;
	sec->data = elf_getdata(scn, NULL);
	if (sec->data && !sec->data->d_buf)
		sec->data = NULL;
}

/* .eh_frame first, and .debug_frame where .eh_frame has no FDE. */
static int cfitable__fill(struct cfitable *table, Elf *elf,
			  Elf_Scn *eh_scn, const GElf_Shdr *eh_shdr,
			  Elf_Scn *dbg_scn, const GElf_Shdr *dbg_shdr,
			  const struct spans *allowed)
{
	struct spans eh_fdes = { 0 }, dbg_fdes = { 0 };
	struct spans eh_cover = { 0 }, dbg_allowed = { 0 };
	struct cfi_section sec;
	Dwarf_CFI *cfi = NULL;
	Dwarf *dwarf = NULL;
	int err = 0;

	if (eh_scn) {
		cfi_section__init(&sec, elf, eh_scn, eh_shdr, true);
		cfi = dwarf_getcfi_elf(elf);
		if (!sec.data || !cfi) {
			err = -EINVAL;
			goto out;
		}
		err = cfi_section__fdes(&sec, &eh_fdes, &table->stats.bad_fdes);
		if (!err)
			err = cfitable__walk(table, cfi, &eh_fdes, allowed,
					     &table->stats.fdes);
		for (size_t i = 0; i < eh_fdes.n && !err; i++)
			err = spans__push(&table->functions, eh_fdes.v[i].lo,
					  eh_fdes.v[i].hi);
		if (err)
			goto out;
		if (table->functions.n)	/* none: .v is NULL */
			qsort(table->functions.v, table->functions.n,
			      sizeof(*table->functions.v), cmp_span);
	}
	if (dbg_scn) {
		size_t before = table->stats.fdes;

		/* libdw reads .debug_frame through a Dwarf handle only. */
		dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		cfi_section__init(&sec, elf, dbg_scn, dbg_shdr, false);
		if (!dwarf || !sec.data || !dwarf_getcfi(dwarf))
			goto out;	/* as if absent */
		err = cfi_section__fdes(&sec, &dbg_fdes,
					&table->stats.bad_fdes);
		for (size_t i = 0; i < eh_fdes.n && !err; i++)
			err = spans__push(&eh_cover, eh_fdes.v[i].lo,
					  eh_fdes.v[i].hi);
		if (err)
			goto out;
		spans__normalize(&eh_cover);
		err = spans__combine(allowed, &eh_cover, true, &dbg_allowed);
		if (!err)
			err = cfitable__walk(table, dwarf_getcfi(dwarf),
					     &dbg_fdes, &dbg_allowed,
					     &table->stats.fdes);
		table->stats.debug_fdes = table->stats.fdes - before;
	}
out:
	if (cfi)
		dwarf_cfi_end(cfi);
	if (dwarf)
		dwarf_end(dwarf);
	spans__free(&eh_fdes);
	spans__free(&dbg_fdes);
	spans__free(&eh_cover);
	spans__free(&dbg_allowed);
	return err;
}

int cfitable__build_elf(Elf *elf, const struct cfitable_range *ranges,
			size_t n_ranges, struct cfitable **out)
{
	struct spans allowed = { 0 };
	struct cfitable *table = NULL;
	GElf_Shdr eh_shdr, dbg_shdr;
	Elf_Scn *eh_scn, *dbg_scn;
	int err = check_elf(elf);

	if (err)
		return err;
	eh_scn = find_section(elf, ".eh_frame", &eh_shdr);
	dbg_scn = find_section(elf, ".debug_frame", &dbg_shdr);
	if (!eh_scn && !dbg_scn)
		return -ENOENT;
	table = calloc(1, sizeof(*table));
	if (!table)
		return -ENOMEM;
	err = allowed_spans(elf, ranges, n_ranges, &allowed);
	if (!err)
		err = cfitable__fill(table, elf, eh_scn, &eh_shdr, dbg_scn,
				     &dbg_shdr, &allowed);
	spans__free(&allowed);
	if (err) {
		cfitable__free(table);
		return err;
	}
	cfitable__merge(table);
	if (table->n_rows < table->cap_rows) {
		void *shrunk = realloc(table->rows,
				       (table->n_rows ? table->n_rows : 1) *
				       sizeof(*table->rows));

		if (shrunk)
			table->rows = shrunk;
	}
	*out = table;
	return 0;
}

int cfitable__build(const char *path, const struct cfitable_range *ranges,
		    size_t n_ranges, struct cfitable **out)
{
	Elf *elf;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	err = targetfile__open(path, 0, &fd);
	if (err)
		return err;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = cfitable__build_elf(elf, ranges, n_ranges, out);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void cfitable__free(struct cfitable *table)
{
	if (!table)
		return;
	free(table->rows);
	spans__free(&table->functions);
	free(table);
}

const struct sp_unwind_row *cfitable__rows(const struct cfitable *table,
					   size_t *n)
{
	*n = table->n_rows;
	return table->rows;
}

void cfitable__stats(const struct cfitable *table, struct cfitable_stats *st)
{
	*st = table->stats;
}

const struct sp_unwind_row *cfitable__lookup(const struct cfitable *table,
					     uint64_t addr)
{
	size_t lo = 0, hi = table->n_rows;

	/* The first row starting above addr; the candidate precedes it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table->rows[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= table->rows[lo - 1].end)
		return NULL;
	return &table->rows[lo - 1];
}

int cfitable__function_at(const struct cfitable *table, uint64_t addr,
			  struct cfitable_range *range)
{
	const struct spans *f = &table->functions;
	size_t lo = 0, hi = f->n, nearest;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * FDEs may nest or overlap: take the nearest one that holds addr,
	 * looking back at most FUNCTION_SCAN_MAX starts.
	 */
	nearest = lo;
	while (lo-- > 0) {
		if (addr < f->v[lo].hi) {
			range->start = f->v[lo].lo;
			range->end = f->v[lo].hi;
			return 0;
		}
		if (nearest - lo >= FUNCTION_SCAN_MAX)
			break;
	}
	return -ENOENT;
}
