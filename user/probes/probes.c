// SPDX-License-Identifier: GPL-2.0
/*
 * The probes' skeleton and its loading: one BPF object for every mode,
 * opened, sized and configured for the mode (only its programs load),
 * loaded, its tables filled, and freed.  Attaching is by mode in
 * fullprobes.c (uprobes) and tracepoints.c; following processes and
 * threads in following.c; the maps are read in mapread.c and
 * counters.c.  Their shared state is struct probes (probesimpl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fold.h"
#include "framecache.h"
#include "hostcheck.h"
#include "log.h"
#include "offcpu.h"
#include "progload.h"
#include "probesimpl.h"
#include "syncprof.skel.h"
#include "uprobemulti.h"

/* Contended mode walks out of libc always; full mode for stacks or --skip. */
static bool probes__wants_unwinder(const struct probes_config *cfg)
{
	return cfg->mode == PROBES_CONTENDED || cfg->stack_depth ||
	       !skiplist__empty(cfg->skip) || cfg->off_cpu;
}

/* --states: its programs, the threads map's size, the lock source. */
static int probes__configure_states(struct probes *p,
				    const struct probes_config *cfg)
{
	for (size_t i = 0; i < N_SCHED_TRACEPOINTS; i++)
		bpf_program__set_autoload(probes__sched_prog(p, i), cfg->states);
	if (!cfg->states)
		return 0;
	p->skel->rodata->states_lock_source =
		cfg->mode == PROBES_CONTENDED ? SP_LOCKS_CONTENDED : SP_LOCKS_FULL;
	return bpf_map__set_max_entries(p->skel->maps.threads,
					cfg->max_threads ? cfg->max_threads : 1);
}

/* Only the mode's programs are loaded; the maps get sized. */
static int probes__configure(struct probes *p, const struct probes_config *cfg)
{
	bool contended = cfg->mode == PROBES_CONTENDED;
	struct bpf_program *full[] = {
		p->skel->progs.lock_enter, p->skel->progs.lock_return,
		p->skel->progs.thread_exit,
	};
	/* Perf-event copies, for attaching through another thread. */
	struct bpf_program *thread[] = {
		p->skel->progs.lock_enter_thread,
		p->skel->progs.lock_return_thread,
		p->skel->progs.modules_changed_thread,
	};
	struct cfitable_range lll = { 0, 0 };
	unsigned int depth = cfg->stack_depth;
	size_t n_funcs = 0;
	int err;

	err = probes__configure_states(p, cfg);
	if (!err)
		err = offcpu__configure(p->skel, cfg->off_cpu, !contended);
	if (err)
		return err;
	for (size_t i = 0; i < 3; i++)
		bpf_program__set_autoload(full[i], !contended &&
					  !(cfg->lock_calls_only && i == 2));
	for (size_t i = 0; i < 3; i++)
		bpf_program__set_autoload(thread[i], p->multi && !contended &&
						     !cfg->lock_calls_only);
	bpf_program__set_autoload(p->skel->progs.modules_changed,
				  !cfg->lock_calls_only);
	if (p->multi) {
		bpf_program__set_expected_attach_type(full[0],
						      UPROBEMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(full[1],
						      UPROBEMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(
			p->skel->progs.modules_changed, UPROBEMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(
			p->skel->progs.unlock_enter, UPROBEMULTI_ATTACH_TYPE);
	}
	bpf_program__set_autoload(p->skel->progs.release_wakes,
				  contended && cfg->blame);
	p->releases = !contended && (cfg->blame || cfg->hold ||
				     cfg->lock_order);
	p->lock_order = !contended && cfg->lock_order;
	p->hold = !contended && cfg->hold;
	bpf_program__set_autoload(p->skel->progs.unlock_enter, p->releases);
	bpf_program__set_autoload(p->skel->progs.unlock_enter_thread,
				  p->releases && p->multi);
	p->skel->rodata->blame_enabled = cfg->blame;
	p->blame = cfg->blame;
	p->caused = cfg->blame && cfg->caused && contended;
	p->skel->rodata->caused_enabled = p->caused;
	p->skel->rodata->why_enabled = cfg->why;
	p->skel->rodata->hold_enabled = p->hold;
	p->skel->rodata->lockorder_enabled = p->lock_order;
	err = bpf_map__set_max_entries(p->skel->maps.blame,
				       cfg->blame ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.caused,
					       p->caused ? cfg->map_size : 1);
	if (!err && !p->caused)
		err = bpf_map__set_max_entries(p->skel->maps.recent, 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.hold_stats,
					       p->hold ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.holds,
					       p->hold ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.lock_order,
					       p->lock_order ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.why,
					       cfg->why ? cfg->map_size : 1);
	if (!err && !cfg->why)
		err = bpf_map__set_max_entries(p->skel->maps.why_last, 1);
	/* The release records: a few per thread or object at a time. */
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.woken_by, 1);
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.requeues, 1);
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.releases, 1);
	if (err)
		return err;
	/* Some share a program: loaded when any of its tracepoints exists. */
	for (size_t i = 0; i < N_TRACEPOINTS; i++)
		bpf_program__set_autoload(probes__tracepoint_prog(p, i), false);
	for (size_t i = 0; contended && i < N_TRACEPOINTS; i++)
		if (hostcheck__syscall_tracepoint("/sys", tracepoint_table[i].name))
			bpf_program__set_autoload(probes__tracepoint_prog(p, i),
						  true);
	p->skel->rodata->key_owner = contended && cfg->per_thread;
	/* Several processes: an exec renames one, and changes its modules. */
	bpf_program__set_autoload(p->skel->progs.target_exec, cfg->follow_exec);
	bpf_program__set_autoload(p->skel->progs.follow_fork, cfg->children);
	bpf_program__set_autoload(p->skel->progs.follow_exit, cfg->several);
	p->skel->rodata->multi_target = cfg->several;
	p->skel->rodata->follow_children = cfg->children;
	if (depth > SP_STACK_MAX_DEPTH)
		depth = SP_STACK_MAX_DEPTH;
	p->skel->rodata->stack_depth = depth;
	p->skel->rodata->skip_enabled = !skiplist__empty(cfg->skip);
	err = probes__configure_late(p, depth);
	if (!err)
		err = bpf_map__set_value_size(p->skel->maps.stacks,
					      SP_STACK_SIZE(depth ? depth : 1));
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.stacks,
					       depth ? cfg->map_size : 1);
	if (err)
		return err;
	if (contended) {
		libcmodel__funcs(cfg->libc, &n_funcs);
		libcmodel__lll_private(cfg->libc, &lll);
	}
	err = bpf_map__set_max_entries(p->skel->maps.libc_funcs,
				       n_funcs ? (__u32)n_funcs : 1);
	if (err)
		return err;
	p->skel->rodata->func_nrows = (__u32)n_funcs;
	p->skel->rodata->lll_private_start = lll.start;
	p->skel->rodata->lll_private_end = lll.end;
	p->skel->rodata->cond_signal_offset = cfg->cond_signal_offset;
	return 0;
}

