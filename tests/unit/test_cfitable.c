// SPDX-License-Identifier: GPL-2.0
/*
 * cfitable: unwind rows from CFI, rule by rule.
 *
 * The fixture libunwind-fixture.so (tests/fixtures/unwind_*.c) is built
 * by `make build/tests/fixtures/libunwind-fixture.so` and looked up in
 * $SYNCPROF_FIXTURES, else build/tests/fixtures relative to the current
 * directory (the repository root).  Three kinds of expectations:
 *  - hand-written CFI (unwind_asm.c): exact rows at exact offsets;
 *  - compiled functions: their machine code is decoded with capstone and
 *    the stack moves replayed (push, pop, sub/add rsp, mov %rsp,%rbp,
 *    leave), giving the rule before every instruction;
 *  - the system libc: the rule at pthread_mutex_lock's entry, the cost of
 *    a whole build, and 1000 random addresses of .text against what
 *    dwarf_cfi_addrframe says there directly.
 * Function addresses come from elfimage__find_func.
 */
#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfitable.h"
#include "elfimage.h"

#define UNUSED __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define RSP SP_UNWIND_CFA_RSP
#define RBP SP_UNWIND_CFA_RBP
#define SAME SP_UNWIND_RBP_SAME
#define AT_CFA SP_UNWIND_RBP_AT_CFA
#define UNDEF SP_UNWIND_RBP_UNDEFINED
#define UNSUP SP_UNWIND_F_UNSUPPORTED

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* The BPF side indexes an array map of these. */
_Static_assert(sizeof(struct sp_unwind_row) == 32, "sp_unwind_row is 32 bytes");

struct image {
	char path[PATH_MAX];
	struct elfimage *image;
	struct cfitable *table;
	int fd;
	Elf *elf;
	Dwarf *dwarf;		/* for .debug_frame */
	Dwarf_CFI *eh_cfi, *debug_cfi;
};

static struct image fix, libc;
static double libc_build_ms;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int image_open(struct image *im, const char *path)
{
	int err;

	snprintf(im->path, sizeof(im->path), "%s", path);
	err = elfimage__open(path, &im->image);
	if (err) {
		fprintf(stderr, "elfimage__open(%s): %s\n", path, strerror(-err));
		return -1;
	}
	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	im->elf = im->fd >= 0 ? elf_begin(im->fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!im->elf)
		return -1;
	im->eh_cfi = dwarf_getcfi_elf(im->elf);
	im->dwarf = dwarf_begin_elf(im->elf, DWARF_C_READ, NULL);
	im->debug_cfi = im->dwarf ? dwarf_getcfi(im->dwarf) : NULL;
	return 0;
}

static void image_close(struct image *im)
{
	cfitable__free(im->table);
	if (im->eh_cfi)
		dwarf_cfi_end(im->eh_cfi);
	if (im->dwarf)
		dwarf_end(im->dwarf);
	if (im->elf)
		elf_end(im->elf);
	if (im->fd > 0)
		close(im->fd);
	elfimage__close(im->image);
	memset(im, 0, sizeof(*im));
}

static int group_setup(void **state UNUSED)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");
	char path[PATH_MAX];
	double t0;
	int err;

	elf_version(EV_CURRENT);
	snprintf(path, sizeof(path), "%s/libunwind-fixture.so",
		 dir && *dir ? dir : "build/tests/fixtures");
	if (access(path, R_OK)) {
		fprintf(stderr, "no fixture %s: build it with 'make "
			"build/tests/fixtures/libunwind-fixture.so' and run from "
			"the repository root, or set SYNCPROF_FIXTURES\n", path);
		return -1;
	}
	if (image_open(&fix, path))
		return -1;
	err = cfitable__build(path, NULL, 0, &fix.table);
	if (err) {
		fprintf(stderr, "cfitable__build(%s): %s\n", path, strerror(-err));
		return -1;
	}
	if (!realpath(LIBC, path) || image_open(&libc, path)) {
		fprintf(stderr, "cannot open %s\n", LIBC);
		return -1;
	}
	t0 = now_ms();
	err = cfitable__build(libc.path, NULL, 0, &libc.table);
	libc_build_ms = now_ms() - t0;
	if (err) {
		fprintf(stderr, "cfitable__build(%s): %s\n", libc.path,
			strerror(-err));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state UNUSED)
{
	image_close(&fix);
	image_close(&libc);
	return 0;
}

static struct elfimage_func func(struct image *im, const char *name)
{
	struct elfimage_func f;
	int err = elfimage__find_func(im->image, name, &f);

	if (err)
		fail_msg("%s: no function %s: %s", im->path, name, strerror(-err));
	assert_true(f.size > 0);
	return f;
}

static const char *rule_str(const struct sp_unwind_row *row, char *buf,
			    size_t size)
{
	if (!row)
		snprintf(buf, size, "(no row)");
	else
		snprintf(buf, size, "[%#llx,%#llx) cfa %s%+d rbp %s%+d flags %#x",
			 (unsigned long long)row->start,
			 (unsigned long long)row->end,
			 row->cfa_reg == RSP ? "rsp" :
			 row->cfa_reg == RBP ? "rbp" : "-",
			 row->cfa_offset,
			 row->rbp_rule == SAME ? "same" :
			 row->rbp_rule == AT_CFA ? "cfa" : "undef",
			 row->rbp_offset, row->flags);
	return buf;
}

