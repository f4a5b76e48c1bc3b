// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder: its maps and settings, defined once, and the walk, a
 * global function the futex and uprobe programs call (unwind_user); the
 * design is described in unwind.bpf.h.  The one program here is the exec
 * watch, which marks the target's tables stale the moment its image is
 * replaced.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "unwind.h"
#include "errno.bpf.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"

/* Frames kept per stack (0: the call site only), set before load. */
const volatile __u32 stack_depth = 0;
/* Whether some rows carry SP_UNWIND_A_SKIP: walk past them for the call site. */
const volatile __u32 skip_enabled = 0;
/* The modelled libc: its classified functions, and glibc's own lock wait. */
const volatile __u32 func_nrows = 0;
const volatile __u64 lll_private_start = 0;	/* file-relative */
const volatile __u64 lll_private_end = 0;

/* Keep the raw frames of walks still cut when their wait ends. */
const volatile __u32 late_walks_on = 0;
/* Makes each late walk's stack id its own. */
__u64 late_seq = 0;

/* Bumped here when the target execs: every table it had is stale. */
volatile __u32 exec_seq = 0;

unwind_tables_map_t unwind_tables SEC(".maps");
proc_mappings_map_t proc_mappings SEC(".maps");
frame_cache_map_t frame_cache SEC(".maps");
stacks_map_t stacks SEC(".maps");		/* value size set by the loader */
walk_scratch_map_t walk_scratch SEC(".maps");
libc_funcs_map_t libc_funcs SEC(".maps");	/* max_entries set by the loader */
exec_seqs_map_t exec_seqs SEC(".maps");
forked_from_map_t forked_from SEC(".maps");
unwind_files_map_t unwind_files SEC(".maps");
proc_layouts_map_t proc_layouts SEC(".maps");
late_walks_map_t late_walks SEC(".maps");

/* Frames walked past the call site looking for one outside --skip. */
#define SP_SKIP_MAX_FRAMES	32
/* Binary search steps: 2^10 mappings, 2^24 rows. */
#define MAPPING_SEARCH_STEPS	11
#define ROW_SEARCH_STEPS	25

struct mapping_search {
	void *maps;		/* the process's mapping array */
	__u64 addr;
	__u32 lo, hi;
	bool found;
	struct sp_mapping m;
};

static long mapping_search_step(__u32 i, void *data)
{
	struct mapping_search *s = data;
	struct sp_mapping *m;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	m = bpf_map_lookup_elem(s->maps, &mid);
	if (!m)
		return 1;
	if (s->addr < m->start) {
		s->hi = mid;
	} else if (s->addr >= m->end) {
		s->lo = mid + 1;
	} else {
		s->m = *m;
		s->found = true;
		return 1;
	}
	return 0;
}

struct row_search {
	void *rows;		/* one build's rows */
	__u64 addr;
	__u32 lo, hi;
	bool found;
	struct sp_unwind_row row;
};

static long row_search_step(__u32 i, void *data)
{
	struct row_search *s = data;
	struct sp_unwind_row *row;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	row = bpf_map_lookup_elem(s->rows, &mid);
	if (!row)
		return 1;
	if (s->addr < row->start) {
		s->hi = mid;
	} else if (s->addr >= row->end) {
		s->lo = mid + 1;
	} else {
		s->row = *row;
		s->found = true;
		return 1;
	}
	return 0;
}

struct func_search {
	__u64 addr;
	__u32 class;
};

static long func_search_step(__u32 i, void *data)
{
	struct func_search *s = data;
	struct sp_func_range *f = bpf_map_lookup_elem(&libc_funcs, &i);

	if (!f || s->addr < f->start)
		return 1;	/* sorted: nothing further can hold it */
	if (s->addr < f->end) {
		s->class = f->class;
		return 1;
	}
	return 0;
}

/* What bpf_find_vma saw at an address: its file and where it maps. */
struct vma_file {
	__u64 start;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u32 found;		/* a file-backed VMA */
};

static long vma_file_cb(struct task_struct *task, struct vm_area_struct *vma,
			void *data)
{
	struct vma_file *v = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);

	if (!file)
		return 0;
	v->start = BPF_CORE_READ(vma, vm_start);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	v->ino = BPF_CORE_READ(file, f_inode, i_ino);
	v->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	v->found = 1;
	return 0;
}

/*
 * An address the process's mapping array does not place (just after an
 * exec or a dlopen, or after the main thread exited): its mapping from
 * the VMA and the table of its file, if the loader has read that file
 * for any process.  1: placed in *m; 0: in no file (JIT, anonymous
 * code); -1: a file whose table is not read yet, or the VMAs could not
 * be looked at (mmap lock taken).
 */
