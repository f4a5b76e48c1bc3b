// SPDX-License-Identifier: GPL-2.0
/* The verifier's work per loaded program (see progload.h). */
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "progload.h"

double progload__clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void progload__log(struct bpf_object *obj, double load_ms,
		   struct progload_totals *t)
{
	struct progload_totals sum = { 0, 0 };
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		sum.programs++;
		sum.verified_insns += info.verified_insns;
		pr_info("BPF program %s: %u instructions verified",
			 bpf_program__name(prog), info.verified_insns);
	}
	pr_info("BPF load: %u programs, %llu instructions verified, %.0f ms",
		sum.programs, (unsigned long long)sum.verified_insns, load_ms);
	if (t)
		*t = sum;
}