/* The rule at addr is exactly this one (a supported row). */
static void expect_rule(const struct cfitable *table, uint64_t addr,
			int cfa_reg, int32_t cfa_off, int rbp_rule,
			int32_t rbp_off, const char *what)
{
	const struct sp_unwind_row *row = cfitable__lookup(table, addr);
	char buf[128];

	if (!row || row->flags || row->cfa_reg != cfa_reg ||
	    row->cfa_offset != cfa_off || row->rbp_rule != rbp_rule ||
	    row->rbp_offset != rbp_off)
		fail_msg("%s at %#llx: want cfa %s%+d rbp %d%+d, have %s", what,
			 (unsigned long long)addr, cfa_reg == RSP ? "rsp" : "rbp",
			 cfa_off, rbp_rule, rbp_off,
			 rule_str(row, buf, sizeof(buf)));
}

/* One expected row of hand-written CFI, offsets from the function. */
struct want {
	uint64_t lo, hi;
	int cfa_reg;
	int32_t cfa_off;
	int rbp_rule;
	int32_t rbp_off;
	uint16_t flags;		/* 0, or UNSUP | reasons (rule fields 0) */
};

/* The rows over the function are exactly want[], and nothing around. */
#define EXPECT_ROWS(table, name, want) \
	expect_rows(table, name, want, ARRAY_SIZE(want))

static void expect_rows(const struct cfitable *table, const char *name,
			const struct want *want, size_t n)
{
	struct elfimage_func f = func(&fix, name);
	char buf[128];

	for (size_t i = 0; i < n; i++) {
		const struct want *w = &want[i];
		const struct sp_unwind_row *row =
			cfitable__lookup(table, f.vaddr + w->lo);

		if (!row || row->start != f.vaddr + w->lo ||
		    row->end != f.vaddr + w->hi || row->flags != w->flags ||
		    row->cfa_reg != w->cfa_reg || row->cfa_offset != w->cfa_off ||
		    row->rbp_rule != w->rbp_rule || row->rbp_offset != w->rbp_off)
			fail_msg("%s+[%#llx,%#llx): want cfa %d%+d rbp %d%+d flags "
				 "%#x, have %s (function at %#llx)", name,
				 (unsigned long long)w->lo,
				 (unsigned long long)w->hi, w->cfa_reg, w->cfa_off,
				 w->rbp_rule, w->rbp_off, w->flags,
				 rule_str(row, buf, sizeof(buf)),
				 (unsigned long long)f.vaddr);
	}
	/* Padding before and after belongs to no FDE. */
	assert_null(cfitable__lookup(table, f.vaddr - 1));
	assert_null(cfitable__lookup(table, f.vaddr + want[n - 1].hi));
}

/* ---- Hand-written CFI: exact rows. ---- */

static void test_pushes_and_0x88_frame(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, RSP, 16, SAME, 0, 0 },		/* push %rbx */
		{ 2, 9, RSP, 24, AT_CFA, -24, 0 },	/* push %rbp */
		{ 9, 17, RSP, 0xa0, AT_CFA, -24, 0 },	/* sub $0x88,%rsp */
		{ 17, 18, RSP, 24, AT_CFA, -24, 0 },	/* add $0x88,%rsp */
		{ 18, 19, RSP, 16, SAME, 0, 0 },	/* pop %rbp */
		{ 19, 20, RSP, 8, SAME, 0, 0 },		/* pop %rbx */
	};

	EXPECT_ROWS(fix.table, "uw_asm_frame", want);
}

static void test_identical_neighbours_merge(void **state UNUSED)
{
	struct elfimage_func a = func(&fix, "uw_asm_leaf_a");
	struct elfimage_func b = func(&fix, "uw_asm_leaf_b");
	const struct sp_unwind_row *row = cfitable__lookup(fix.table, a.vaddr);

	/* Two FDEs, back to back: one row over both. */
	assert_int_equal(b.vaddr, a.vaddr + a.size);
	assert_non_null(row);
	assert_int_equal(row->start, a.vaddr);
	assert_int_equal(row->end, b.vaddr + b.size);
	assert_ptr_equal(cfitable__lookup(fix.table, b.vaddr), row);
	expect_rule(fix.table, b.vaddr, RSP, 8, SAME, 0, "uw_asm_leaf_b");
}

static void test_register_only_changes_merge(void **state UNUSED)
{
	/* libdw splits [4,16) at rbx's and r12's rules: one row here. */
	static const struct want want[] = {
		{ 0, 4, RSP, 8, SAME, 0, 0 },
		{ 4, 16, RSP, 16, SAME, 0, 0 },
		{ 16, 17, RSP, 8, SAME, 0, 0 },
	};

	EXPECT_ROWS(fix.table, "uw_asm_merge", want);
}

static void test_remember_restore_state(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 7, RSP, 16, SAME, 0, 0 },
		{ 7, 8, RSP, 8, SAME, 0, 0 },		/* after the early pop */
		{ 8, 11, RSP, 16, SAME, 0, 0 },		/* restore_state */
		{ 11, 12, RSP, 8, SAME, 0, 0 },
	};

	EXPECT_ROWS(fix.table, "uw_asm_remember", want);
}

static void test_cfa_expression_is_unsupported(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_CFA_EXPR },
		/* { DW_OP_breg7 16 } is rsp+16 spelt as an expression. */
		{ 2, 3, RSP, 16, SAME, 0, 0 },
		{ 3, 4, RSP, 8, SAME, 0, 0 },
	};

	EXPECT_ROWS(fix.table, "uw_asm_cfa_expr", want);
}

static void test_cfa_on_other_register_is_unsupported(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 5, RSP, 8, SAME, 0, 0 },
		{ 5, 10, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_CFA_REG },
		{ 10, 11, RSP, 8, SAME, 0, 0 },
	};

	EXPECT_ROWS(fix.table, "uw_asm_cfa_r10", want);
}