/* Fills contended mode's lock functions after load. */
static int probes__fill_funcs(struct probes *p, const struct libcmodel *libc)
{
	int funcs_fd = bpf_map__fd(p->skel->maps.libc_funcs);
	const struct sp_func_range *funcs;
	size_t n_funcs;

	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 *keys, count;
	int err = 0;

	funcs = libcmodel__funcs(libc, &n_funcs);
	if (!n_funcs)
		return 0;
	keys = calloc(n_funcs, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < n_funcs; i++)
		keys[i] = i;
	count = (__u32)n_funcs;
	if (bpf_map_update_batch(funcs_fd, keys, funcs, &count, &opts))
		err = -errno;
	free(keys);
	return err;
}

/* The tables of every module the target maps, loaded after the programs. */
static int probes__start_unwinder(struct probes *p,
				  const struct probes_config *cfg)
{
	const struct unwinder_config ucfg = {
		.pid = cfg->tgid,
		.tables_fd = bpf_map__fd(p->skel->maps.unwind_tables),
		.mappings_fd = bpf_map__fd(p->skel->maps.proc_mappings),
		.files_fd = bpf_map__fd(p->skel->maps.unwind_files),
		.libc_path = cfg->libc_path,
		.skip = cfg->skip,
		.busy = probes__drain_late,
		.busy_ctx = p,
	};
	int err = unwinder__new(&ucfg, &p->unwinder);

	for (size_t i = 0; !err && i < p->n_pids; i++) {
		err = probes__sync_process(p, p->pids[i]);
		/* Gone since it was listed (--all): its exit is told. */
		if (p->several && (err == -ENOENT || err == -ESRCH))
			err = 0;
	}
	return err < 0 ? err : 0;
}

