// SPDX-License-Identifier: GPL-2.0
/*
 * A uprobe on an instruction the kernel cannot emulate is executed out of
 * line and single-stepped: ~19 us a hit on these PVM guests, against ~5 us
 * for an emulated one (push, jmp/jcc/call rel, nop), measured in
 * ../shared/notes/platform.md and by make bench.  glibc 2.36's
 * pthread_mutex_lock starts with three single-stepped movs and ands, then
 * a jne at +0xe: the probe goes there.
 *
 * The site must see what the entry would: every call passes through it
 * (only straight-line, non-branching instructions before it, and no branch
 * in the function lands inside that prefix), the return address still at
 * [rsp] (nothing before it writes rsp or memory), and the object still in
 * rdi.  Branches into the prefix are checked over the decoded bytes: the
 * caller decodes the whole function or accepts only offset 0.  The
 * return probe shares the site: the kernel hijacks the return address at
 * [rsp], wherever the probe sits, as long as the stack has not moved.
 *
 * pthread_spin_lock cannot be probed at entry: it begins `lock decl
 * (%rdi)`, and the kernel takes no instruction with a LOCK prefix.  Its
 * probe goes on the jne after it, the first emulated instruction, which
 * the spin loop jumps back through on every attempt: the site is marked
 * rehit, and the BPF programs treat a second entry at the same sp and
 * object as the same call going on (the return probe is then chained by
 * the kernel, and its extra runs find no call to end).  A function whose
 * only sites are refused is not probed, and syncprof says so.  The same
 * placement serves the trylocks whose cmpxchg retry loop branches back
 * before their first emulated instruction (pthread_rwlock_tryrdlock,
 * _trywrlock, sem_trywait): at entry, single-stepped, a trywrlock call
 * cost +51 us here; in the loop, ~2.5 us as every other lock call
 * (make bench, BENCH_ONLY=kinds).
 *
 * Decoding uses capstone; the list of emulated opcodes follows the
 * kernel's arch/x86/kernel/uprobes.c (branch_setup_xol_ops and
 * push_setup_xol_ops), without prefixes, which it refuses to emulate.
 * Rejected: hard-coded offsets per libc build.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probesite.h"

/* How far into the function the site may lie. */
#define PREFIX_MAX_INSNS 12

bool probesite__is_emulated(const uint8_t *b, size_t size)
{
	if (!size)
		return false;
	if (b[0] >= 0x50 && b[0] <= 0x57)		/* push r64 */
		return size == 1;
	if (b[0] == 0x41 && size == 2 && b[1] >= 0x50 && b[1] <= 0x57)
		return true;				/* push r8..r15 */
	if (b[0] == 0x90)				/* nop */
		return size == 1;
	if (b[0] == 0xe8 || b[0] == 0xe9)		/* call/jmp rel32 */
		return size == 5;
	if (b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f))	/* jmp/jcc rel8 */
		return size == 2;
	if (b[0] == 0x0f && size == 6 && b[1] >= 0x80 && b[1] <= 0x8f)
		return true;				/* jcc rel32 */
	if (size == 5 && !memcmp(b, "\x0f\x1f\x44\x00\x00", 5))
		return true;				/* nop5, optimized */
	return false;
}

static bool writes_reg(csh cs, const cs_insn *insn, x86_reg reg)
{
	cs_regs read, written;
	uint8_t n_read = 0, n_written = 0;

	if (cs_regs_access(cs, insn, read, &n_read, written, &n_written))
		return true;	/* unknown: assume the worst */
	for (uint8_t i = 0; i < n_written; i++) {
		if (written[i] == reg)
			return true;
		/* Sub-registers: esp/sp/spl, edi/di/dil. */
		if (reg == X86_REG_RSP && (written[i] == X86_REG_ESP ||
					   written[i] == X86_REG_SP ||
					   written[i] == X86_REG_SPL))
			return true;
		if (reg == X86_REG_RDI && (written[i] == X86_REG_EDI ||
					   written[i] == X86_REG_DI ||
					   written[i] == X86_REG_DIL))
			return true;
	}
	return false;
}

/* Stores to memory: [rsp], the return address, could be among them. */
static bool writes_memory(const cs_insn *insn)
{
	const cs_x86 *x86 = &insn->detail->x86;

	for (uint8_t i = 0; i < x86->op_count; i++)
		if (x86->operands[i].type == X86_OP_MEM &&
		    (x86->operands[i].access & CS_AC_WRITE))
			return true;
	return false;
}

