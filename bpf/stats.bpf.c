// SPDX-License-Identifier: GPL-2.0
/*
 * What every capability shares, defined once: the target filter, the
 * stats map with its report windows and histograms, the drop counters and
 * the library-change events (their types are in stats.bpf.h).  bpftool links
 * the per-capability objects into one, so the loader has one skeleton and
 * each map exists once.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "syncprof.h"
#include "stats.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;
const volatile __u32 multi_target = 0;
const volatile __u32 wait_timing = 0;
volatile __u32 duty_epoch = 0;
volatile __u32 duty_open = 1;
/* 0: rows without their thread (stats_add in stats.bpf.h). */
const volatile __u32 rows_by_thread = 1;
volatile __u64 window = 0;
/* --tid, --type, --object, --min-wait (see stats.bpf.h). */
const volatile __u32 filter_tids = 0;
const volatile __u32 filter_types = 0;
const volatile __u64 filter_object_start = 0;
const volatile __u64 filter_object_end = 0;
const volatile __u64 min_wait_ns = 0;

stats_map_t stats SEC(".maps");		/* max_entries set by the loader */
counters_map_t counters SEC(".maps");
hists_map_t hists SEC(".maps");		/* max_entries set by the loader */
tid_filter_map_t tid_filter SEC(".maps");	/* max_entries: the --tid count */
/* One event per change of the target's libraries (dlopen, dlclose). */
module_events_map_t module_events SEC(".maps");
pid_set_map_t unread_procs SEC(".maps");
pid_set_map_t unloading SEC(".maps");
targets_map_t targets SEC(".maps");	/* max_entries set by the loader */