static __noinline int mapping_by_file(__u64 addr, struct sp_mapping *m)
{
	struct vma_file v = {};
	struct sp_file_key key = {};
	struct sp_file_table *t;
	__u64 off;
	long err;

	err = bpf_find_vma(bpf_get_current_task_btf(), addr, vma_file_cb, &v, 0);
	if (err == -ENOENT)
		return 0;
	if (err)
		return -1;
	if (!v.found)
		return 0;
	key.ino = v.ino;
	key.dev = v.dev;
	t = bpf_map_lookup_elem(&unwind_files, &key);
	if (!t)
		return -1;
	off = addr - v.start + (v.pgoff << 12);
	if (off < t->off_start || off >= t->off_end)
		return -1;
	m->start = addr;
	m->end = addr + 1;
	m->bias = addr - (__u64)((__s64)off + t->vaddr_delta);
	m->table = t->table;
	m->flags = t->flags;
	m->n_rows = t->n_rows;
	return 1;
}

static __always_inline __u64 rule_from_row(const struct sp_unwind_row *row)
{
	__u32 kind;

	if (row->flags & SP_UNWIND_F_UNSUPPORTED)
		return rule_make(row->flags & SP_UNWIND_F_RA_UNDEFINED ?
				 RULE_K_END : RULE_K_STOP, 0, 0, 0);
	if (row->rbp_rule == SP_UNWIND_RBP_AT_CFA &&
	    (row->rbp_offset < -32768 || row->rbp_offset > 32767))
		return rule_make(RULE_K_STOP, 0, 0, 0);
	kind = row->cfa_reg == SP_UNWIND_CFA_RSP ? RULE_K_RSP : RULE_K_RBP;
	return rule_make(kind, row->cfa_offset, row->rbp_rule, row->rbp_offset);
}

/*
 * The rule at a lookup address (pc, or ra - 1), from the tables: the
 * frame cache's miss path.
 */
__noinline __u64 frame_rule_lookup(__u32 tgid, __u64 addr)
{
	struct mapping_search ms = { .addr = addr, .lo = 1 };
	struct row_search rs = {};
	struct sp_mapping *hdr;
	__u32 zero = 0, *seq, image = 0;
	__u64 rule, rel;
	void *maps;

	counter_bump(SP_CNT_FRAME_MISS);
	seq = bpf_map_lookup_elem(&exec_seqs, &tgid);
	if (seq)
		image = *seq;
	maps = bpf_map_lookup_elem(&proc_mappings, &tgid);
	if (!maps) {
		/* Forked, not read yet: the parent's image, if not exec'ed. */
		__u32 *parent = bpf_map_lookup_elem(&forked_from, &tgid);

		if (parent && !seq) {
			maps = bpf_map_lookup_elem(&proc_mappings, parent);
			seq = bpf_map_lookup_elem(&exec_seqs, parent);
			image = seq ? *seq : 0;
		}
	}
	hdr = maps ? bpf_map_lookup_elem(maps, &zero) : NULL;
	if (hdr && hdr->end == image) {
		ms.maps = maps;
		ms.hi = (__u32)hdr->start + 1;
		bpf_loop(MAPPING_SEARCH_STEPS, mapping_search_step, &ms, 0);
	}
	if (!ms.found) {
		/* Not placed (yet): by the VMA's file. */
		int placed = mapping_by_file(addr, &ms.m);

		if (placed < 0)
			return rule_make(RULE_K_STALE, 0, 0, 0);
		if (!placed)
			return rule_make(RULE_K_ANON, 0, 0, 0);
	}
	rel = addr - ms.m.bias;
	if (ms.m.table != SP_TABLE_NONE) {
		rs.rows = bpf_map_lookup_elem(&unwind_tables, &ms.m.table);
		if (rs.rows) {
			rs.addr = rel;
			rs.hi = ms.m.n_rows;
			bpf_loop(ROW_SEARCH_STEPS, row_search_step, &rs, 0);
		}
	}
	if (rs.found) {
		rule = rule_from_row(&rs.row);
		if (rs.row.attrs & SP_UNWIND_A_SKIP)
			rule |= RULE_SKIP;
		/* The kind and SP_UNWIND_A_WHOLE, as RULE_WRAP and RULE_WHOLE. */
		rule |= (__u64)((rs.row.attrs >> SP_UNWIND_A_TYPE_SHIFT) &
				0x1f) << RULE_WRAP_SHIFT;
	} else if (ms.m.flags & SP_MAP_F_FP) {
		/* push rbp; mov rsp, rbp: the caller's rbp at rbp, ra above. */
		rule = rule_make(RULE_K_RBP, 16, SP_UNWIND_RBP_AT_CFA, -16);
	} else {
		rule = rule_make(RULE_K_STOP, 0, 0, 0);
	}
	if (ms.m.flags & SP_MAP_F_LIBC)
		rule |= RULE_LIBC;
	if (ms.m.flags & SP_MAP_F_LIBC_MODEL) {
		struct func_search fs = { .addr = rel, .class = SP_FUNC_OTHER };

		/*
		 * Never a known 0: the verifier then skips the callback,
		 * and its dead body breaks the program's JIT.
		 */
		bpf_loop(func_nrows ? func_nrows : 1, func_search_step, &fs, 0);
		rule |= (__u64)(fs.class & 0xf) << RULE_CLASS_SHIFT;
		if (rel >= lll_private_start && rel < lll_private_end)
			rule |= RULE_LLL;
	}
	return rule;
}

