// SPDX-License-Identifier: GPL-2.0
/*
 * Late walks (latewalk.h).  A library dlopen'ed just before its first
 * waits is mapped microseconds before it is used, and its table takes the
 * loader tens of milliseconds to build (libgstcoreelements.so: 11,909
 * rows, 42 ms here): a short GStreamer pipeline's every stack stopped at
 * the plugin (4,339 of 4,356 waits).  The kernel walks again when the
 * wait ends; a walk still cut then copies the stack above the cut frame
 * (4 KiB, else 1 KiB) with the frame's registers, and the loader walks
 * the rest here once the table is read.
 *
 * Chosen: the kernel's rules, applied the kernel's way, over its copy,
 * and each late wait filed under a stack id of its own, made an alias of
 * the id the kernel gives the same frames.  Rejected: stopping the
 * thread at the dlopen until the table is read (a SIGSTOP the parent
 * sees); filing late waits under the cut stack's id (two waits cut at
 * one frame may come from different callers); walking a copy by guessing
 * return addresses (no rule says which words are frames).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "latewalk.h"
#include "syncprof.h"

/* Pending walks kept at most (5 KiB each); more are cut (counted). */
#define LATEWALK_MAX_PENDING	4096

struct pending {
	struct sp_late_walk *rec;	/* the kernel's record, as received */
};

struct latewalks {
	unsigned int depth;
	struct pending *v;
	size_t n, cap;
	struct latewalk_stats stats;
};

int latewalks__new(unsigned int depth, struct latewalks **out)
{
	struct latewalks *lw = calloc(1, sizeof(*lw));

	if (!lw)
		return -ENOMEM;
	lw->depth = depth < SP_STACK_MAX_DEPTH ? depth : SP_STACK_MAX_DEPTH;
	*out = lw;
	return 0;
}

void latewalks__free(struct latewalks *lw)
{
	if (!lw)
		return;
	for (size_t i = 0; i < lw->n; i++)
		free(lw->v[i].rec);
	free(lw->v);
	free(lw);
}

