// SPDX-License-Identifier: GPL-2.0
/*
 * --why's maps (see why.bpf.h), and --states' threads, which both read:
 * defined here, among the files linked first, because contended.bpf.c
 * reads it before states.bpf.c (linked last) updates it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "blame.bpf.h"
#include "why.bpf.h"

const volatile __u32 why_enabled = 0;
const struct sp_why_last why_last_zero = {};

threads_map_t threads SEC(".maps");
why_waits_map_t why_waits SEC(".maps");
why_last_map_t why_last SEC(".maps");
why_map_t why SEC(".maps");
