// SPDX-License-Identifier: GPL-2.0
/*
 * The frame cache's layouts (see framecache.h).  The kernel removes a
 * process's layout when it execs; the loader writes it after reading the
 * maps.  The write is checked against the exec sequence afterwards, so
 * an exec that raced with the read never leaves an old layout in place
 * for more than the few microseconds between the two.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "framecache.h"

int framecache__publish(const struct bpf_map *layouts,
			const struct bpf_map *exec_seqs, pid_t pid,
			uint32_t exec_seq, uint64_t layout)
{
	uint32_t key = (uint32_t)pid, seq = 0;
	int fd = bpf_map__fd(layouts);

	if (!layout)
		return -ENOENT;
	if (bpf_map_update_elem(fd, &key, &layout, BPF_ANY))
		return -errno;
	bpf_map_lookup_elem(bpf_map__fd(exec_seqs), &key, &seq);
	if (seq != exec_seq) {
		bpf_map_delete_elem(fd, &key);
		return -ESTALE;
	}
	return 0;
}
