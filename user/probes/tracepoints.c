// SPDX-License-Identifier: GPL-2.0
/*
 * The modes' tracepoints: contended mode's futex syscalls (and --blame's
 * sched_waking), --states' scheduler events, and the exec that replaces
 * a target's modules.
 */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "hostcheck.h"
#include "log.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

struct bpf_program *probes__tracepoint_prog(struct probes *p, size_t i)
{
	/* One exit program serves both futex calls' exits. */
	struct bpf_program *progs[N_TRACEPOINTS] = {
		p->skel->progs.futex_enter, p->skel->progs.futex_exit,
		p->skel->progs.futex2_wait_enter, p->skel->progs.futex_exit,
		p->skel->progs.futex2_wake_enter,
	};

	return progs[i];
}

/* In sched_tracepoint_table's order. */
struct bpf_program *probes__sched_prog(struct probes *p, size_t i)
{
	struct bpf_program *progs[N_SCHED_TRACEPOINTS] = {
		p->skel->progs.states_switch, p->skel->progs.states_wakeup,
		p->skel->progs.states_wakeup_new, p->skel->progs.states_newtask,
		p->skel->progs.states_exit,
	};

	return progs[i];
}

bool probes__is_sched_prog(struct probes *p,
			   const struct bpf_program *prog)
{
	for (size_t i = 0; i < N_SCHED_TRACEPOINTS; i++)
		if (probes__sched_prog(p, i) == prog)
			return true;
	return prog == p->skel->progs.offcpu_switch;
}

int probes__attach_tracepoints(struct probes *p)
{
	if (bpf_program__autoload(p->skel->progs.release_wakes)) {
		p->release_link = bpf_program__attach_raw_tracepoint(
			p->skel->progs.release_wakes, "sched_waking");
		if (!p->release_link) {
			int err = -errno;

			pr_err("cannot attach to the raw tracepoint "
			       "sched_waking (--blame): %s", strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < N_TRACEPOINTS; i++) {
		struct bpf_program *prog = probes__tracepoint_prog(p, i);
		const char *name = tracepoint_table[i].name;

		if (!bpf_program__autoload(prog) ||
		    !hostcheck__syscall_tracepoint("/sys", name))
			continue;
		p->tracepoint_links[i] = bpf_program__attach_tracepoint(prog,
							"syscalls", name);
		if (!p->tracepoint_links[i]) {
			int err = -errno;

			if (!tracepoint_table[i].required)
				continue;
			pr_err("cannot attach to the tracepoint syscalls:%s: %s",
			       name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* An exec replaces every module: the tables follow (unwind.bpf.c). */
int probes__attach_exec(struct probes *p)
{
	if (!bpf_program__autoload(p->skel->progs.target_exec))
		return 0;
	p->exec_link = bpf_program__attach_tracepoint(p->skel->progs.target_exec,
						      "sched",
						      "sched_process_exec");
	if (!p->exec_link) {
		int err = -errno;

		pr_warn("cannot attach to sched:sched_process_exec (%s); "
			"after an exec, stacks stop at the new image",
			strerror(-err));
	}
	return 0;
}

int probes__attach_states(struct probes *p)
{
	for (size_t i = 0; p->states && i < N_SCHED_TRACEPOINTS; i++) {
		const struct sched_tracepoint_spec *spec = &sched_tracepoint_table[i];

		p->sched_links[i] = bpf_program__attach_tracepoint(
			probes__sched_prog(p, i), spec->category, spec->name);
		if (!p->sched_links[i]) {
			int err = -errno;

			pr_err("cannot attach to the tracepoint %s:%s: %s",
			       spec->category, spec->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

int probes__threads_fd(const struct probes *p)
{
	return p->states ? bpf_map__fd(p->skel->maps.threads) : -1;
}