int probes__new(const struct probes_config *cfg, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	double load_t0;
	int err;

	if (!p)
		return -ENOMEM;
	p->tgid = cfg->tgid;
	p->several = cfg->several;
	p->mode = cfg->mode;
	p->stack_depth = cfg->stack_depth > SP_STACK_MAX_DEPTH ?
			 SP_STACK_MAX_DEPTH : cfg->stack_depth;
	p->states = cfg->states;
	p->anchor = cfg->tgid;
	p->loader_multi_link = -1;
	p->release_multi_link = -1;
	p->release_kept_link = -1;
	p->multi = uprobemulti__supported();
	if (!p->multi && cfg->mode == PROBES_FULL)
		pr_info("this kernel has no uprobe_multi links (Linux 6.6): "
			"detaching takes ~0.1 s per function");
	p->probe_at_entry = cfg->probe_at_entry;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto fail;
	}
	p->map_size = cfg->map_size;
	p->keys = calloc(cfg->map_size, sizeof(*p->keys));
	p->values = calloc(cfg->map_size, sizeof(*p->values));
	p->counter_values = calloc((size_t)p->ncpus, sizeof(*p->counter_values));
	p->stack_buf = calloc(1, sizeof(struct sp_stack));
	if (!p->keys || !p->values || !p->counter_values || !p->stack_buf) {
		err = -ENOMEM;
		goto fail;
	}
	err = fold__new(cfg->per_thread, &p->fold);
	if (!err)
		err = stacktab__new(&p->raw_stacks);
	if (!err)
		err = stacktab__new(&p->raw_old);
	p->raw_keep_ns = cfg->unnamed_stacks_s * 1000000000ull;
	if (err)
		goto fail;
	p->skel = syncprof_bpf__open();
	if (!p->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	p->skel->rodata->target_tgid = (__u32)cfg->tgid;
	p->recording = cfg->ring_size > 0;
	p->skel->rodata->record_on = p->recording;
	/* Off, the ring keeps its smallest size: one page. */
	p->skel->rodata->record_wake_bytes = cfg->ring_size / 4;
	if (p->recording)
		err = bpf_map__set_max_entries(p->skel->maps.record_ring,
					       cfg->ring_size);
	else
		err = bpf_map__set_max_entries(p->skel->maps.record_ring,
					       (__u32)sysconf(_SC_PAGESIZE));
	if (err)
		goto fail;
	p->skel->rodata->wait_timing = cfg->wait_timing;
	p->skel->rodata->rows_by_thread = cfg->rows_by_thread;
	p->skel->rodata->filter_tids = cfg->n_tids > 0;
	p->skel->rodata->filter_types = cfg->types;
	p->skel->rodata->filter_object_start = cfg->object_start;
	p->skel->rodata->filter_object_end = cfg->object_end;
	p->skel->rodata->min_wait_ns = cfg->min_wait_ns;
	err = bpf_map__set_max_entries(p->skel->maps.stats, cfg->map_size);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.hists, cfg->map_size);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.tid_filter,
					       cfg->n_tids ? cfg->n_tids : 1);
	if (!err)
		err = probes__configure(p, cfg);
	if (err)
		goto fail;
	load_t0 = progload__clock_ms();
	err = syncprof_bpf__load(p->skel);
	if (!err)
		progload__log(p->skel->obj, progload__clock_ms() - load_t0, NULL);
	if (err) {
		pr_err("cannot load the BPF programs: %s (run with -vv for "
		       "the verifier's log)", strerror(-err));
		goto fail;
	}
	err = offcpu__new(p->skel, cfg->off_cpu, &p->offcpu);
	if (err)
		goto fail;
	for (unsigned int i = 0; i < cfg->n_tids; i++) {
		__u32 tid = (__u32)cfg->tids[i];
		__u8 one = 1;

		if (bpf_map__update_elem(p->skel->maps.tid_filter, &tid,
					 sizeof(tid), &one, sizeof(one), BPF_ANY)) {
			err = -errno;
			pr_err("cannot fill the --tid filter: %s", strerror(-err));
			goto fail;
		}
	}
	if (p->mode == PROBES_CONTENDED) {
		err = probes__fill_funcs(p, cfg->libc);
		if (err) {
			pr_err("cannot fill the lock function table: %s",
			       strerror(-err));
			goto fail;
		}
	}
	for (size_t i = 0; i < cfg->n_pids && !err; i++)
		err = probes__add_process(p, cfg->pids[i]);
	if (err) {
		pr_err("cannot follow PID %d: %s", (int)cfg->pids[0],
		       strerror(-err));
		goto fail;
	}
	if (probes__wants_unwinder(cfg)) {
		err = probes__start_unwinder(p, cfg);
		if (!err)
			err = probes__open_late(p);
		if (err) {
			pr_err("cannot load the unwind tables: %s", strerror(-err));
			goto fail;
		}
	}
	/* With or without stacks: thread_exit tells when this one exits. */
	p->skel->bss->anchor_tid = (__u32)p->anchor;
	probes__set_calibration(p, cfg->calibration_ns);
	*out = p;
	return 0;
