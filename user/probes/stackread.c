// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks of the rows read, and the kernel's stacks table kept to
 * what is new.
 *
 * The kernel interns each kept stack in the stacks map under an id that
 * is a hash of its frames (bpf/unwind/unwind.bpf.c); a wait's row keys
 * the id.  Interned and never removed, the table filled on a host that
 * starts distinct programs (each exec'd run has its own addresses, so
 * its own stacks) and from then on every new stack was lost.
 *
 * Chosen: each read drains the whole table (one lookup-and-delete batch
 * per DRAIN_BATCH stacks) into the loader.  A drained stack the loader
 * has resolved already (the session's table) is dropped; any other waits
 * here, raw, until a row names it: then it is translated with the row's
 * process and moves to the session's table.  The kernel's table holds
 * the stacks made since the last read; a stack still in use is made
 * again by its next wait (one map insert a read).  Safe because an id is
 * its frames: a stack made again after its drain has the id and frames
 * it had, so the loader never holds two stacks under one id; and every
 * reader of stacks goes through the loader's tables (no row's stack is
 * looked up in the kernel after a read).
 *
 * What no row has named stays raw for the run, unless the session asks
 * otherwise: --serve reads --blame's rows (whose releases' stacks are
 * walked at every wake of the host under --all) only when a mutex
 * profile is asked, so its raw stacks go in generations of
 * unnamed_stacks_s seconds (two tables, the older one freed whole:
 * no per-stack age), counted; a row that names one later has no frames.
 *
 * Rejected: deleting only the ids the rows read named, and only after
 * they were copied: the rows of --blame (a release's stack), --lock-order
 * and the holds are read at reports and scrapes, not at every read, or
 * never (--serve reads no findings), and their stacks stayed.  Rejected:
 * the kernel's own stack map (bpf_get_stackid): frame pointers only, and
 * its ids are slots that a deleted stack's successor takes over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

/* Stacks per lookup-and-delete call. */
#define DRAIN_BATCH 256

/* One drained stack: to the raw table, unless held already. */
static int probes__keep_raw(struct probes *p, const struct stacktab *tab,
			    uint64_t id, const struct sp_stack *stack)
{
	const uint64_t *frames;
	enum stacktab_end end;
	uint32_t n;

	p->stacks_drained++;
	if (!id || !stacktab__get(tab, id, &frames, &n, &end) ||
	    !stacktab__get(p->raw_stacks, id, &frames, &n, &end) ||
	    !stacktab__get(p->raw_old, id, &frames, &n, &end))
		return 0;
	n = stack->n < p->stack_depth ? stack->n : p->stack_depth;
	return stacktab__add(p->raw_stacks, id, (const uint64_t *)stack->pcs,
			     n, (enum stacktab_end)stack->end);
}

/* Without batches (Linux < 5.6): the first key, taken, until none. */
static int probes__drain_each(struct probes *p, int fd,
			      const struct stacktab *tab)
{
	struct sp_stack *stack = p->stack_buf;
	uint64_t id;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, NULL, &id)) {
		if (bpf_map_lookup_elem(fd, &id, stack)) {
			bpf_map_delete_elem(fd, &id);
			continue;
		}
		if (bpf_map_delete_elem(fd, &id))
			break;	/* left for the next read */
		err = probes__keep_raw(p, tab, id, stack);
	}
	return err;
}

/*
 * At the first drain raw_keep_ns after the generation began, the
 * generation before is let go and this one becomes it: a stack no row
 * named is held between one and two generations (by time: reads come
 * at scrapes too, and further apart when the maps are quiet).
 */
static int probes__age_raw(struct probes *p)
{
	uint64_t now = clock__monotonic_ns();
	struct stacktab *fresh;
	int err;

	if (!p->raw_keep_ns)
		return 0;
	if (!p->raw_since_ns)
		p->raw_since_ns = now;
	if (now - p->raw_since_ns < p->raw_keep_ns)
		return 0;
	err = stacktab__new(&fresh);
	if (err)
		return err;
	p->raw_let_go += stacktab__count(p->raw_old);
	stacktab__free(p->raw_old);
	p->raw_old = p->raw_stacks;
	p->raw_stacks = fresh;
	p->raw_since_ns = now;
	return 0;
}

