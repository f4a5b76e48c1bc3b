// SPDX-License-Identifier: GPL-2.0
/*
 * Frame pointers where CFI is missing: a module is walked by frame
 * pointer, where it has no rows, when its CFI covers less than a quarter
 * of its functions' code.  The C runtime's own functions (_start,
 * frame_dummy...) are left out of the count: a module built without
 * unwind tables still links their FDEs on some systems (and the linker's
 * PLT entries), and in a tiny library built with unwind tables they
 * outweigh the library's own code.  A module built with unwind tables
 * covers nearly all of its functions, and its gaps are hand-written
 * code, where an rbp-based guess in code that keeps no frame pointer
 * would walk garbage, so the walk stops there.  A file without function
 * symbols is judged by its executable sections instead.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "modtable.h"

struct modtable {
	struct sp_unwind_row *rows;
	size_t n_rows;
	size_t skipped;
	size_t user_skipped;
	bool fp;
};

struct rowvec {
	struct sp_unwind_row *v;
	size_t n, cap;
};

static int rowvec__push(struct rowvec *r, const struct sp_unwind_row *row,
			uint64_t start, uint64_t end, uint32_t attrs)
{
	if (start >= end)
		return 0;
	if (array__grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return -ENOMEM;
	r->v[r->n] = *row;
	r->v[r->n].start = start;
	r->v[r->n].end = end;
	r->v[r->n].attrs = attrs;
	r->n++;
	return 0;
}

/* push rbp; mov rsp, rbp: CFA = rbp + 16, the caller's rbp at CFA - 16. */
static const struct sp_unwind_row fp_rule = {
	.cfa_reg = SP_UNWIND_CFA_RBP,
	.cfa_offset = 16,
	.rbp_rule = SP_UNWIND_RBP_AT_CFA,
	.rbp_offset = -16,
};

int modtable__mark(const struct sp_unwind_row *rows, size_t n,
		   const struct skiplist_range *ranges, size_t n_ranges,
		   bool fp, struct sp_unwind_row **out, size_t *n_out)
{
	struct rowvec r = { 0 };
	size_t k = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		uint64_t cur = rows[i].start;

		while (k < n_ranges && ranges[k].end <= cur)
			k++;
		while (cur < rows[i].end && !err) {
			uint64_t end = rows[i].end;

			if (k < n_ranges && ranges[k].start <= cur) {
				if (ranges[k].end < end)
					end = ranges[k].end;
				err = rowvec__push(&r, &rows[i], cur, end,
						   rows[i].attrs | ranges[k].attrs);
			} else {
				if (k < n_ranges && ranges[k].start < end)
					end = ranges[k].start;
				err = rowvec__push(&r, &rows[i], cur, end,
						   rows[i].attrs);
			}
			cur = end;
			while (k < n_ranges && ranges[k].end <= cur)
				k++;
		}
	}
	/* The parts of ranges without rows, for a frame-pointer module. */
	for (size_t j = 0, i = 0; fp && j < n_ranges && !err; j++) {
		uint64_t cur = ranges[j].start;

		while (i < n && rows[i].end <= cur)
			i++;
		for (size_t m = i; m < n && rows[m].start < ranges[j].end &&
		     !err; m++) {
			err = rowvec__push(&r, &fp_rule, cur, rows[m].start,
					   ranges[j].attrs);
			if (rows[m].end > cur)
				cur = rows[m].end;
		}
		if (!err)
			err = rowvec__push(&r, &fp_rule, cur, ranges[j].end,
					   ranges[j].attrs);
	}
	if (err) {
		free(r.v);
		return err;
	}
	cfitable__sort_rows(r.v, r.n);
	*out = r.v;
	*n_out = r.n;
	return 0;
}

/* Bytes of executable sections (else executable segments). */
static uint64_t code_size(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	size_t n;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type != SHT_NOBITS &&
		    (shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
		    (SHF_ALLOC | SHF_EXECINSTR))
			total += shdr.sh_size;
	}
	if (!total && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr phdr;

			if (gelf_getphdr(elf, (int)i, &phdr) &&
			    phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X))
				total += phdr.p_memsz;
		}
	}
	return total;
}

/* What the C runtime's start files link into every module. */
static bool crt_function(const char *name)
{
	static const char *const names[] = {
		"_start", "_init", "_fini", "deregister_tm_clones",
		"register_tm_clones", "__do_global_dtors_aux", "frame_dummy",
		"__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

struct coverage {
	const struct sp_unwind_row *rows;
	size_t n_rows;
	uint64_t covered, total;
};

/* Bytes of [lo, hi) that rows (sorted, disjoint) cover. */
static uint64_t rows_cover(const struct sp_unwind_row *rows, size_t n,
			   uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n;
	uint64_t sum = 0;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (rows[mid].end <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i < n && rows[i].start < hi; i++) {
		uint64_t s = rows[i].start > lo ? rows[i].start : lo;
		uint64_t e = rows[i].end < hi ? rows[i].end : hi;

		sum += e - s;
	}
	return sum;
}

static int coverage__add(void *ctx, const char *name, uint64_t vaddr,
			 uint64_t size)
{
	struct coverage *c = ctx;

	if (!size || crt_function(name))
		return 0;
	c->total += size;
	c->covered += rows_cover(c->rows, c->n_rows, vaddr, vaddr + size);
	return 0;
}

/* Whether the module's own code lacks CFI (see the top of this file). */
static bool needs_frame_pointers(struct elfimage *image,
				 const struct sp_unwind_row *rows, size_t n)
{
	struct coverage c = { .rows = rows, .n_rows = n };
	uint64_t covered = 0;

	elfimage__for_each_func(image, coverage__add, &c);
	if (c.total)
		return c.covered * 4 < c.total;
	for (size_t i = 0; i < n; i++)
		covered += rows[i].end - rows[i].start;
	return covered * 4 < code_size(elfimage__elf(image));
}

int modtable__build(struct elfimage *image, const struct skiplist *skip,
		    struct modtable **out)
{
	struct modtable *t = calloc(1, sizeof(*t));
	struct skiplist_range *ranges = NULL;
	const struct sp_unwind_row *rows = NULL;
	struct cfitable *cfi = NULL;
	size_t n_rows = 0, n_ranges = 0;
	int err;

	if (!t)
		return -ENOMEM;
	err = cfitable__build_elf(elfimage__elf(image), NULL, 0, &cfi);
	if (err && err != -ENOENT && err != -EINVAL)
		goto out;
	if (cfi)
		rows = cfitable__rows(cfi, &n_rows);
	t->fp = needs_frame_pointers(image, rows, n_rows);
	err = skiplist__ranges(skip, image, cfi, &ranges, &n_ranges);
	if (!err)
		err = modtable__mark(rows, n_rows, ranges, n_ranges, t->fp,
				     &t->rows, &t->n_rows);
	t->skipped = n_ranges;
	for (size_t i = 0; i < n_ranges; i++)
		t->user_skipped += ranges[i].user;
out:
	free(ranges);
	cfitable__free(cfi);
	if (err) {
		modtable__free(t);
		return err;
	}
	*out = t;
	return 0;
}

void modtable__free(struct modtable *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct sp_unwind_row *modtable__rows(const struct modtable *t,
					   size_t *n)
{
	*n = t->n_rows;
	return t->rows;
}

bool modtable__frame_pointers(const struct modtable *t)
{
	return t->fp;
}

size_t modtable__skipped(const struct modtable *t)
{
	return t->skipped;
}

size_t modtable__user_skipped(const struct modtable *t)
{
	return t->user_skipped;
}