static void test_return_address_elsewhere_is_unsupported(void **state UNUSED)
{
	static const struct want at_cfa16[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RA },
		{ 2, 3, RSP, 8, SAME, 0, 0 },
	};
	static const struct want in_reg[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 3, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RA },
		{ 3, 4, RSP, 8, SAME, 0, 0 },
	};
	static const struct want outermost[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RA_UNDEFINED },
	};

	EXPECT_ROWS(fix.table, "uw_asm_ra_cfa16", at_cfa16);
	EXPECT_ROWS(fix.table, "uw_asm_ra_reg", in_reg);
	EXPECT_ROWS(fix.table, "uw_asm_outermost", outermost);
}

static void test_rbp_and_rsp_rules(void **state UNUSED)
{
	static const struct want rbp_reg[] = {
		{ 0, 3, RSP, 8, SAME, 0, 0 },
		{ 3, 4, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RBP },
		{ 4, 5, RSP, 8, SAME, 0, 0 },
	};
	static const struct want rbp_expr[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RBP },
		{ 2, 3, RSP, 8, SAME, 0, 0 },
	};
	/* rbx by an expression does not matter; a clobbered rbp is a rule. */
	static const struct want rbx_expr[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, RSP, 8, UNDEF, 0, 0 },
	};
	static const struct want rsp_saved[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_RSP },
	};

	EXPECT_ROWS(fix.table, "uw_asm_rbp_reg", rbp_reg);
	EXPECT_ROWS(fix.table, "uw_asm_rbp_expr", rbp_expr);
	EXPECT_ROWS(fix.table, "uw_asm_rbx_expr", rbx_expr);
	EXPECT_ROWS(fix.table, "uw_asm_rsp_saved", rsp_saved);
}

static void test_signal_frame_is_unsupported(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 2, 0, 0, 0, 0, UNSUP | SP_UNWIND_F_SIGNAL },
	};

	EXPECT_ROWS(fix.table, "uw_asm_signal", want);
}

/* ---- Compiled functions: replay the machine code. ---- */

/* The rule before one instruction, as the stack moves say. */
struct replay {
	int cfa_reg;
	int32_t cfa_off;
	bool rbp_saved;		/* pushed, and not popped yet */
	bool rbp_popped;	/* restored: its rule may be either */
	int32_t rbp_slot;	/* CFA-relative */
	int32_t max_cfa_off;
	int32_t sub_rsp;	/* the largest sub $imm,%rsp seen */
	int pushes;
	bool cfa_on_rbp;	/* ever */
};

static bool insn_writes(csh cs, const cs_insn *insn, x86_reg reg)
{
	cs_regs rd, wr;
	uint8_t n_rd = 0, n_wr = 0;

	if (cs_regs_access(cs, insn, rd, &n_rd, wr, &n_wr))
		return true;
	for (uint8_t i = 0; i < n_wr; i++)
		if (wr[i] == reg)
			return true;
	return false;
}

static void replay_check(const struct cfitable *table, const char *name,
			 uint64_t addr, const struct replay *st)
{
	const struct sp_unwind_row *row = cfitable__lookup(table, addr);
	char buf[128];
	bool rbp_ok;

	if (!row || row->flags || row->cfa_reg != st->cfa_reg ||
	    row->cfa_offset != st->cfa_off)
		fail_msg("%s at %#llx: replay says cfa %s%+d, table has %s", name,
			 (unsigned long long)addr,
			 st->cfa_reg == RSP ? "rsp" : "rbp", st->cfa_off,
			 rule_str(row, buf, sizeof(buf)));
	/* After pop %rbp the slot still holds the caller's rbp: both true. */
	if (st->rbp_saved || st->rbp_popped)
		rbp_ok = (row->rbp_rule == AT_CFA &&
			  row->rbp_offset == st->rbp_slot) ||
			 (st->rbp_popped && row->rbp_rule == SAME);
	else
		rbp_ok = row->rbp_rule == SAME;
	if (!rbp_ok)
		fail_msg("%s at %#llx: replay says rbp %s at cfa%+d, table has %s",
			 name, (unsigned long long)addr,
			 st->rbp_saved ? "saved" :
			 st->rbp_popped ? "popped" : "same",
			 st->rbp_slot, rule_str(row, buf, sizeof(buf)));
}

/*
 * Decodes a straight-line function (no jump) and checks the table before
 * each instruction.  Returns what the replay saw.
 */
