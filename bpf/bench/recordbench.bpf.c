// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's own: a producer of synthetic waits, through the same
 * record_wait() and ring buffer as the real programs, run from user
 * space (BPF_PROG_TEST_RUN) at a chosen rate, so the writer's sustained
 * rate is measured without a target's own limits.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "record.bpf.h"

/* n is 64-bit: bpf_loop() reads its count as a whole register. */
struct produce_args {
	__u64 n;		/* waits to emit in this run */
	__u32 tid;
	__u32 pad;
};

static long produce_one(__u32 i, void *data)
{
	struct produce_args *a = data;
	__u64 now = bpf_ktime_get_ns();
	struct sp_key key = {
		.object = 0x1000 + (i & 15) * 64,
		.callsite = 0x400000 + (i & 7) * 16,
		.tid = a->tid + (i & 3),
		.type = SP_TYPE_MUTEX,
	};

	record_wait(&key, now - 100, now, 100, SP_EVENT_COUNTED);
	return 0;
}

SEC("syscall")
int produce(struct produce_args *args)
{
	struct produce_args a = *args;

	bpf_loop(a.n, produce_one, &a, 0);
	return 0;
}