static __always_inline __u32 frame_cache_index(__u64 addr, __u64 mix)
{
	return (__u32)(((addr ^ mix) * 0x9e3779b97f4a7c15ull) >>
		       (64 - FRAME_CACHE_BITS));
}

/*
 * The process's layout, the frame cache's tag; a child forked and not
 * read yet has its parent's (unless it exec'ed since).  0: none known,
 * every frame takes the slow path.
 */
static __always_inline __u64 walk_layout(__u32 tgid)
{
	__u64 *layout = bpf_map_lookup_elem(&proc_layouts, &tgid);
	__u32 *parent;

	if (layout)
		return *layout;
	parent = bpf_map_lookup_elem(&forked_from, &tgid);
	if (!parent || bpf_map_lookup_elem(&exec_seqs, &tgid))
		return 0;
	layout = bpf_map_lookup_elem(&proc_layouts, parent);
	return layout ? *layout : 0;
}

struct unwind_walk {
	/* The frame being stepped. */
	__u64 pc;
	__u64 sp;
	__u64 bp;
	__u64 slot;		/* where pc was read (0: a register) */
	bool bp_known;
	/* Progress. */
	bool left_libc;		/* a frame outside libc was seen */
	bool have_callsite;	/* ...and one outside --skip */
	bool stopped_in_libc;	/* no rule while still in libc */
	__u8 end;		/* enum sp_stack_end */
	__u8 stop_kind;		/* RULE_K_* that stopped the walk, or 0 */
	bool lll;		/* frame 0 in __lll_lock_wait_private */
	bool at_return;		/* frame 0's pc is a return address */
	__u32 depth;		/* frames to keep */
	__u32 n;		/* frames kept */
	__u32 libc_class;	/* the outermost leading libc frame's class */
	__u64 wraps;		/* the runtime lock functions crossed, 5
				   bits each (kind + 1, whole), the
				   outermost in the low bits; the last 12 */
	__u32 tgid;
	__u64 mix;		/* the layout's mix in frame cache tags;
				   0: no layout, no cache */
	__u64 first;		/* the first frame outside libc */
	__u64 callsite;		/* the first outside libc and --skip */
	__u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_walk);
	__uint(max_entries, 1);
} walk_states SEC(".maps");

/* The packed rule at a lookup address, through the frame cache. */
static __always_inline __u64 frame_rule(struct unwind_walk *w, __u64 addr)
{
	__u32 idx = frame_cache_index(addr, w->mix);
	struct frame_cache_entry *e = NULL;
	__u64 rule;

	if (w->mix)
		e = bpf_map_lookup_elem(&frame_cache, &idx);
	if (e) {
		rule = e->rule;
		if (RULE_KIND(rule) != RULE_K_NONE &&
		    e->tag == (addr ^ rule ^ w->mix))
			return rule;
	}
	rule = frame_rule_lookup(w->tgid, addr);
	if (e && RULE_KIND(rule) != RULE_K_STALE) {
		e->rule = rule;
		e->tag = addr ^ rule ^ w->mix;
	}
	return rule;
}

static __always_inline void walk_keep(struct unwind_walk *w)
{
	__u32 n = w->n, zero = 0;
	struct sp_stack *out;

	if (n >= w->depth || n >= SP_STACK_MAX_DEPTH)
		return;
	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (out) {
		out->pcs[n] = w->pc;
		w->n = n + 1;
		w->hash = ((w->hash << 13 | w->hash >> 51) ^ w->pc) *
			  0x9e3779b97f4a7c15ull;
	}
}