/* The kernel's stacks table, emptied into the raw table. */
static int probes__drain_stacks(struct probes *p, const struct stacktab *tab)
{
	int fd = bpf_map__fd(p->skel->maps.stacks);
	size_t vsize = SP_STACK_SIZE(p->stack_depth);
	uint64_t keys[DRAIN_BATCH], batch_out = 0;
	char *values = malloc(DRAIN_BATCH * vsize);
	void *in = NULL;
	int err = 0, ret;
	__u32 n;

	if (!values || (err = probes__age_raw(p))) {
		free(values);
		return values ? err : -ENOMEM;
	}
	do {
		n = DRAIN_BATCH;
		ret = bpf_map_lookup_and_delete_batch(fd, in, &batch_out, keys,
						      values, &n, NULL);
		if (ret && errno != ENOENT) {
			/* EINVAL, ENOTSUPP: no batches here.  Else one
			   stack at a time, from where the batches stopped. */
			err = probes__drain_each(p, fd, tab);
			break;
		}
		for (__u32 i = 0; !err && i < n; i++) {
			const void *v = values + i * vsize;

			err = probes__keep_raw(p, tab, keys[i], v);
		}
		in = &batch_out;
	} while (!ret && !err);
	free(values);
	return err;
}

int probes__raw_stack(struct probes *p, uint64_t id, const uint64_t **frames,
		      uint32_t *n, enum stacktab_end *end)
{
	struct sp_stack *stack = p->stack_buf;

	if (!stacktab__get(p->raw_stacks, id, frames, n, end) ||
	    !stacktab__get(p->raw_old, id, frames, n, end))
		return 0;
	/* Made since the last drain: still the kernel's. */
	if (!id || !p->stack_depth ||
	    bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stacks), &id, stack))
		return -ENOENT;
	*frames = (const uint64_t *)stack->pcs;
	*n = stack->n < p->stack_depth ? stack->n : p->stack_depth;
	*end = (enum stacktab_end)stack->end;
	return 0;
}

int probes__read_stacks(struct probes *p, const struct snapshot *snap,
			struct stacktab *tab)
{
	const struct snapshot_entry *e = snapshot__entries(snap);
	int err = 0;

	if (!p->stack_depth)
		return 0;
	err = probes__drain_stacks(p, tab);
	for (size_t i = 0; !err && i < snapshot__count(snap); i++) {
		const uint64_t *frames;
		enum stacktab_end end;
		uint64_t id = e[i].key.stack_id, pcs[SP_STACK_MAX_DEPTH];
		uint32_t n;

		if (!id || !stacktab__get(tab, id, &frames, &n, &end)) {
			/* A late walk's full stack came first (latewalk.c). */
			stacktab__remove(p->raw_stacks, id);
			stacktab__remove(p->raw_old, id);
			continue;
		}
		if (probes__raw_stack(p, id, &frames, &n, &end))
			continue;	/* lost (a map full), or let go */
		for (uint32_t k = 0; k < n; k++)
			pcs[k] = p->translate ?
				 p->translate(p->translate_ctx,
					      (pid_t)e[i].key.pid, frames[k]) :
				 frames[k];
		err = stacktab__add(tab, id, pcs, n, end);
		if (!err && stacktab__remove(p->raw_stacks, id))
			stacktab__remove(p->raw_old, id);
	}
	return err;
}

size_t probes__stacks_pending(const struct probes *p, uint64_t *let_go)
{
	*let_go = p->raw_let_go;
	return p->raw_stacks ? stacktab__count(p->raw_stacks) +
			       stacktab__count(p->raw_old) : 0;
}

size_t probes__rows_read(const struct probes *p)
{
	return p->rows_read;
}

size_t probes__rows_most(const struct probes *p)
{
	size_t most = p->rows_read;

	if (p->charge_rows_read > most)
		most = p->charge_rows_read;
	return p->stacks_drained > most ? p->stacks_drained : most;
}

size_t probes__stacks_drained(const struct probes *p)
{
	return p->stacks_drained;
}
