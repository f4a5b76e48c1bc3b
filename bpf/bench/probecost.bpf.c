// SPDX-License-Identifier: GPL-2.0
/* Empty probes for make bench: what a uprobe hit costs, and nothing else. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int probe_hit(void *ctx)
{
	return 0;
}