static struct replay replay_function(const struct cfitable *table,
				     const char *name)
{
	struct elfimage_func f = func(&fix, name);
	struct replay st = { .cfa_reg = RSP, .cfa_off = 8, .max_cfa_off = 8 };
	uint8_t code[512];
	cs_insn *insns;
	size_t n;
	csh cs;
	int fd = open(fix.path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(f.size <= sizeof(code));
	assert_int_equal(pread(fd, code, f.size, (off_t)f.file_offset), f.size);
	close(fd);
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, code, f.size, f.vaddr, 0, &insns);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const cs_insn *in = &insns[i];
		const cs_x86 *x = &in->detail->x86;
		x86_reg r0 = x->op_count > 0 && x->operands[0].type == X86_OP_REG ?
			     x->operands[0].reg : X86_REG_INVALID;
		x86_reg r1 = x->op_count > 1 && x->operands[1].type == X86_OP_REG ?
			     x->operands[1].reg : X86_REG_INVALID;
		bool imm1 = x->op_count > 1 && x->operands[1].type == X86_OP_IMM;
		int32_t imm = imm1 ? (int32_t)x->operands[1].imm : 0;

		replay_check(table, name, in->address, &st);
		if (cs_insn_group(cs, in, X86_GRP_JUMP))
			fail_msg("%s: %s %s at %#llx: the fixture must be "
				 "straight-line", name, in->mnemonic, in->op_str,
				 (unsigned long long)in->address);
		switch (in->id) {
		case X86_INS_PUSH:
			if (st.cfa_reg == RSP)
				st.cfa_off += 8;
			st.pushes++;
			if (r0 == X86_REG_RBP && !st.rbp_saved) {
				assert_int_equal(st.cfa_reg, RSP);
				st.rbp_saved = true;
				st.rbp_slot = -st.cfa_off;
			}
			break;
		case X86_INS_POP:
			if (st.cfa_reg == RSP)
				st.cfa_off -= 8;
			if (r0 == X86_REG_RBP) {
				/* rsp was at the slot: CFA = rsp + off - 8 */
				if (st.cfa_reg == RBP) {
					st.cfa_reg = RSP;
					st.cfa_off -= 8;
				}
				st.rbp_saved = false;
				st.rbp_popped = true;
			}
			break;
		case X86_INS_LEAVE:
			assert_int_equal(st.cfa_reg, RBP);
			st.cfa_reg = RSP;
			st.cfa_off -= 8;
			st.rbp_saved = false;
			st.rbp_popped = true;
			break;
		case X86_INS_SUB:
		case X86_INS_ADD:
			if (r0 != X86_REG_RSP)
				goto other;
			assert_true(imm1);
			if (st.cfa_reg == RSP)
				st.cfa_off += in->id == X86_INS_SUB ? imm : -imm;
			if (in->id == X86_INS_SUB && imm > st.sub_rsp)
				st.sub_rsp = imm;
			break;
		case X86_INS_MOV:
			if (r0 == X86_REG_RBP && r1 == X86_REG_RSP) {
				assert_true(st.rbp_saved);
				st.cfa_reg = RBP;	/* rbp = rsp: same offset */
				st.cfa_on_rbp = true;
				break;
			}
			goto other;
		case X86_INS_CALL:	/* returns with rsp where it was */
		case X86_INS_RET:
			break;
		default:
		other:
			if (insn_writes(cs, in, X86_REG_RSP) &&
			    !(st.cfa_reg == RBP && r0 == X86_REG_RSP))
				fail_msg("%s: %s %s at %#llx moves rsp in a way "
					 "the replay does not know", name,
					 in->mnemonic, in->op_str,
					 (unsigned long long)in->address);
		}
		if (st.cfa_off > st.max_cfa_off)
			st.max_cfa_off = st.cfa_off;
	}
	assert_int_equal(insns[n - 1].id, X86_INS_RET);
	assert_int_equal(insns[n - 1].address + insns[n - 1].size,
			 f.vaddr + f.size);
	cs_free(insns, n);
	cs_close(&cs);
	return st;
}

static void test_leaf(void **state UNUSED)
{
	struct elfimage_func f = func(&fix, "uw_leaf");
	struct replay st = replay_function(fix.table, "uw_leaf");
	const struct sp_unwind_row *row = cfitable__lookup(fix.table, f.vaddr);

	assert_int_equal(st.max_cfa_off, 8);
	/* One rule, CFA = rsp+8, over the whole function. */
	assert_non_null(row);
	assert_true(row->start <= f.vaddr && row->end >= f.vaddr + f.size);
	expect_rule(fix.table, f.vaddr + f.size - 1, RSP, 8, SAME, 0, "uw_leaf");
}

static void test_omitted_frame_pointer_0x88(void **state UNUSED)
{
	struct elfimage_func f = func(&fix, "uw_frame88");
	struct replay st = replay_function(fix.table, "uw_frame88");

	/* gcc 12: push %rbp; mov %rdi,%rbp; push %rbx; sub $0x88,%rsp. */
	assert_int_equal(st.sub_rsp, 0x88);
	assert_int_equal(st.pushes, 2);
	assert_int_equal(st.max_cfa_off, 8 + 2 * 8 + 0x88);
	assert_false(st.cfa_on_rbp);
	expect_rule(fix.table, f.vaddr, RSP, 8, SAME, 0, "uw_frame88 entry");
	/* After push %rbp (1 byte): rbp is a callee-saved register here. */
	expect_rule(fix.table, f.vaddr + 1, RSP, 16, AT_CFA, -16,
		    "uw_frame88 after push %rbp");
}

static void test_frame_pointer(void **state UNUSED)
{
	struct elfimage_func f = func(&fix, "uw_fp_frame");
	struct replay st = replay_function(fix.table, "uw_fp_frame");

	assert_true(st.cfa_on_rbp);
	assert_true(st.sub_rsp > 0);
	/* push %rbp (1 byte); mov %rsp,%rbp (3 bytes): CFA = rbp+16. */
	expect_rule(fix.table, f.vaddr + 1, RSP, 16, AT_CFA, -16,
		    "uw_fp_frame after push %rbp");
	expect_rule(fix.table, f.vaddr + 4, RBP, 16, AT_CFA, -16,
		    "uw_fp_frame after mov %rsp,%rbp");
	/* The pushes and the sub that follow leave the CFA on rbp. */
	expect_rule(fix.table, f.vaddr + f.size / 2, RBP, 16, AT_CFA, -16,
		    "uw_fp_frame body");
}