int latewalks__add(struct latewalks *lw, const void *data, size_t size)
{
	struct sp_late_walk *rec;

	if (size < sizeof(*rec))
		return -EINVAL;
	lw->stats.kept++;
	if (lw->n >= LATEWALK_MAX_PENDING) {
		lw->stats.cut++;
		return 0;
	}
	if (array__grow(&lw->v, &lw->cap, lw->n + 1, sizeof(*lw->v)))
		return -ENOMEM;
	rec = malloc(sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	memcpy(rec, data, sizeof(*rec));
	if (rec->n > SP_STACK_MAX_DEPTH)
		rec->n = SP_STACK_MAX_DEPTH;
	if (rec->bytes > SP_LATE_STACK_BYTES)
		rec->bytes = 0;
	lw->v[lw->n++] = (struct pending){ .rec = rec };
	return 0;
}

uint64_t latewalk__stack_id(const uint64_t *pcs, uint32_t n, uint32_t end)
{
	uint64_t h = 0, id;

	for (uint32_t i = 0; i < n; i++)
		h = ((h << 13 | h >> 51) ^ pcs[i]) * 0x9e3779b97f4a7c15ull;
	id = (h ^ (uint64_t)n << 56 ^ (uint64_t)end << 48) *
	     0xff51afd7ed558ccdull;
	id ^= id >> 32;
	return id ? id : 1;
}

/* A word of the copied stack at address at: false if outside the copy. */
static bool copy_read(const struct sp_late_walk *rec, uint64_t at,
		      uint64_t *out)
{
	if (at < rec->sp || at + 8 > rec->sp + rec->bytes)
		return false;
	memcpy(out, rec->stack + (at - rec->sp), 8);
	return true;
}

enum walk_result { WALK_DONE, WALK_AGAIN, WALK_CUT };

struct rule {
	int kind;		/* 0 stop, 1 rsp, 2 rbp, 3 end */
	int32_t cfa_off;
	uint8_t rbp_rule;
	int32_t rbp_off;
};

static int rule_of(latewalk_rule_fn fn, void *ctx, pid_t pid, uint64_t addr,
		   struct rule *r)
{
	struct sp_unwind_row row;
	uint32_t flags = 0;
	int err = fn(ctx, pid, addr, &row, &flags);

	*r = (struct rule){ 0 };
	if (err == -EAGAIN)
		return err;
	if (err) {
		/* No row: frame pointers where the module has no CFI. */
		if (flags & SP_MAP_F_FP)
			*r = (struct rule){ 2, 16, SP_UNWIND_RBP_AT_CFA, -16 };
		return 0;
	}
	if (row.flags & SP_UNWIND_F_UNSUPPORTED) {
		r->kind = row.flags & SP_UNWIND_F_RA_UNDEFINED ? 3 : 0;
		return 0;
	}
	if (row.rbp_rule == SP_UNWIND_RBP_AT_CFA &&
	    (row.rbp_offset < -32768 || row.rbp_offset > 32767))
		return 0;
	r->kind = row.cfa_reg == SP_UNWIND_CFA_RSP ? 1 : 2;
	r->cfa_off = row.cfa_offset;
	r->rbp_rule = row.rbp_rule;
	r->rbp_off = row.rbp_offset;
	return 0;
}

/*
 * The frames beyond the cut, as unwind_step takes them: pcs (the kept
 * frames first) and *n, *end.  WALK_AGAIN: a table not read yet.
 */
static enum walk_result walk(const struct sp_late_walk *rec,
			     unsigned int depth, latewalk_rule_fn fn,
			     void *ctx, uint64_t *pcs, uint32_t *n,
			     uint32_t *end)
{
	uint64_t pc = rec->pc, sp = rec->sp, bp = rec->bp;
	bool bp_known = rec->bp_known, first = true;

	memcpy(pcs, rec->pcs, rec->n * sizeof(*pcs));
	*n = rec->n;
	*end = SP_STACK_STOPPED;
	for (unsigned int i = 0; i < SP_UNWIND_MAX_FRAMES + depth; i++) {
		uint64_t addr = pc - ((!first || rec->lookup_ret) ? 1 : 0);
		uint64_t cfa, ra, saved;
		struct rule r;

		if (rule_of(fn, ctx, (pid_t)rec->tgid, addr, &r))
			return WALK_AGAIN;
		if (!first && *n < depth)
			pcs[(*n)++] = pc;
		first = false;
		if (r.kind == 3) {
			*end = SP_STACK_COMPLETE;
			return WALK_DONE;
		}
		if (!r.kind)
			return WALK_DONE;	/* stopped: no rule goes on */
		if (*n >= depth) {
			*end = SP_STACK_TRUNCATED;
			return WALK_DONE;
		}
		if (r.kind == 1)
			cfa = sp + (int64_t)r.cfa_off;
		else if (bp_known)
			cfa = bp + (int64_t)r.cfa_off;
		else
			return WALK_DONE;
		if (cfa <= sp)
			return WALK_DONE;
		if (!copy_read(rec, cfa - 8, &ra))
			return WALK_CUT;	/* beyond the bytes kept */
		if (r.rbp_rule == SP_UNWIND_RBP_AT_CFA) {
			bp_known = copy_read(rec, cfa + r.rbp_off, &saved);
			bp = saved;
		} else if (r.rbp_rule == SP_UNWIND_RBP_UNDEFINED) {
			bp_known = false;
		}
		sp = cfa;
		pc = ra;
		if (!ra) {
			*end = SP_STACK_COMPLETE;
			return WALK_DONE;
		}
	}
	return WALK_DONE;
}

/* The finished stack under the wait's id, aliased to the kernel's id. */
static int latewalks__file(const struct sp_late_walk *rec, uint64_t *pcs,
			   uint32_t n, uint32_t end,
			   uint64_t (*translate)(void *, pid_t, uint64_t),
			   void *translate_ctx, struct stacktab *tab)
{
	uint64_t canonical = latewalk__stack_id(pcs, n, end);
	int err;

	for (uint32_t k = 0; translate && k < n; k++)
		pcs[k] = translate(translate_ctx, (pid_t)rec->tgid, pcs[k]);
	err = stacktab__add(tab, rec->id, pcs, n, (enum stacktab_end)end);
	if (!err)
		err = stacktab__add(tab, canonical, pcs, n,
				    (enum stacktab_end)end);
	if (!err)
		err = stacktab__alias(tab, rec->id, canonical);
	return err;
}

int latewalks__finish(struct latewalks *lw, latewalk_rule_fn rule, void *ctx,
		      uint64_t (*translate)(void *ctx, pid_t pid, uint64_t pc),
		      void *translate_ctx, struct stacktab *tab, bool final)
{
	uint64_t pcs[SP_STACK_MAX_DEPTH];
	size_t kept = 0;
	int err = 0;

	for (size_t i = 0; i < lw->n; i++) {
		struct pending *p = &lw->v[i];
		enum walk_result res = WALK_AGAIN;
		uint32_t n = 0, end = SP_STACK_STOPPED;

		if (!err)
			res = walk(p->rec, lw->depth, rule, ctx, pcs, &n, &end);
		if (res == WALK_AGAIN && !final && !err) {
			lw->v[kept++] = *p;
			continue;
		}
		if (res == WALK_DONE) {
			err = latewalks__file(p->rec, pcs, n, end, translate,
					      translate_ctx, tab);
			lw->stats.finished++;
		} else {
			lw->stats.cut++;
		}
		free(p->rec);
	}
	lw->n = kept;
	return err;
}

size_t latewalks__pending(const struct latewalks *lw)
{
	return lw ? lw->n : 0;
}

void latewalks__stats(const struct latewalks *lw, struct latewalk_stats *st)
{
	*st = lw ? lw->stats : (struct latewalk_stats){ 0 };
}
