// SPDX-License-Identifier: GPL-2.0
/*
 * The readers of what the programs count beside the waits: the per-CPU
 * counters map (drops, stack walks, process events) and the kernel's own
 * figures for each program (run time, recursion misses), and what the
 * unwind tables cost.
 */
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

uint64_t probes__counter(struct probes *p, __u32 which)
{
	int fd = bpf_map__fd(p->skel->maps.counters);
	uint64_t total = 0;

	if (bpf_map_lookup_elem(fd, &which, p->counter_values))
		return 0;
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		total += p->counter_values[cpu];
	return total;
}

/*
 * Runs the kernel skipped because another BPF program was running on the
 * same CPU (a preempted tracepoint program holds the CPU's slot): each is
 * a wait or a wake not seen.  sched: the scheduler programs' (--states),
 * which fire for every task on the machine, so nearly all of theirs are
 * other processes' events; a target's shows as a gap in its thread's
 * events (probes__sched_missed).
 */
static uint64_t probes__recursion_misses(struct probes *p, bool sched)
{
	struct bpf_program *prog;
	uint64_t total = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (probes__is_sched_prog(p, prog) != sched)
			continue;
		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			total += info.recursion_misses;
	}
	return total;
}

uint64_t probes__window(const struct probes *p)
{
	return p->window;
}

uint64_t probes__live_ns(const struct probes *p)
{
	return p->live_ns;
}

void probes__going_live(struct probes *p)
{
	if (!p->live_ns)
		p->live_ns = clock__monotonic_ns();
}

void probes__bpf_time(struct probes *p, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_program *prog;

	*run_ns = *runs = 0;
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
			*run_ns += info.run_time_ns;
			*runs += info.run_cnt;
		}
	}
}

void probes__drops(struct probes *p, struct probes_drops *out)
{
	*out = (struct probes_drops){ 0 };
	if (!p)
		return;
	/* The stats map's rows, or --states' threads map's. */
	out->map_full = probes__counter(p, SP_CNT_DROPPED_STATS) +
			probes__counter(p, SP_CNT_DROPPED_THREADS);
	out->no_storage = probes__counter(p, SP_CNT_DROPPED_INFLIGHT);
	out->nested = probes__counter(p, SP_CNT_DROPPED_NESTED);
	out->skipped = probes__recursion_misses(p, false);
	out->ring = probes__counter(p, SP_CNT_DROPPED_RING);
	out->blame_full = probes__counter(p, SP_CNT_BLAME_FULL);
	out->caused_full = probes__counter(p, SP_CNT_CAUSED_FULL);
}

uint64_t probes__dropped(struct probes *p)
{
	struct probes_drops d;

	probes__drops(p, &d);
	return d.map_full + d.no_storage + d.nested + d.skipped + d.ring;
}

uint64_t probes__sched_missed(struct probes *p)
{
	return p->states ? probes__counter(p, SP_CNT_SCHED_GAPS) : 0;
}

uint64_t probes__ring_dropped(struct probes *p)
{
	return probes__counter(p, SP_CNT_DROPPED_RING);
}

int probes__record_ring_fd(const struct probes *p)
{
	return p->recording ? bpf_map__fd(p->skel->maps.record_ring) : -1;
}

int probes__record_lost_fd(const struct probes *p)
{
	return p->recording ? bpf_map__fd(p->skel->maps.record_lost) : -1;
}

uint64_t probes__abandoned(struct probes *p)
{
	if (!p)
		return 0;
	return probes__counter(p, SP_CNT_ABANDONED);
}

uint64_t probes__unwind_stopped(struct probes *p)
{
	if (!p)
		return 0;
	return probes__counter(p, SP_CNT_UNWIND_STOPPED) +
	       probes__counter(p, SP_CNT_UNWIND_DEEP);
}

void probes__wait_timing(struct probes *p, uint64_t *bpf_ns, uint64_t *waits)
{
	*bpf_ns = probes__counter(p, SP_CNT_WAIT_BPF_NS);
	*waits = probes__counter(p, SP_CNT_WAITS);
}

void probes__stack_counts(struct probes *p, struct probes_stack_counts *c)
{
	c->stopped = probes__counter(p, SP_CNT_STACK_STOPPED);
	c->anon = probes__counter(p, SP_CNT_STACK_ANON);
	c->stale = probes__counter(p, SP_CNT_STACK_STALE);
	c->lost = probes__counter(p, SP_CNT_STACK_LOST);
	c->misses = probes__counter(p, SP_CNT_FRAME_MISS);
	c->release_stopped = probes__counter(p, SP_CNT_RELEASE_STOPPED);
}

uint64_t probes__dropped_processes(struct probes *p)
{
	return probes__counter(p, SP_CNT_DROPPED_PROCS);
}

uint64_t probes__lost_process_events(struct probes *p)
{
	return probes__counter(p, SP_CNT_LOST_PROC_EVENTS);
}

bool probes__unwinds(const struct probes *p)
{
	return p->unwinder != NULL;
}

void probes__unwind_stats(const struct probes *p, struct unwinder_stats *st)
{
	const struct bpf_map *cache = p->skel->maps.frame_cache;

	if (p->unwinder)
		unwinder__stats(p->unwinder, st);
	else
		*st = (struct unwinder_stats){ 0 };
	if (p->unwinder)
		st->cache_bytes = (size_t)bpf_map__max_entries(cache) *
				  bpf_map__value_size(cache);
}

int probes__lock_order_fd(const struct probes *p)
{
	return p && p->lock_order ? bpf_map__fd(p->skel->maps.lock_order) : -1;
}

void probes__lock_order_drops(struct probes *p, uint64_t *pairs,
			      uint64_t *held)
{
	*pairs = p ? probes__counter(p, SP_CNT_DROPPED_ORDER) : 0;
	*held = p ? probes__counter(p, SP_CNT_HELD_OVERFLOW) : 0;
}
