// SPDX-License-Identifier: GPL-2.0
/* --off-cpu's loader side: bpf/measure/offcpu.bpf.c says what it measures. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hostcheck.h"
#include "log.h"
#include "offcalls.h"
#include "offcpu.h"
#include "syncprof.h"
#include "syncprof.skel.h"

/* Threads asleep at once, of every followed process. */
#define OFFCPU_MAX_OPEN	16384

struct offcpu {
	struct syncprof_bpf *skel;	/* not owned */
	struct bpf_link *link;
};

int offcpu__configure(struct syncprof_bpf *skel, bool on, bool full)
{
	char why[512];
	int err;

	bpf_program__set_autoload(skel->progs.offcpu_switch, on);
	if (!on)
		return bpf_map__set_max_entries(skel->maps.offcpu_open, 1);
	err = hostcheck__tracepoints("/sys", why, sizeof(why));
	if (err) {
		pr_err("--off-cpu needs the scheduler's tracepoints: %s", why);
		return err;
	}
	skel->rodata->offcpu_lock_source = full ? SP_LOCKS_FULL
						: SP_LOCKS_CONTENDED;
	return bpf_map__set_max_entries(skel->maps.offcpu_open,
					OFFCPU_MAX_OPEN);
}

int offcpu__new(struct syncprof_bpf *skel, bool on, struct offcpu **out)
{
	int fd = bpf_map__fd(skel->maps.offcpu_calls);
	struct offcpu *o;

	*out = NULL;
	if (!on)
		return 0;
	for (__u32 nr = 0; nr < SP_OFFCPU_CALLS_MAX; nr++) {
		__u8 value = offcalls__value(nr);

		if (value && bpf_map_update_elem(fd, &nr, &value, BPF_ANY)) {
			int err = -errno;

			pr_err("cannot fill --off-cpu's system call table: %s",
			       strerror(-err));
			return err;
		}
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->skel = skel;
	*out = o;
	return 0;
}

int offcpu__attach(struct offcpu *o)
{
	int err;

	if (!o || o->link)
		return 0;
	o->link = bpf_program__attach_tracepoint(o->skel->progs.offcpu_switch,
						 "sched", "sched_switch");
	if (o->link)
		return 0;
	err = -errno;
	pr_err("cannot attach to the tracepoint sched:sched_switch for "
	       "--off-cpu: %s", strerror(-err));
	return err;
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	bpf_link__destroy(o->link);
	free(o);
}