static bool is_branch(const cs_insn *insn)
{
	const cs_detail *d = insn->detail;

	for (uint8_t i = 0; i < d->groups_count; i++) {
		switch (d->groups[i]) {
		case CS_GRP_JUMP:
		case CS_GRP_CALL:
		case CS_GRP_RET:
		case CS_GRP_INT:
		case CS_GRP_IRET:
			return true;
		}
	}
	return false;
}

/* A direct branch target of insn, or 0. */
static uint64_t branch_target(const cs_insn *insn)
{
	const cs_x86 *x86 = &insn->detail->x86;

	if (!is_branch(insn) || x86->op_count != 1 ||
	    x86->operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)x86->operands[0].imm;
}

/*
 * Prefixes the kernel will not probe at all (is_prefix_bad in
 * arch/x86/kernel/uprobes.c): LOCK and the ES, CS, SS, DS overrides.
 */
static bool is_refused(const cs_insn *insn)
{
	const uint8_t *prefix = insn->detail->x86.prefix;

	for (int i = 0; i < 4; i++)
		switch (prefix[i]) {
		case 0xf0: case 0x26: case 0x2e: case 0x36: case 0x3e:
			return true;
		}
	return false;
}

/* A store through the object's pointer only: [rdi + disp], nothing else. */
static bool writes_only_object(const cs_insn *insn)
{
	const cs_x86 *x86 = &insn->detail->x86;

	for (uint8_t i = 0; i < x86->op_count; i++) {
		const cs_x86_op *op = &x86->operands[i];

		if (op->type == X86_OP_MEM && (op->access & CS_AC_WRITE) &&
		    (op->mem.base != X86_REG_RDI ||
		     op->mem.index != X86_REG_INVALID ||
		     op->mem.segment != X86_REG_INVALID))
			return false;
	}
	return true;
}

/*
 * in_loop: there is no site on the straight path.  Stores to the object
 * itself may then come before the site (they cannot touch [rsp]), and branches back into
 * the prefix are allowed: the site may fire more than once per call
 * (site->rehit), which the BPF programs recognize by sp and object.
 */
static int probesite__scan(const uint8_t *code, size_t size, uint64_t vaddr,
			   bool in_loop, struct probesite *site)
{
	cs_insn *insns = NULL;
	size_t n, chosen = 0;
	bool found = false;
	csh cs;

	*site = (struct probesite){ 0 };
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOTSUP;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, code, size, vaddr, 0, &insns);
	for (size_t i = 0; i < n && i < PREFIX_MAX_INSNS; i++) {
		if (probesite__is_emulated(insns[i].bytes, insns[i].size)) {
			chosen = i;
			found = true;
			break;
		}
		/* Everything before the site must flow into it unchanged. */
		if (is_branch(&insns[i]) ||
		    (writes_memory(&insns[i]) &&
		     !(in_loop && writes_only_object(&insns[i]))) ||
		    writes_reg(cs, &insns[i], X86_REG_RSP) ||
		    writes_reg(cs, &insns[i], X86_REG_RDI))
			break;
	}
	site->entry_emulated = n && probesite__is_emulated(insns[0].bytes, insns[0].size);
	site->entry_refused = n && is_refused(&insns[0]);
	if (found && chosen > 0) {
		uint64_t lo = vaddr, hi = insns[chosen].address;

		/* No branch of the (decoded part of the) function lands in the prefix. */
		for (size_t i = 0; i < n; i++) {
			uint64_t target = branch_target(&insns[i]);

			if (in_loop && target >= lo && target <= hi) {
				site->rehit = true;
			} else if (target > lo && target <= hi) {
				found = false;
				break;
			}
		}
	}
	if (found) {
		site->offset = insns[chosen].address - vaddr;
		site->emulated = true;
		snprintf(site->insn, sizeof(site->insn), "%s %s",
			 insns[chosen].mnemonic, insns[chosen].op_str);
	} else if (n) {
		site->rehit = false;
		site->refused = site->entry_refused;
		snprintf(site->insn, sizeof(site->insn), "%s %s",
			 insns[0].mnemonic, insns[0].op_str);
	}
	if (n)
		cs_free(insns, n);
	cs_close(&cs);
	return 0;
}

int probesite__find(const uint8_t *code, size_t size, uint64_t vaddr,
		    struct probesite *site)
{
	struct probesite loop;
	int err = probesite__scan(code, size, vaddr, false, site);

	if (err || site->emulated)
		return err;
	/* No straight-line site: one inside a retry loop, if any. */
	if (!probesite__scan(code, size, vaddr, true, &loop) &&
	    (loop.emulated || site->refused))
		*site = loop;
	return 0;
}