/* One frame of the walk: 0 to go on, 1 when the walk ends. */
static __always_inline int walk_frame(struct unwind_walk *w, __u32 i)
{
	__u64 rule, cfa, ra = 0, bp = 0, addr;
	__u32 kind;

	/* A return address is looked up in the call before it. */
	addr = w->pc - ((i || w->at_return) ? 1 : 0);
	rule = frame_rule(w, addr);
	kind = RULE_KIND(rule);
	if (kind == RULE_K_ANON && w->slot) {
		/* Another tool's return probe put its trampoline here. */
		ra = real_return_address(w->slot, w->pc);
		if (ra != w->pc) {
			w->pc = ra;
			rule = frame_rule(w, ra - 1);
			kind = RULE_KIND(rule);
		}
	}

	if (!w->left_libc && kind == RULE_K_STALE && !i && !w->at_return) {
		/*
		 * The process's tables are not loaded yet (it just exec'ed or
		 * forked): the call site stays at the innermost pc, inside
		 * libc as far as anyone knows, and is counted as such.  A
		 * caller of libc's code in no table yet (a new image, a new
		 * library; full mode's return address) is the call site, its
		 * stack stopped there.
		 */
		w->stopped_in_libc = true;
		w->stop_kind = kind;
		return 1;
	}
	if (!w->left_libc && (rule & RULE_LIBC) && kind != RULE_K_ANON) {
		/* Still in the lock implementation: not a frame of the stack. */
		w->libc_class = RULE_CLASS(rule);
		if (!i)
			w->lll = !!(rule & RULE_LLL);
		if (kind != RULE_K_RSP && kind != RULE_K_RBP) {
			w->stopped_in_libc = true;
			w->stop_kind = kind;
			return 1;
		}
	} else {
		if (!w->left_libc) {
			w->left_libc = true;
			w->first = w->pc;
		}
		walk_keep(w);
		/* A runtime's lock function crossed before the call site. */
		if (!w->have_callsite && (rule & RULE_SKIP) &&
		    !(rule & RULE_LIBC))
			w->wraps = (w->wraps << 5) |
				   ((rule >> RULE_WRAP_SHIFT) & 0x1f);
		if (!w->have_callsite && !(rule & RULE_SKIP)) {
			w->have_callsite = true;
			w->callsite = w->pc;
		}
		if (kind == RULE_K_END) {
			w->end = SP_STACK_COMPLETE;
			return 1;
		}
		if (kind != RULE_K_RSP && kind != RULE_K_RBP) {
			w->end = SP_STACK_STOPPED;
			w->stop_kind = kind;
			return 1;
		}
		if (w->have_callsite && w->n >= w->depth) {
			w->end = SP_STACK_TRUNCATED;
			return 1;
		}
	}

	/* Step to the caller. */
	if (kind == RULE_K_RSP) {
		cfa = w->sp + RULE_CFA_OFF(rule);
	} else if (w->bp_known) {
		cfa = w->bp + RULE_CFA_OFF(rule);
	} else {
		w->stop_kind = RULE_K_STOP;
		goto stopped;
	}
	if (cfa <= w->sp ||
	    bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		w->stop_kind = RULE_K_STOP;
		goto stopped;
	}
	if (RULE_RBP(rule) == SP_UNWIND_RBP_AT_CFA) {
		w->bp_known = !bpf_probe_read_user(&bp, sizeof(bp),
				(void *)(cfa + RULE_RBP_OFF(rule)));
		w->bp = bp;
	} else if (RULE_RBP(rule) == SP_UNWIND_RBP_UNDEFINED) {
		w->bp_known = false;
	}
	w->slot = cfa - 8;
	w->sp = cfa;
	w->pc = ra;
	if (!ra) {
		/* A frame-pointer chain ends with a zero return address. */
		if (w->left_libc)
			w->end = SP_STACK_COMPLETE;
		else
			w->stopped_in_libc = true;
		return 1;
	}
	return 0;
stopped:
	if (w->left_libc)
		w->end = SP_STACK_STOPPED;
	else
		w->stopped_in_libc = true;
	return 1;
}

/*
 * The walk's state lives in a per-CPU map, not on the stack: the verifier
 * does not track a map value's contents, so the loop's body is checked
 * for any state in one pass.  On the stack, it followed the state through
 * each iteration: the walk was ~32,000 of futex_enter's 37,000
 * instructions, verified again in each program that walks.
 */