static void test_debug_frame_only(void **state UNUSED)
{
	struct elfimage_func f = func(&fix, "uw_dbg_frame");
	struct cfitable_stats st;
	Dwarf_Frame *frame;

	/* No .eh_frame FDE covers it: its rows come from .debug_frame. */
	assert_non_null(fix.eh_cfi);
	assert_int_not_equal(dwarf_cfi_addrframe(fix.eh_cfi, f.vaddr, &frame), 0);
	replay_function(fix.table, "uw_dbg_frame");
	cfitable__stats(fix.table, &st);
	/*
	 * unwind_asm.c's functions are in .debug_frame too, but .eh_frame
	 * covers them: uw_dbg_frame's is the one .debug_frame FDE walked.
	 */
	assert_int_equal(st.debug_fdes, 1);
	assert_int_equal(st.bad_fdes, 0);
}

/* ---- Invariants, lookups, ranges. ---- */

static void check_invariants(const struct cfitable *table)
{
	struct cfitable_stats st;
	const struct sp_unwind_row *rows;
	size_t n, unsupported = 0;
	char a[128], b[128];

	rows = cfitable__rows(table, &n);
	cfitable__stats(table, &st);
	assert_int_equal(st.rows, n);
	for (size_t i = 0; i < n; i++) {
		const struct sp_unwind_row *r = &rows[i];

		assert_true(r->start < r->end);
		assert_int_equal(r->attrs, 0);
		if (r->flags) {
			unsupported++;
			assert_true(r->flags & UNSUP);
			assert_int_equal(r->cfa_reg, SP_UNWIND_CFA_NONE);
			assert_int_equal(r->cfa_offset, 0);
			assert_int_equal(r->rbp_rule, 0);
			assert_int_equal(r->rbp_offset, 0);
		} else {
			assert_true(r->cfa_reg == RSP || r->cfa_reg == RBP);
			assert_true(r->rbp_rule <= UNDEF);
			if (r->rbp_rule != AT_CFA)
				assert_int_equal(r->rbp_offset, 0);
		}
		if (!i)
			continue;
		if (r->start < rows[i - 1].end)
			fail_msg("rows out of order or overlapping: %s, %s",
				 rule_str(&rows[i - 1], a, sizeof(a)),
				 rule_str(r, b, sizeof(b)));
		if (r->start == rows[i - 1].end &&
		    r->cfa_reg == rows[i - 1].cfa_reg &&
		    r->cfa_offset == rows[i - 1].cfa_offset &&
		    r->rbp_rule == rows[i - 1].rbp_rule &&
		    r->rbp_offset == rows[i - 1].rbp_offset &&
		    r->flags == rows[i - 1].flags)
			fail_msg("not merged: %s, %s",
				 rule_str(&rows[i - 1], a, sizeof(a)),
				 rule_str(r, b, sizeof(b)));
	}
	assert_int_equal(st.unsupported, unsupported);
}

/* Rows where libdw failed to evaluate CFI that it has. */
static size_t error_rows(const struct cfitable *table)
{
	const struct sp_unwind_row *rows;
	size_t n, errors = 0;

	rows = cfitable__rows(table, &n);
	for (size_t i = 0; i < n; i++)
		errors += !!(rows[i].flags & SP_UNWIND_F_ERROR);
	return errors;
}

static void test_invariants(void **state UNUSED)
{
	check_invariants(fix.table);
	check_invariants(libc.table);
	assert_int_equal(error_rows(fix.table), 0);
	assert_int_equal(error_rows(libc.table), 0);
}

static void test_lookup_edges(void **state UNUSED)
{
	const struct sp_unwind_row *rows;
	size_t n;

	rows = cfitable__rows(fix.table, &n);
	assert_true(n > 0);
	assert_null(cfitable__lookup(fix.table, 0));
	assert_null(cfitable__lookup(fix.table, rows[0].start - 1));
	assert_null(cfitable__lookup(fix.table, rows[n - 1].end));
	assert_null(cfitable__lookup(fix.table, UINT64_MAX));
	for (size_t i = 0; i < n; i++) {
		const struct sp_unwind_row *r = &rows[i];
		const struct sp_unwind_row *next = cfitable__lookup(fix.table,
								    r->end);

		assert_ptr_equal(cfitable__lookup(fix.table, r->start), r);
		assert_ptr_equal(cfitable__lookup(fix.table, r->end - 1), r);
		assert_true(!next || next == r + 1);
	}
}

static void test_function_ranges(void **state UNUSED)
{
	struct elfimage_func f88 = func(&fix, "uw_frame88");
	struct elfimage_func leaf = func(&fix, "uw_leaf");
	struct elfimage_func asm_frame = func(&fix, "uw_asm_frame");
	/* Out of order, one given twice, one starting mid-function. */
	const struct cfitable_range ranges[] = {
		{ f88.vaddr + 4, f88.vaddr + f88.size },
		{ leaf.vaddr, leaf.vaddr + leaf.size },
		{ leaf.vaddr, leaf.vaddr + 2 },
		{ 5, 5 },				/* empty */
	};
	const struct cfitable_range nowhere = { 0, 0x100 };
	struct cfitable *table;
	const struct sp_unwind_row *rows, *row;
	size_t n;

	assert_int_equal(cfitable__build(fix.path, ranges, ARRAY_SIZE(ranges),
					 &table), 0);
	check_invariants(table);
	rows = cfitable__rows(table, &n);
	for (size_t i = 0; i < n; i++)
		assert_true((rows[i].start >= leaf.vaddr &&
			     rows[i].end <= leaf.vaddr + leaf.size) ||
			    (rows[i].start >= f88.vaddr + 4 &&
			     rows[i].end <= f88.vaddr + f88.size));
	assert_null(cfitable__lookup(table, f88.vaddr));
	assert_null(cfitable__lookup(table, asm_frame.vaddr));
	row = cfitable__lookup(table, f88.vaddr + 4);
	assert_non_null(row);
	assert_int_equal(row->start, f88.vaddr + 4);	/* clipped */
	/* Same rules as the whole-file table. */
	for (uint64_t pc = f88.vaddr + 4; pc < f88.vaddr + f88.size; pc++) {
		const struct sp_unwind_row *a = cfitable__lookup(table, pc);
		const struct sp_unwind_row *b = cfitable__lookup(fix.table, pc);

		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->cfa_reg, b->cfa_reg);
		assert_int_equal(a->cfa_offset, b->cfa_offset);
		assert_int_equal(a->rbp_rule, b->rbp_rule);
		assert_int_equal(a->rbp_offset, b->rbp_offset);
	}
	expect_rule(table, leaf.vaddr, RSP, 8, SAME, 0, "uw_leaf, ranged");
	cfitable__free(table);

	/* Ranges with no code: an empty table, not an error. */
	assert_int_equal(cfitable__build(fix.path, &nowhere, 1, &table), 0);
	rows = cfitable__rows(table, &n);
	assert_int_equal(n, 0);
	assert_null(cfitable__lookup(table, 0x10));
	cfitable__free(table);
}

