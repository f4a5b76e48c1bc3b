// SPDX-License-Identifier: GPL-2.0
/*
 * --lock-order's maps and setting (see lockorder.bpf.h); the programs
 * that use them are full mode's (full.bpf.c, hold.bpf.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"
#include "lockorder.bpf.h"

const volatile __u32 lockorder_enabled = 0;

heldset_map_t heldsets SEC(".maps");
order_map_t lock_order SEC(".maps");