static long unwind_step(__u32 i, void *data)
{
	__u32 zero = 0;
	struct unwind_walk *w = bpf_map_lookup_elem(&walk_states, &zero);

	return w ? walk_frame(w, i) : 1;
}

/*
 * The innermost typed lock function and the outermost whole one, from
 * the crossed kinds (struct unwind_walk.wraps), without a branch.
 */
static __always_inline void wraps_decode(__u64 wraps, struct unwind_result *res)
{
	__u32 inner = 0, whole = 0;

#pragma unroll
	for (int k = 0; k < 12; k++) {
		__u32 e = (__u32)(wraps >> (5 * k)) & 0x1f;
		__u32 t = e & 0xf;
		__u32 typed = -(__u32)((t | -t) >> 31);	/* t != 0 */

		inner = (inner & ~typed) | (t & typed);
	}
#pragma unroll
	for (int k = 11; k >= 0; k--) {
		__u32 e = (__u32)(wraps >> (5 * k)) & 0x1f;
		__u32 is_whole = -((e >> 4) & 1);

		whole = (whole & ~is_whole) | (e & 0xf & is_whole);
	}
	res->wrap_type = (__u16)inner;
	res->whole_type = (__u16)whole;
}

/* Where a walk was cut, for late_walk_keep. */
struct late_cut {
	__u64 id;
	__u64 pc;
	__u64 sp;
	__u64 bp;
	__u32 tgid;
	__u32 n;
	__u32 bp_known;
	__u32 lookup_ret;
};

/*
 * A walk still cut when its wait ends: its raw frames to the loader,
 * under a stack id of its own (the wait is filed under it, and the
 * loader gives that id the whole stack once the table is read: two
 * waits cut at the same frame may have come from different callers).
 * The id to file the wait under: the new one, or cut->id when the ring
 * was full (the stack stays cut, counted).  A global function: verified
 * once, whatever the state of the walk that calls it.
 */
