/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame cache's per-process tag (bpf/unwind/unwind.bpf.h): each process's
 * layout, published to the kernel once its mapping array is in.
 */
#ifndef SYNCPROF_FRAMECACHE_H
#define SYNCPROF_FRAMECACHE_H

#include <stdint.h>
#include <sys/types.h>

struct bpf_map;

/*
 * Sets pid's layout in the layouts map, for the image exec_seq (read
 * from the exec_seqs map before the maps were read).  An exec between
 * that read and this write takes the layout back out: the new image's
 * walks must not use the old one's cache entries.  0, or -errno.
 */
int framecache__publish(const struct bpf_map *layouts,
			const struct bpf_map *exec_seqs, pid_t pid,
			uint32_t exec_seq, uint64_t layout);

#endif
