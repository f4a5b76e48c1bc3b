// SPDX-License-Identifier: GPL-2.0
/*
 * --record: the ring buffer every wait goes through to the loader's
 * writer, the per-thread count of waits it had no room for, and the
 * switch.  The programs that end waits (full.bpf.c, contended.bpf.c) call
 * record_wait() from record.bpf.h; this file only defines what it uses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "record.bpf.h"

const volatile __u32 record_on = 0;
const volatile __u64 record_wake_bytes = 0;
volatile __u32 record_lost_pending = 0;

record_ring_t record_ring SEC(".maps");
record_lost_t record_lost SEC(".maps");