__noinline __u64 late_walk_keep(const struct late_cut *cut,
				const struct sp_stack *kept)
{
	struct sp_late_walk *rec;
	__u64 seq, id;

	if (!cut || !kept)
		return 0;
	id = cut->id;
	rec = bpf_ringbuf_reserve(&late_walks, sizeof(*rec), 0);
	if (!rec) {
		counter_bump(SP_CNT_LATE_LOST);
		return id;
	}
	seq = __sync_fetch_and_add(&late_seq, 1) + 1;
	id = (id ^ seq * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	if (!id)
		id = 1;
	rec->id = id;
	rec->pc = cut->pc;
	rec->sp = cut->sp;
	rec->bp = cut->bp;
	rec->tgid = cut->tgid;
	rec->n = cut->n;
	rec->bp_known = cut->bp_known;
	rec->lookup_ret = cut->lookup_ret;
	rec->pad = 0;
	if (bpf_probe_read_kernel(rec->pcs, sizeof(rec->pcs), kept->pcs))
		rec->n = 0;
	rec->bytes = SP_LATE_STACK_BYTES;
	if (bpf_probe_read_user(rec->stack, SP_LATE_STACK_BYTES,
				(void *)cut->sp)) {
		rec->bytes = SP_LATE_STACK_SHORT;
		if (bpf_probe_read_user(rec->stack, SP_LATE_STACK_SHORT,
					(void *)cut->sp))
			rec->bytes = 0;
	}
	bpf_ringbuf_submit(rec, 0);
	counter_bump(SP_CNT_LATE_KEPT);
	return id;
}

__noinline int unwind_user(__u64 pc, __u64 sp, __u64 bp, __u32 flags,
			    struct unwind_result *res)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	__u32 zero = 0, frames;
	struct sp_stack *out;
	__u32 keep = (flags & UNWIND_KEEP) ? stack_depth : 0;
	struct unwind_walk *w = bpf_map_lookup_elem(&walk_states, &zero);
	__u64 id;

	if (!res || !w)
		return -1;
	*w = (struct unwind_walk){
		.pc = pc, .sp = sp, .bp = bp, .bp_known = true,
		.depth = keep, .tgid = tgid,
		.end = SP_STACK_STOPPED,
		.at_return = !!(flags & UNWIND_AT_RETURN),
		.mix = walk_layout(tgid) * 0xc2b2ae3d27d4eb4full,
	};
	frames = SP_UNWIND_MAX_FRAMES + (stack_depth ? stack_depth : 1) +
		 (skip_enabled ? SP_SKIP_MAX_FRAMES : 0);
	bpf_loop(frames, unwind_step, NULL, 0);

	res->libc_class = w->libc_class;
	res->lll = w->lll;
	res->wrap_type = 0;
	res->whole_type = 0;
	wraps_decode(w->wraps, res);
	res->left_libc = w->left_libc;
	res->stack_id = 0;
	res->cut = 0;
	if (!w->left_libc) {
		/* The innermost known pc: inside libc. */
		res->callsite = w->pc;
		counter_bump(flags & UNWIND_RELEASE ? SP_CNT_RELEASE_STOPPED :
			     w->stopped_in_libc ? SP_CNT_UNWIND_STOPPED
						: SP_CNT_UNWIND_DEEP);
		/* A wait's walk stopped by a table not read yet stopped
		   early too (the stale walks are of those); a release's
		   stop is its own counter's only (no walk again cancels
		   it, and it is no wait left in libc). */
		if (w->stop_kind == RULE_K_STALE && !(flags & UNWIND_RELEASE)) {
			counter_bump(SP_CNT_STACK_STOPPED);
			counter_bump(SP_CNT_STACK_STALE);
			res->cut = w->stopped_in_libc ? UNWIND_CUT_LIBC : 0;
		}
		return 0;
	}
	res->callsite = w->have_callsite ? w->callsite : w->first;
	if (!w->have_callsite && w->stop_kind == RULE_K_STALE && skip_enabled)
		res->cut = UNWIND_CUT_CALLSITE;	/* the --skip walk was cut */
	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (!keep || !w->n || !out)
		return 0;
	if (w->end == SP_STACK_STOPPED) {
		counter_bump(SP_CNT_STACK_STOPPED);
		if (w->stop_kind == RULE_K_ANON) {
			counter_bump(SP_CNT_STACK_ANON);
		} else if (w->stop_kind == RULE_K_STALE) {
			counter_bump(SP_CNT_STACK_STALE);
			res->cut = UNWIND_CUT_STACK;
		}
	}
	out->n = w->n;
	out->end = w->end;
	id = (w->hash ^ (__u64)w->n << 56 ^ (__u64)w->end << 48) *
	     0xff51afd7ed558ccdull;
	id ^= id >> 32;
	if (!id)
		id = 1;
	if (res->cut == UNWIND_CUT_STACK && (flags & UNWIND_LATE) &&
	    late_walks_on) {
		struct late_cut cut = {
			.id = id, .pc = w->pc, .sp = w->sp, .bp = w->bp,
			.tgid = w->tgid, .n = w->n, .bp_known = w->bp_known,
			/* Frame 0 is looked up at pc unless a return
			   probe's: any later frame at pc - 1. */
			.lookup_ret = w->at_return || w->pc != pc,
		};

		id = late_walk_keep(&cut, out) ?: id;
	}
	if (!bpf_map_lookup_elem(&stacks, &id)) {
		long err = bpf_map_update_elem(&stacks, &id, out, BPF_NOEXIST);

		if (err && err != -EEXIST) {	/* another CPU's first */
			counter_bump(SP_CNT_STACK_LOST);
		}
	}
	res->stack_id = id;
	return 0;
}

__noinline int unwind_rewalked(const struct unwind_result *first,
				const struct unwind_result *again)
{
	const struct unwind_result *cancel;

	if (!first || !again)
		return -1;
	cancel = again->cut ? again : first;
	switch (cancel->cut) {
	case UNWIND_CUT_LIBC:
		counter_add(SP_CNT_UNWIND_STOPPED, -1ull);
		counter_add(SP_CNT_STACK_STOPPED, -1ull);
		counter_add(SP_CNT_STACK_STALE, -1ull);
		break;
	case UNWIND_CUT_STACK:
		counter_add(SP_CNT_STACK_STOPPED, -1ull);
		counter_add(SP_CNT_STACK_STALE, -1ull);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * The exec'ing thread keeps the process's tgid.  Tell the loader (it
 * re-reads the maps and builds the new image's tables) and stop using
 * the old tables at once: until the loader is done, walks stop (counted)
 * rather than name the new image's code with the old one's rules.
 */
SEC("tracepoint/sched/sched_process_exec")
int target_exec(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(pid_tgid >> 32);

	if (!is_target(pid_tgid))
		return 0;
	process_tables_stale(tgid);
	module_event(SP_MODULE_EVENT_EXEC, tgid, 0);
	return 0;
}