/* ---- Cross-check against libdw at the address itself. ---- */

struct rule {
	bool supported;
	int cfa_reg;
	int32_t cfa_off;
	int rbp_rule;
	int32_t rbp_off;
};

/* Offset k of CFA+k, from DW_OP_call_frame_cfa [DW_OP_plus_uconst k]. */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *k)
{
	if (!ops || !nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*k = 0;
		return true;
	}
	*k = (int64_t)ops[1].number;
	return nops == 2 && ops[1].atom == DW_OP_plus_uconst;
}

/* What libdw says at pc, in the table's terms.  false: no CFI there. */
static bool libdw_rule(Dwarf_CFI *cfi, uint64_t pc, struct rule *r)
{
	Dwarf_Frame *frame;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signal = false;
	Dwarf_Addr start, end;
	int64_t k;
	int ra;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame))
		return false;
	memset(r, 0, sizeof(*r));
	r->supported = true;
	ra = dwarf_frame_info(frame, &start, &end, &signal);
	assert_true(start <= pc && pc < end);
	if (ra != 16 || signal)
		r->supported = false;
	assert_int_equal(dwarf_frame_cfa(frame, &ops, &nops), 0);
	if (nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == 6 || ops[0].number == 7)) {
		r->cfa_reg = ops[0].number == 7 ? RSP : RBP;
		r->cfa_off = (int32_t)ops[0].number2;
	} else if (nops == 1 && (ops[0].atom == DW_OP_breg7 ||
				 ops[0].atom == DW_OP_breg6)) {
		r->cfa_reg = ops[0].atom == DW_OP_breg7 ? RSP : RBP;
		r->cfa_off = (int32_t)ops[0].number;
	} else {
		r->supported = false;
	}
	assert_int_equal(dwarf_frame_register(frame, 16, mem, &ops, &nops), 0);
	if (!at_cfa(ops, nops, &k) || k != -8)
		r->supported = false;
	assert_int_equal(dwarf_frame_register(frame, 7, mem, &ops, &nops), 0);
	if (!(nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	      ops[1].atom == DW_OP_stack_value))
		r->supported = false;
	assert_int_equal(dwarf_frame_register(frame, 6, mem, &ops, &nops), 0);
	if (!nops && !ops) {
		r->rbp_rule = SAME;
	} else if (!nops) {
		r->rbp_rule = UNDEF;
	} else if (at_cfa(ops, nops, &k)) {
		r->rbp_rule = AT_CFA;
		r->rbp_off = (int32_t)k;
	} else {
		r->supported = false;
	}
	free(frame);
	return true;
}

static void cross_check(struct image *im, uint64_t pc)
{
	const struct sp_unwind_row *row = cfitable__lookup(im->table, pc);
	struct rule r;
	char buf[128];
	bool have = libdw_rule(im->eh_cfi, pc, &r);

	if (!have)
		have = libdw_rule(im->debug_cfi, pc, &r);
	if (!have) {
		if (row && !(row->flags & SP_UNWIND_F_ERROR))
			fail_msg("%s %#llx: libdw has no CFI, the table has %s",
				 im->path, (unsigned long long)pc,
				 rule_str(row, buf, sizeof(buf)));
		return;
	}
	if (!row)
		fail_msg("%s %#llx: no row where libdw has CFI", im->path,
			 (unsigned long long)pc);
	if (!r.supported) {
		if (!(row->flags & UNSUP))
			fail_msg("%s %#llx: libdw's rule is not expressible, the "
				 "table has %s", im->path, (unsigned long long)pc,
				 rule_str(row, buf, sizeof(buf)));
		return;
	}
	if (row->flags || row->cfa_reg != r.cfa_reg ||
	    row->cfa_offset != r.cfa_off || row->rbp_rule != r.rbp_rule ||
	    row->rbp_offset != r.rbp_off)
		fail_msg("%s %#llx: libdw says cfa %s%+d rbp %d%+d, table has %s",
			 im->path, (unsigned long long)pc,
			 r.cfa_reg == RSP ? "rsp" : "rbp", r.cfa_off, r.rbp_rule,
			 r.rbp_off, rule_str(row, buf, sizeof(buf)));
}

static bool section_range(Elf *elf, const char *name, struct cfitable_range *r)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *s;

		assert_non_null(gelf_getshdr(scn, &shdr));
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name)) {
			r->start = shdr.sh_addr;
			r->end = shdr.sh_addr + shdr.sh_size;
			return true;
		}
	}
	return false;
}