fail:
	probes__free(p);
	return err;
}

void probes__set_calibration(struct probes *p, const uint64_t *site_ns)
{
	for (int k = 0; k < SP_SITE__COUNT; k++)
		p->skel->bss->calibration_ns[k] = site_ns[k];
}

int probes__attach(struct probes *p, const char *library)
{
	int err = probes__attach_follow(p);

	if (!err)
		err = probes__attach_exec(p);
	if (!err && p->mode == PROBES_CONTENDED)
		err = probes__attach_tracepoints(p);
	/* Releases first: a hold begun with no unlock probe would not end. */
	if (!err && p->mode == PROBES_FULL && p->releases)
		err = probes__attach_releases(p, library);
	if (!err && p->mode == PROBES_FULL)
		err = probes__attach_table(p, library, NULL, false);
	if (!err)
		err = offcpu__attach(p->offcpu);
	if (err)
		return err;
	/* Every probe that counts a wait is in: the window opens. */
	probes__going_live(p);
	if (p->mode == PROBES_CONTENDED)
		return 0;
	/* Without it, a main thread's exit is noticed within a second. */
	if (probes__open_events(p))
		return 0;
	p->exit_link = bpf_program__attach_raw_tracepoint(
		p->skel->progs.thread_exit, "sched_process_exit");
	if (!p->exit_link)
		pr_debug("cannot watch thread exits: %s", strerror(errno));
	return 0;
}

/*
 * With kernel.bpf_stats_enabled=1 the kernel times every program run:
 * -v then says what each program cost, before they go.
 */
static void probes__log_run_times(struct probes *p)
{
	struct bpf_program *prog;

	if (!log__enabled(LOG_INFO))
		return;
	if (probes__counter(p, SP_CNT_TIMING_PREEMPTED))
		pr_info("BPF time per wait: left out %llu runs the scheduler "
			"preempted", (unsigned long long)
			probes__counter(p, SP_CNT_TIMING_PREEMPTED));
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    !info.run_cnt)
			continue;
		pr_info("BPF program %s: %llu runs, %llu ns in all (%.0f ns each)",
			bpf_program__name(prog), (unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns,
			(double)info.run_time_ns / (double)info.run_cnt);
	}
}

/*
 * A perf-event uprobe link costs ~90 ms to detach on these machines (the
 * kernel unregisters them one at a time, each waiting for a grace
 * period; from parallel threads too); a uprobe_multi link, all of its
 * probes at once (see uprobemulti.c).
 */
void probes__free(struct probes *p)
{
	if (!p)
		return;
	if (p->skel)
		probes__log_run_times(p);
	probes__detach(p);
	if (p->loader_multi_link >= 0)
		close(p->loader_multi_link);
	if (p->release_multi_link >= 0)
		close(p->release_multi_link);
	if (p->release_kept_link >= 0)
		close(p->release_kept_link);
	bpf_link__destroy(p->exit_link);
	bpf_link__destroy(p->fork_link);
	bpf_link__destroy(p->proc_exit_link);
	free(p->proc_events);
	free(p->taken);
	free(p->pids);
	free(p->gone[0]);
	free(p->gone[1]);
	probes__destroy_links(p->retired, p->n_retired);
	free(p->retired);
	probes__destroy_links(&p->guard_links[0][0][0],
			      PROBES_GUARDS * N_PROBES * 2);
	for (size_t i = 0; i < p->n_retired_multi; i++)
		close(p->retired_multi[i]);
	free(p->retired_multi);
	probes__forget_file(&p->library);
	probes__forget_file(&p->loader);
	for (size_t i = 0; i < N_TRACEPOINTS; i++)
		bpf_link__destroy(p->tracepoint_links[i]);
	for (size_t i = 0; i < N_SCHED_TRACEPOINTS; i++)
		bpf_link__destroy(p->sched_links[i]);
	for (size_t i = 0; i < N_RELEASES; i++)
		bpf_link__destroy(p->release_links[i]);
	bpf_link__destroy(p->loader_link);
	bpf_link__destroy(p->exec_link);
	bpf_link__destroy(p->release_link);
	offcpu__free(p->offcpu);
	ring_buffer__free(p->events);
	probes__close_late(p);
	unwinder__free(p->unwinder);
	syncprof_bpf__destroy(p->skel);
	free(p->stack_buf);
	stacktab__free(p->raw_stacks);
	stacktab__free(p->raw_old);
	probes__caused_free(p);
	probes__blame_kept_free(p);
	free(p->keys);
	free(p->values);
	free(p->counter_values);
	fold__free(p->fold);
	free(p->forget);
	free(p);
}
