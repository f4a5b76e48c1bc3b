// SPDX-License-Identifier: GPL-2.0
/*
 * What one uprobe hit costs on this machine, by the kind of instruction
 * probed: one the kernel emulates (push), one it single-steps (mov), a
 * 5-byte nop (which recent kernels turn into a call), and the return
 * probe on top of an entry probe.  Each figure is the median, over
 * rounds, of (time per call probed) - (time per call unprobed).
 *
 *   probecost [--json]
 */
#include <bpf/libbpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "elfimage.h"
#include "probecost.skel.h"

#define CALLS 4000
#define ROUNDS 7

void pc_emulated(void);
void pc_stepped(void);
void pc_nop5(void);

__asm__(".text\n"
	".globl pc_emulated\n.type pc_emulated, @function\n"
	"pc_emulated:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size pc_emulated, .-pc_emulated\n"
	".globl pc_stepped\n.type pc_stepped, @function\n"
	"pc_stepped:\n\tmov %rdi, %rax\n\tret\n"
	".size pc_stepped, .-pc_stepped\n"
	".globl pc_nop5\n.type pc_nop5, @function\n"
	"pc_nop5:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n"
	".size pc_nop5, .-pc_nop5\n");

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Median ns per call of fn over ROUNDS rounds of CALLS. */
static uint64_t time_calls(void (*fn)(void))
{
	uint64_t rounds[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			fn();
		rounds[r] = (now_ns() - t0) / CALLS;
	}
	return calibrate__median(rounds, ROUNDS);
}

struct probe_case {
	const char *name;
	const char *func;
	void (*fn)(void);
	bool retprobe;
};

static int attach(struct probecost_bpf *skel, const char *func, bool retprobe,
		  struct bpf_link **links)
{
	struct elfimage *image;
	struct elfimage_func f;
	int err = elfimage__open("/proc/self/exe", &image);

	if (err)
		return err;
	err = elfimage__find_func(image, func, &f);
	elfimage__close(image);
	if (err)
		return err;
	for (int r = 0; r <= (int)retprobe; r++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = r);

		links[r] = bpf_program__attach_uprobe_opts(skel->progs.probe_hit,
							   getpid(), "/proc/self/exe",
							   f.file_offset, &opts);
		if (!links[r])
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct probe_case cases[] = {
		{ "uprobe, emulated insn (push)", "pc_emulated", pc_emulated, false },
		{ "uprobe, single-stepped insn (mov)", "pc_stepped", pc_stepped, false },
		{ "uprobe, 5-byte nop", "pc_nop5", pc_nop5, false },
		{ "uprobe + uretprobe (push)", "pc_emulated", pc_emulated, true },
	};
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	struct probecost_bpf *skel = probecost_bpf__open_and_load();
	uint64_t cost[4];

	if (!skel) {
		fprintf(stderr, "probecost: cannot load the BPF program\n");
		return 1;
	}
	for (int c = 0; c < 4; c++) {
		struct bpf_link *links[2] = { NULL, NULL };
		uint64_t base = time_calls(cases[c].fn);

		if (attach(skel, cases[c].func, cases[c].retprobe, links)) {
			fprintf(stderr, "probecost: cannot attach to %s\n", cases[c].func);
			return 1;
		}
		uint64_t probed = time_calls(cases[c].fn);
		cost[c] = probed > base ? probed - base : 0;
		bpf_link__destroy(links[0]);
		bpf_link__destroy(links[1]);
	}
	if (json) {
		printf("{\"bench\": \"probecost\", \"emulated_ns\": %lu, \"stepped_ns\": %lu, "
		       "\"nop5_ns\": %lu, \"entry_and_return_ns\": %lu, \"return_ns\": %lu}\n",
		       (unsigned long)cost[0], (unsigned long)cost[1],
		       (unsigned long)cost[2], (unsigned long)cost[3],
		       (unsigned long)(cost[3] > cost[0] ? cost[3] - cost[0] : 0));
	} else {
		printf("uprobe cost per hit on this machine (median of %d rounds of %d):\n",
		       ROUNDS, CALLS);
		for (int c = 0; c < 4; c++)
			printf("  %-36s %8.2f us\n", cases[c].name, cost[c] * 1e-3);
		printf("  %-36s %8.2f us\n", "uretprobe alone (difference)",
		       (cost[3] > cost[0] ? cost[3] - cost[0] : 0) * 1e-3);
	}
	probecost_bpf__destroy(skel);
	return 0;
}