static void test_fixture_every_byte_matches_libdw(void **state UNUSED)
{
	struct cfitable_range text;

	assert_true(section_range(fix.elf, ".text", &text));
	for (uint64_t pc = text.start - 0x40; pc < text.end + 0x40; pc++)
		cross_check(&fix, pc);
}

static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_libc_random_addresses_match_libdw(void **state UNUSED)
{
	const uint64_t seed = 0x5eed0fc0ffee1234ULL;
	struct cfitable_range text;
	uint64_t s = seed;
	size_t covered = 0;

	assert_true(section_range(libc.elf, ".text", &text));
	print_message("libc cross-check: seed %#llx, .text [%#llx,%#llx)\n",
		      (unsigned long long)seed, (unsigned long long)text.start,
		      (unsigned long long)text.end);
	for (int i = 0; i < 1000; i++) {
		uint64_t pc = text.start + xorshift64(&s) % (text.end - text.start);

		cross_check(&libc, pc);
		covered += cfitable__lookup(libc.table, pc) != NULL;
	}
	/* Nearly all of .text is under an FDE; the rest is padding. */
	assert_true(covered > 900);
}

/* ---- The system libc. ---- */

static void test_libc_mutex_lock_entry(void **state UNUSED)
{
	struct elfimage_func f = func(&libc, "pthread_mutex_lock");

	expect_rule(libc.table, f.vaddr, RSP, 8, SAME, 0,
		    "pthread_mutex_lock entry");
}

static void test_libc_whole_build(void **state UNUSED)
{
	struct cfitable_stats st;
	struct cfitable_range plt;
	size_t plt_exprs = 0;

	cfitable__stats(libc.table, &st);
	print_message("libc %s: %zu rows (%zu unsupported, %zu bytes) from "
		      "%zu FDEs (%zu .debug_frame, %zu undecodable) in %.1f ms\n",
		      libc.path, st.rows, st.unsupported,
		      st.rows * sizeof(struct sp_unwind_row), st.fdes,
		      st.debug_fdes, st.bad_fdes, libc_build_ms);
	/* Well under a second is the aim; only a pathology fails here. */
	assert_true(libc_build_ms < 5000);
	assert_true(st.fdes > 1000);
	assert_true(st.rows >= st.fdes);
	assert_int_equal(st.bad_fdes, 0);
	/* Some is unsupported (the PLT's CFA is an expression), little is. */
	assert_true(st.unsupported > 0);
	assert_true(st.unsupported < st.rows / 100);
	if (section_range(libc.elf, ".plt", &plt)) {
		const struct sp_unwind_row *rows;
		size_t n;

		rows = cfitable__rows(libc.table, &n);
		for (size_t i = 0; i < n; i++)
			plt_exprs += rows[i].start >= plt.start &&
				     rows[i].end <= plt.end &&
				     (rows[i].flags & SP_UNWIND_F_CFA_EXPR);
		assert_true(plt_exprs > 0);
	}
}

static void test_libc_text_only(void **state UNUSED)
{
	struct elfimage_func f = func(&libc, "pthread_mutex_lock");
	struct cfitable_range text;
	struct cfitable_stats all, st;
	struct cfitable *table;
	const struct sp_unwind_row *rows;
	size_t n;

	assert_true(section_range(libc.elf, ".text", &text));
	assert_int_equal(cfitable__build(libc.path, &text, 1, &table), 0);
	check_invariants(table);
	cfitable__stats(libc.table, &all);
	cfitable__stats(table, &st);
	print_message("libc .text only: %zu rows (%zu unsupported)\n", st.rows,
		      st.unsupported);
	assert_true(st.rows > 0 && st.rows <= all.rows);
	rows = cfitable__rows(table, &n);
	for (size_t i = 0; i < n; i++)
		assert_true(rows[i].start >= text.start && rows[i].end <= text.end);
	expect_rule(table, f.vaddr, RSP, 8, SAME, 0, "pthread_mutex_lock, .text");
	cfitable__free(table);
}

/* ---- Errors, and the Elf * entry point. ---- */

/* The fixture in memory, to be altered and read with elf_memory. */
static char *load_fixture(size_t *size)
{
	struct stat sb;
	char *buf;
	int fd = open(fix.path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	*size = (size_t)sb.st_size;
	return buf;
}

/* Renames section `name` in the file image: ".eh_frame" -> ".Xh_frame". */
static void rename_section(char *buf, size_t size, const char *name)
{
	Elf *elf = elf_memory(buf, size);
	Elf_Scn *scn = NULL, *strs;
	GElf_Shdr shdr, strs_shdr;
	size_t shstrndx;
	bool done = false;

	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	strs = elf_getscn(elf, shstrndx);
	assert_non_null(gelf_getshdr(strs, &strs_shdr));
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		assert_non_null(gelf_getshdr(scn, &shdr));
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name)) {
			buf[strs_shdr.sh_offset + shdr.sh_name + 1] = 'X';
			done = true;
		}
	}
	elf_end(elf);
	assert_true(done);
}

static int build_memory(char *buf, size_t size, struct cfitable **table)
{
	Elf *elf = elf_memory(buf, size);
	int err;

	assert_non_null(elf);
	err = cfitable__build_elf(elf, NULL, 0, table);
	elf_end(elf);
	return err;
}

