// SPDX-License-Identifier: GPL-2.0
/*
 * Late walks from the kernel (user/unwind/latewalk.h): the ring the
 * walks still cut when their waits ended come in, read when the tables
 * change and before every report, and finished with the tables the
 * unwinder has read since.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latewalk.h"
#include "log.h"
#include "probesimpl.h"
#include "syncprof.skel.h"
#include "unwinder.h"

/* 8 MiB: ~1,600 late walks of 5 KiB waiting to be read. */
#define LATE_RING_BYTES	(8u << 20)

int probes__configure_late(struct probes *p, unsigned int depth)
{
	p->skel->rodata->late_walks_on = depth > 0;
	return bpf_map__set_max_entries(p->skel->maps.late_walks,
					depth ? LATE_RING_BYTES
					      : (__u32)sysconf(_SC_PAGESIZE));
}

static int probes__on_late(void *ctx, void *data, size_t size)
{
	struct probes *p = ctx;

	return latewalks__add(p->late, data, size) == -ENOMEM ? -ENOMEM : 0;
}

int probes__open_late(struct probes *p)
{
	int err;

	if (!p->skel->rodata->late_walks_on || !p->unwinder)
		return 0;
	err = latewalks__new(p->stack_depth, &p->late);
	if (err)
		return err;
	p->late_ring = ring_buffer__new(bpf_map__fd(p->skel->maps.late_walks),
					probes__on_late, p, NULL);
	return p->late_ring ? 0 : -errno;
}

void probes__close_late(struct probes *p)
{
	ring_buffer__free(p->late_ring);
	latewalks__free(p->late);
}

void probes__drain_late(void *ctx)
{
	struct probes *p = ctx;

	if (p->late_ring)
		ring_buffer__consume(p->late_ring);
}

static int probes__late_rule(void *ctx, pid_t pid, uint64_t addr,
			     struct sp_unwind_row *row, uint32_t *map_flags)
{
	return unwinder__rule_at(ctx, pid, addr, row, map_flags);
}

int probes__finish_late(struct probes *p, struct stacktab *tab, bool final)
{
	int err;

	if (!p || !p->late_ring)
		return 0;
	err = ring_buffer__consume(p->late_ring);
	if (err < 0)
		return err;
	if (!latewalks__pending(p->late))
		return 0;
	return latewalks__finish(p->late, probes__late_rule, p->unwinder,
				 p->translate, p->translate_ctx, tab, final);
}

void probes__late_stats(struct probes *p, struct probes_late_stats *st)
{
	struct latewalk_stats lw;

	latewalks__stats(p ? p->late : NULL, &lw);
	st->finished = lw.finished;
	st->cut = lw.cut + (p ? probes__counter(p, SP_CNT_LATE_LOST) : 0);
	st->pending = latewalks__pending(p ? p->late : NULL);
}