static void test_build_elf_debug_frame_alone(void **state UNUSED)
{
	static const struct want want[] = {
		{ 0, 1, RSP, 8, SAME, 0, 0 },
		{ 1, 2, RSP, 16, SAME, 0, 0 },
		{ 2, 9, RSP, 24, AT_CFA, -24, 0 },
		{ 9, 17, RSP, 0xa0, AT_CFA, -24, 0 },
		{ 17, 18, RSP, 24, AT_CFA, -24, 0 },
		{ 18, 19, RSP, 16, SAME, 0, 0 },
		{ 19, 20, RSP, 8, SAME, 0, 0 },
	};
	struct elfimage_func f88 = func(&fix, "uw_frame88");
	struct cfitable *table;
	const struct sp_unwind_row *rows, *file_rows;
	struct cfitable_stats st;
	size_t size, n, file_n;
	char *buf = load_fixture(&size);

	/* Unchanged, through elf_memory: the same table. */
	assert_int_equal(build_memory(buf, size, &table), 0);
	rows = cfitable__rows(table, &n);
	file_rows = cfitable__rows(fix.table, &file_n);
	assert_int_equal(n, file_n);
	assert_memory_equal(rows, file_rows, n * sizeof(*rows));
	cfitable__free(table);

	/* Without .eh_frame: what .debug_frame has, and only that. */
	rename_section(buf, size, ".eh_frame");
	assert_int_equal(build_memory(buf, size, &table), 0);
	check_invariants(table);
	cfitable__stats(table, &st);
	assert_true(st.debug_fdes > 10);
	assert_int_equal(st.fdes, st.debug_fdes);
	assert_null(cfitable__lookup(table, f88.vaddr));	/* .eh_frame's */
	EXPECT_ROWS(table, "uw_asm_frame", want);
	replay_function(table, "uw_dbg_frame");
	cfitable__free(table);

	/* Without either: nothing to build from. */
	rename_section(buf, size, ".debug_frame");
	table = (struct cfitable *)0x1;
	assert_int_equal(build_memory(buf, size, &table), -ENOENT);
	assert_ptr_equal(table, (struct cfitable *)0x1);
	free(buf);
}

/* Empties section `name` in the file image: zero bytes, as .eh_frame's
 * terminator. */
static void zero_section(char *buf, size_t size, const char *name)
{
	Elf *elf = elf_memory(buf, size);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	bool done = false;

	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		assert_non_null(gelf_getshdr(scn, &shdr));
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name)) {
			assert_true(shdr.sh_offset + shdr.sh_size <= size);
			memset(buf + shdr.sh_offset, 0, shdr.sh_size);
			done = true;
		}
	}
	elf_end(elf);
	assert_true(done);
}

/*
 * An .eh_frame with no FDE at all (the fuzzer's find): the table comes
 * from .debug_frame, and no function range is known.  It sorted a NULL
 * array of none, which UBSan (make sanitize) stops on.
 */
static void test_eh_frame_without_fdes(void **state UNUSED)
{
	struct elfimage_func f = func(&fix, "uw_dbg_frame");
	struct cfitable_range range;
	struct cfitable *table;
	struct cfitable_stats st;
	size_t size;
	char *buf = load_fixture(&size);

	zero_section(buf, size, ".eh_frame");
	assert_int_equal(build_memory(buf, size, &table), 0);
	check_invariants(table);
	cfitable__stats(table, &st);
	assert_true(st.debug_fdes > 10);
	assert_int_equal(st.fdes, st.debug_fdes);
	assert_non_null(cfitable__lookup(table, f.vaddr));
	assert_int_equal(cfitable__function_at(table, f.vaddr, &range), -ENOENT);
	cfitable__free(table);
	free(buf);
}

static void test_errors(void **state UNUSED)
{
	char path[] = "/tmp/syncprof-cfitable-XXXXXX";
	struct cfitable *table = (struct cfitable *)0x1;
	size_t size;
	char *buf;
	int fd;

	assert_int_equal(cfitable__build("/nonexistent/libnothing.so", NULL, 0,
					 &table), -ENOENT);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(cfitable__build(path, NULL, 0, &table), -ENOEXEC);
	assert_int_equal(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	assert_int_equal(cfitable__build(path, NULL, 0, &table), -ENOEXEC);
	close(fd);
	unlink(path);
	assert_int_equal(cfitable__build_elf(NULL, NULL, 0, &table), -ENOEXEC);

	/* Another machine: e_machine is at offset 18. */
	buf = load_fixture(&size);
	buf[18] = (char)(EM_AARCH64 & 0xff);
	buf[19] = (char)(EM_AARCH64 >> 8);
	assert_int_equal(build_memory(buf, size, &table), -EOPNOTSUPP);
	free(buf);
	assert_ptr_equal(table, (struct cfitable *)0x1);
	cfitable__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pushes_and_0x88_frame),
		cmocka_unit_test(test_identical_neighbours_merge),
		cmocka_unit_test(test_register_only_changes_merge),
		cmocka_unit_test(test_remember_restore_state),
		cmocka_unit_test(test_cfa_expression_is_unsupported),
		cmocka_unit_test(test_cfa_on_other_register_is_unsupported),
		cmocka_unit_test(test_return_address_elsewhere_is_unsupported),
		cmocka_unit_test(test_rbp_and_rsp_rules),
		cmocka_unit_test(test_signal_frame_is_unsupported),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_omitted_frame_pointer_0x88),
		cmocka_unit_test(test_frame_pointer),
		cmocka_unit_test(test_debug_frame_only),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_lookup_edges),
		cmocka_unit_test(test_eh_frame_without_fdes),
		cmocka_unit_test(test_function_ranges),
		cmocka_unit_test(test_fixture_every_byte_matches_libdw),
		cmocka_unit_test(test_libc_mutex_lock_entry),
		cmocka_unit_test(test_libc_whole_build),
		cmocka_unit_test(test_libc_text_only),
		cmocka_unit_test(test_libc_random_addresses_match_libdw),
		cmocka_unit_test(test_build_elf_debug_frame_alone),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("cfitable", tests, group_setup,
					   group_teardown);
}
