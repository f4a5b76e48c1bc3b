// SPDX-License-Identifier: GPL-2.0
/*
 * Full mode's probes are one table: each pthread function with the class
 * passed to the BPF programs as the attach cookie.  Symbols are resolved
 * here (elfimage), not by libbpf, because libc holds several versions of
 * some names (pthread_cond_wait@GLIBC_2.2.5 is the pre-2.3.2 condvar) and
 * only the default version is the one programs call.  In glibc 2.36 the
 * other versions of every rwlock, semaphore, barrier and spinlock
 * function (sem_wait@GLIBC_2.2.5 beside sem_wait@@GLIBC_2.34, and glibc's
 * own __pthread_rwlock_*) are aliases at the same address: one probe sees
 * all of their callers, libc's internal rwlocks (setlocale's) included.
 *
 * Every kind is in the same uprobe_multi link pair: the rwlock,
 * semaphore, barrier and spinlock functions add probes to it, not links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "elfimage.h"
#include "fold.h"
#include "framecache.h"
#include "hostcheck.h"
#include "log.h"
#include "offcpu.h"
#include "probes.h"
#include "probesite.h"
#include "progload.h"
#include "syncprof.skel.h"
#include "uprobemulti.h"
#include "waiting.h"

static const struct probe_spec {
	const char *func;
	enum sp_probe_class class;
	bool required;
} probe_table[] = {
	{ "pthread_mutex_lock", SP_CLASS_MUTEX, true },
	{ "pthread_mutex_trylock", SP_CLASS_MUTEX, true },
	{ "pthread_mutex_timedlock", SP_CLASS_MUTEX, false },
	{ "pthread_mutex_clocklock", SP_CLASS_MUTEX, false },	/* glibc 2.30+ */
	{ "pthread_cond_wait", SP_CLASS_CONDVAR, true },
	{ "pthread_cond_timedwait", SP_CLASS_CONDVAR, false },
	{ "pthread_cond_clockwait", SP_CLASS_CONDVAR, false },	/* glibc 2.30+ */
	{ "pthread_rwlock_rdlock", SP_CLASS_RWLOCK_R, false },
	{ "pthread_rwlock_tryrdlock", SP_CLASS_RWLOCK_R, false },
	{ "pthread_rwlock_timedrdlock", SP_CLASS_RWLOCK_R, false },
	{ "pthread_rwlock_clockrdlock", SP_CLASS_RWLOCK_R, false },	/* 2.30+ */
	{ "pthread_rwlock_wrlock", SP_CLASS_RWLOCK_W, false },
	{ "pthread_rwlock_trywrlock", SP_CLASS_RWLOCK_W, false },
	{ "pthread_rwlock_timedwrlock", SP_CLASS_RWLOCK_W, false },
	{ "pthread_rwlock_clockwrlock", SP_CLASS_RWLOCK_W, false },	/* 2.30+ */
	{ "sem_wait", SP_CLASS_SEM, false },
	{ "sem_trywait", SP_CLASS_SEM, false },
	{ "sem_timedwait", SP_CLASS_SEM, false },
	{ "sem_clockwait", SP_CLASS_SEM, false },	/* glibc 2.30+ */
	{ "pthread_barrier_wait", SP_CLASS_BARRIER, false },
	{ "pthread_spin_lock", SP_CLASS_SPIN, false },
	{ "pthread_spin_trylock", SP_CLASS_SPIN, false },
};

#define N_PROBES (sizeof(probe_table) / sizeof(probe_table[0]))

/*
 * Full mode with --hold or --blame: entry probes on the functions that
 * let a lock go (unlock_enter, see bpf/hold.bpf.c).  A barrier has no
 * release: its waits are in no blame row and it holds nothing.
 * pthread_spin_unlock shares its code with pthread_spin_init in glibc
 * 2.36: an init is seen as a release of a lock no one holds.
 */
static const struct probe_spec release_table[] = {
	{ "pthread_mutex_unlock", SP_CLASS_UNLOCK, true },
	{ "pthread_cond_signal", SP_CLASS_SIGNAL, true },
	{ "pthread_cond_broadcast", SP_CLASS_SIGNAL, true },
	{ "pthread_rwlock_unlock", SP_CLASS_RWUNLOCK, false },
	{ "pthread_spin_unlock", SP_CLASS_UNLOCK, false },
	{ "sem_post", SP_CLASS_SIGNAL, false },
};

#define N_RELEASES (sizeof(release_table) / sizeof(release_table[0]))

/* Bytes of a function decoded to place its probe (more is not needed). */
#define PROBESITE_CODE_MAX 4096

/* Contended mode's tracepoints; futex2's are newer (Linux 6.7). */
static const struct tracepoint_spec {
	const char *name;
	bool required;
} tracepoint_table[] = {
	{ "sys_enter_futex", true },
	{ "sys_exit_futex", true },
	{ "sys_enter_futex_wait", false },
	{ "sys_exit_futex_wait", false },
	{ "sys_enter_futex_wake", false },
};

#define N_TRACEPOINTS (sizeof(tracepoint_table) / sizeof(tracepoint_table[0]))

/* --states: the scheduler's tracepoints (see bpf/states.bpf.c). */
static const struct sched_tracepoint_spec {
	const char *category;
	const char *name;
} sched_tracepoint_table[] = {
	{ "sched", "sched_switch" },
	{ "sched", "sched_wakeup" },
	{ "sched", "sched_wakeup_new" },
	{ "task", "task_newtask" },
	{ "sched", "sched_process_exit" },
};

#define N_SCHED_TRACEPOINTS \
	(sizeof(sched_tracepoint_table) / sizeof(sched_tracepoint_table[0]))

struct probes {
	struct syncprof_bpf *skel;
	enum probes_mode mode;
	pid_t tgid;
	bool probe_at_entry;
	bool recording;
	int ncpus;
	uint64_t window;
	unsigned int map_size;
	struct sp_key *keys;		/* map_size slots for one read */
	struct sp_value *values;
	uint64_t *counter_values;	/* ncpus slots for one counter */
	struct fold *fold;		/* rows of exited threads */
	bool multi;			/* uprobe_multi links (Linux 6.6+) */
	int multi_links[2 * N_PROBES];	/* uprobe_multi links, one per attach
					   and program */
	size_t n_multi_links;
	struct bpf_link *links[N_PROBES][2];	/* else one pair per function */
	enum sp_site_kind kinds[N_PROBES];
	struct bpf_link *tracepoint_links[N_TRACEPOINTS];
	bool states;
	struct bpf_link *sched_links[N_SCHED_TRACEPOINTS];
	struct bpf_link *loader_link;
	struct bpf_link *exec_link;
	struct bpf_link *release_link;	/* --blame, contended: sched_waking */
	struct bpf_link *release_links[N_RELEASES];	/* full: unlocks */
	int release_multi_link;		/* the same in one uprobe_multi link */
	bool releases;			/* full mode: attach release_table */
	bool hold;
	int loader_multi_link;
	struct unwinder *unwinder;	/* NULL: no walk through modules */
	struct offcpu *offcpu;		/* --off-cpu, or NULL */
	unsigned int stack_depth;
	void *stack_buf;		/* one stacks map value */
	struct ring_buffer *events;
	unsigned int events_seen;	/* PROBES_EVENT_* since the last consume */
	uint64_t anchor_exit_ns;	/* when its exit was told (CLOCK_MONOTONIC) */
	/* Where full mode's probes are, to attach them again (follow_threads). */
	pid_t anchor;			/* the thread they are attached through */
	struct bpf_link *exit_link;	/* tells when it exits */
	char *library;
	size_t n_sites;
	size_t site_index[N_PROBES];
	uint64_t site_offset[N_PROBES];
	uint64_t site_cookie[N_PROBES];
	char *loader;
	uint64_t loader_offset;
	struct bpf_link **retired;	/* links of exited anchors */
	size_t n_retired;
	bool several;			/* several processes: targets map */
	struct bpf_link *fork_link;	/* --children */
	struct bpf_link *proc_exit_link;
	struct probes_proc_event *proc_events;	/* since the last consume */
	size_t n_proc_events, cap_proc_events;
	struct probes_proc_event *taken;	/* what the last consume took */
	size_t n_taken, cap_taken;
	pid_t *pids;			/* the followed processes, alive */
	size_t n_pids, cap_pids;
	uint64_t (*translate)(void *ctx, pid_t pid, uint64_t pc);
	void *translate_ctx;
};

/*
 * Where probes are attached: one process, or (several) every process,
 * filtered by the targets map: a child forked from a followed process
 * runs its first lock call probed.  perf-event uprobes take -1 for
 * every process, uprobe_multi links 0.
 */
static pid_t probes__probe_pid(const struct probes *p, bool multi_link)
{
	if (p->several)
		return multi_link ? 0 : -1;
	return p->anchor;
}

static struct bpf_program *probes__tracepoint_prog(struct probes *p, size_t i)
{
	struct bpf_program *progs[N_TRACEPOINTS] = {
		p->skel->progs.futex_enter, p->skel->progs.futex_exit,
		p->skel->progs.futex2_wait_enter, p->skel->progs.futex2_wait_exit,
		p->skel->progs.futex2_wake_enter,
	};

	return progs[i];
}

/* Contended mode walks out of libc always; full mode for stacks or --skip. */
static bool probes__wants_unwinder(const struct probes_config *cfg)
{
	return cfg->mode == PROBES_CONTENDED || cfg->stack_depth ||
	       !skiplist__empty(cfg->skip) || cfg->off_cpu;
}

/* In sched_tracepoint_table's order. */
static struct bpf_program *probes__sched_prog(struct probes *p, size_t i)
{
	struct bpf_program *progs[N_SCHED_TRACEPOINTS] = {
		p->skel->progs.states_switch, p->skel->progs.states_wakeup,
		p->skel->progs.states_wakeup_new, p->skel->progs.states_newtask,
		p->skel->progs.states_exit,
	};

	return progs[i];
}

static bool probes__is_sched_prog(struct probes *p,
				  const struct bpf_program *prog)
{
	for (size_t i = 0; i < N_SCHED_TRACEPOINTS; i++)
		if (probes__sched_prog(p, i) == prog)
			return true;
	return prog == p->skel->progs.offcpu_switch;
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
		bpf_program__set_autoload(full[i], !contended);
	for (size_t i = 0; i < 3; i++)
		bpf_program__set_autoload(thread[i], p->multi && !contended);
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
	p->releases = !contended && (cfg->blame || cfg->hold);
	p->hold = !contended && cfg->hold;
	bpf_program__set_autoload(p->skel->progs.unlock_enter, p->releases);
	bpf_program__set_autoload(p->skel->progs.unlock_enter_thread,
				  p->releases && p->multi);
	p->skel->rodata->blame_enabled = cfg->blame;
	p->skel->rodata->hold_enabled = p->hold;
	err = bpf_map__set_max_entries(p->skel->maps.blame,
				       cfg->blame ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.hold_stats,
					       p->hold ? cfg->map_size : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.holds,
					       p->hold ? cfg->map_size : 1);
	/* The release records: a few per thread or object at a time. */
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.woken_by, 1);
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.requeues, 1);
	if (!err && !cfg->blame)
		err = bpf_map__set_max_entries(p->skel->maps.releases, 1);
	if (err)
		return err;
	for (size_t i = 0; i < N_TRACEPOINTS; i++)
		bpf_program__set_autoload(probes__tracepoint_prog(p, i),
			contended && hostcheck__syscall_tracepoint("/sys",
					tracepoint_table[i].name));
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
	};
	int err = unwinder__new(&ucfg, &p->unwinder);

	for (size_t i = 0; !err && i < p->n_pids; i++)
		err = probes__sync_process(p, p->pids[i]);
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
	for (int k = 0; k < SP_SITE__COUNT; k++)
		p->skel->rodata->calibration_ns[k] = cfg->calibration_ns[k];
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
		if (err) {
			pr_err("cannot load the unwind tables: %s", strerror(-err));
			goto fail;
		}
	} else {
		p->skel->bss->anchor_tid = (__u32)p->anchor;
	}
	*out = p;
	return 0;
fail:
	probes__free(p);
	return err;
}

/*
 * Perf-event uprobes, one pair per function, through the anchor thread:
 * kernels without uprobe_multi, and after the main thread exited.  Return
 * probes first: a call entering between the two would leave a call in
 * flight that no return pops.  (Attaching from parallel threads was
 * slower here: 0.8-1.0 s against 0.15-0.6 s.)
 */
static int probes__attach_perf(struct probes *p, const char *library,
			       const size_t *index, const uint64_t *offsets,
			       const uint64_t *cookies, size_t n)
{
	for (int ret = 1; ret >= 0; ret--) {
		struct bpf_program *prog;

		if (p->multi)
			prog = ret ? p->skel->progs.lock_return_thread
				   : p->skel->progs.lock_enter_thread;
		else
			prog = ret ? p->skel->progs.lock_return
				   : p->skel->progs.lock_enter;
		for (size_t i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, opts,
				    .bpf_cookie = cookies[i], .retprobe = ret);
			struct bpf_link *link = bpf_program__attach_uprobe_opts(
				prog, probes__probe_pid(p, false), library,
				offsets[i], &opts);

			if (!link) {
				int err = -errno;

				pr_err("cannot attach a uprobe to %s in %s: %s",
				       probe_table[index[i]].func, library,
				       strerror(-err));
				return err;
			}
			p->links[index[i]][ret] = link;
		}
	}
	return 0;
}

/* Return probes first, as above; with uprobe_multi, one link each. */
static int probes__attach_sites(struct probes *p, const char *library,
				const size_t *index, const uint64_t *offsets,
				const uint64_t *cookies, size_t n)
{
	struct bpf_program *progs[2] = {
		p->skel->progs.lock_enter, p->skel->progs.lock_return,
	};

	if (!n)
		return 0;
	if (!p->multi || (p->anchor != p->tgid && !p->several))
		return probes__attach_perf(p, library, index, offsets, cookies,
					   n);
	if (p->n_multi_links + 2 > sizeof(p->multi_links) / sizeof(p->multi_links[0]))
		return -E2BIG;
	for (int ret = 1; ret >= 0; ret--) {
		int fd = uprobemulti__attach(bpf_program__fd(progs[ret]), library,
					     offsets, cookies, (uint32_t)n,
					     ret, probes__probe_pid(p, true));

		if (fd < 0) {
			pr_err("cannot attach uprobes to the pthread functions "
			       "of %s: %s", library, strerror(-fd));
			return fd;
		}
		p->multi_links[p->n_multi_links++] = fd;
	}
	return 0;
}

enum sp_site_kind probes__site_kind(const struct probes *p, const char *name)
{
	for (size_t i = 0; i < N_PROBES; i++)
		if (!strcmp(probe_table[i].func, name))
			return p->kinds[i];
	return SP_SITE_STEPPED;
}

/* Where a function's probes go, and what the BPF programs need to know. */
struct probes_site {
	uint64_t offset;	/* in the file */
	enum sp_site_kind kind;
	bool rehit;		/* one call can hit it more than once */
};

/*
 * The cheapest safe site in the function (see probesite.c), as a file
 * offset, and how the kernel will run the instruction there.  -ENOTSUP:
 * the kernel can probe no site in it (its entry has a LOCK prefix).
 * rehit_ok: the programs tell a second hit of the site in one call
 * (lock_enter does; the release probe does not: it stays at entry).
 */
static int probes__site(struct probes *p, int fd, const char *name,
			const struct elfimage_func *func, bool at_entry,
			bool rehit_ok, struct probes_site *out)
{
	uint8_t code[PROBESITE_CODE_MAX];
	size_t want = func->size && func->size < sizeof(code) ? func->size
							      : sizeof(code);
	struct probesite site;
	ssize_t got;

	*out = (struct probes_site){ func->file_offset, SP_SITE_STEPPED, false };
	got = pread(fd, code, want, (off_t)func->file_offset);
	if (got <= 0 || probesite__find(code, (size_t)got, func->vaddr, &site))
		return 0;
	if (site.refused || (site.rehit && !rehit_ok && site.entry_refused)) {
		pr_debug("%s: no site the kernel can probe (%s)", name, site.insn);
		return -ENOTSUP;
	}
	if (site.rehit && !rehit_ok)
		at_entry = true;
	if (site.entry_emulated)
		out->kind = SP_SITE_EMULATED;
	/* A refused entry leaves the loop's site, whatever was asked. */
	if ((p->probe_at_entry || at_entry) && !site.entry_refused)
		return 0;
	/* Branches into a prefix are checked only within what was decoded. */
	if (site.offset && (!func->size || func->size > (uint64_t)got)) {
		pr_debug("%s: larger than %zu bytes, probed at entry", name,
			 sizeof(code));
		return 0;
	}
	out->kind = site.emulated ? SP_SITE_EMULATED : SP_SITE_STEPPED;
	out->rehit = site.rehit;
	out->offset = func->file_offset + site.offset;
	pr_debug("%s: probe at +0x%lx (%s)%s%s", name, (unsigned long)site.offset,
		 site.insn, site.emulated ? "" : ", single-stepped",
		 site.rehit ? ", inside its retry loop" : "");
	return 0;
}

/* Whether thread tid of the target runs (exists, and is not a zombie). */
static bool probes__thread_alive_in(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' &&
	       close_paren[2] != 'X';
}

static bool probes__thread_alive(const struct probes *p, pid_t tid)
{
	return probes__thread_alive_in(p->tgid, tid);
}

static uint64_t probes__counter(struct probes *p, __u32 which);

/* Closes the descriptor behind a probes__keep_file path, and frees it. */
static void probes__forget_file(char **kept)
{
	if (*kept)
		close(atoi(*kept + strlen("/proc/self/fd/")));
	free(*kept);
	*kept = NULL;
}

/*
 * A path to the file at `path` that stays valid: /proc/self/fd/N of a
 * descriptor kept open.  The target's /proc/PID/root goes away with its
 * main thread, and the file may be replaced on disk.
 */
static int probes__keep_file(const char *path, char **kept)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	probes__forget_file(kept);
	if (asprintf(kept, "/proc/self/fd/%d", fd) < 0) {
		*kept = NULL;
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Attaches the table's functions named `only` (NULL: all of them), at
 * their first instruction when at_entry, else where the configuration
 * says.
 */
static int probes__attach_table(struct probes *p, const char *library,
				const char *only, bool at_entry)
{
	uint64_t offsets[N_PROBES], cookies[N_PROBES];
	size_t index[N_PROBES], n = 0;
	struct elfimage *image;
	int err = elfimage__open(library, &image);
	int fd;

	if (err) {
		/* Gone with the target's /proc/PID/root: the caller says so. */
		if (probes__thread_alive(p, p->tgid))
			pr_err("cannot read %s: %s", library, strerror(-err));
		return err;
	}
	fd = open(library, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		elfimage__close(image);
		return err;
	}
	for (size_t i = 0; i < N_PROBES; i++) {
		const struct probe_spec *spec = &probe_table[i];
		struct elfimage_func func;
		struct probes_site site;

		if (only && strcmp(only, spec->func))
			continue;
		err = elfimage__find_func(image, spec->func, &func);
		if (err) {
			if (!spec->required) {
				pr_debug("%s: not in %s, not probed", spec->func,
					 library);
				err = 0;
				continue;
			}
			pr_err("%s has no %s; is it a glibc libc?", library,
			       spec->func);
			break;
		}
		err = probes__site(p, fd, spec->func, &func, at_entry, true,
				   &site);
		if (err) {
			if (!only)
				pr_warn("%s in %s cannot be probed: full mode does "
					"not see its calls", spec->func, library);
			err = 0;
			continue;
		}
		offsets[n] = site.offset;
		cookies[n] = SP_COOKIE(spec->class, site.kind) |
			     (site.rehit ? SP_COOKIE_REHIT : 0);
		index[n++] = i;
		p->kinds[i] = site.kind;
	}
	close(fd);
	elfimage__close(image);
	if (err)
		return err;
	/* Kept to attach them again through another thread. */
	err = probes__keep_file(library, &p->library);
	if (err)
		return err;
	p->n_sites = n;
	memcpy(p->site_index, index, n * sizeof(*index));
	memcpy(p->site_offset, offsets, n * sizeof(*offsets));
	memcpy(p->site_cookie, cookies, n * sizeof(*cookies));
	return probes__attach_sites(p, library, index, offsets, cookies, n);
}

/*
 * --hold, --blame: entry probes on the release functions of library: one
 * uprobe_multi link where the kernel has them (six perf-event links took
 * ~0.1 s each to detach), else a link per function.
 */
static int probes__attach_releases(struct probes *p, const char *library)
{
	uint64_t offsets[N_RELEASES], cookies[N_RELEASES];
	size_t index[N_RELEASES], n = 0;
	struct elfimage *image;
	int err = elfimage__open(library, &image);
	int fd;

	if (err)
		return err;
	fd = open(library, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		elfimage__close(image);
		return err;
	}
	for (size_t i = 0; i < N_RELEASES && !err; i++) {
		const struct probe_spec *spec = &release_table[i];
		struct elfimage_func func;
		struct probes_site site;

		err = elfimage__find_func(image, spec->func, &func);
		if (err && !spec->required) {
			err = 0;
			continue;
		}
		if (err) {
			pr_err("%s has no %s; is it a glibc libc?", library,
			       spec->func);
			break;
		}
		if (probes__site(p, fd, spec->func, &func, false, false, &site)) {
			pr_warn("%s in %s cannot be probed: --hold and --blame "
				"do not see its calls", spec->func, library);
			continue;
		}
		offsets[n] = site.offset;
		cookies[n] = SP_COOKIE(spec->class, site.kind);
		index[n++] = i;
	}
	close(fd);
	elfimage__close(image);
	if (err || !n)
		return err;
	/* Through another thread than the leader: perf-event links (see
	 * probes__follow_threads). */
	if (p->multi && (p->anchor == p->tgid || p->several)) {
		p->release_multi_link = uprobemulti__attach(
			bpf_program__fd(p->skel->progs.unlock_enter), library,
			offsets, cookies, (uint32_t)n, false,
			probes__probe_pid(p, true));
		if (p->release_multi_link < 0)
			pr_err("cannot attach uprobes to the release functions "
			       "of %s: %s", library,
			       strerror(-p->release_multi_link));
		return p->release_multi_link < 0 ? p->release_multi_link : 0;
	}
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookies[i]);

		p->release_links[index[i]] = bpf_program__attach_uprobe_opts(
			p->multi ? p->skel->progs.unlock_enter_thread
				 : p->skel->progs.unlock_enter,
			probes__probe_pid(p, false), library, offsets[i],
			&opts);
		if (!p->release_links[index[i]]) {
			err = -errno;
			pr_err("cannot attach a uprobe to %s in %s: %s",
			       release_table[index[i]].func, library,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

static int probes__attach_tracepoints(struct probes *p)
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

		if (!bpf_program__autoload(prog))
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
static int probes__attach_exec(struct probes *p)
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

static bool probes__has_pid(const struct probes *p, pid_t pid)
{
	for (size_t i = 0; i < p->n_pids; i++)
		if (p->pids[i] == pid)
			return true;
	return false;
}

static int probes__note_pid(struct probes *p, pid_t pid)
{
	if (probes__has_pid(p, pid))
		return 0;
	if (array__grow(&p->pids, &p->cap_pids, p->n_pids + 1,
			sizeof(*p->pids)))
		return -ENOMEM;
	p->pids[p->n_pids++] = pid;
	return 0;
}

int probes__add_process(struct probes *p, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;
	int err = probes__note_pid(p, pid);

	if (err || !p->several)
		return err;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.targets), &key,
				&one, BPF_ANY))
		return -errno;
	return 0;
}

void probes__forget_process(struct probes *p, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	for (size_t i = 0; i < p->n_pids; i++) {
		if (p->pids[i] != pid)
			continue;
		p->pids[i] = p->pids[--p->n_pids];
		break;
	}
	if (p->several)
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.targets), &key);
	if (p->unwinder)
		unwinder__forget(p->unwinder, pid);
	bpf_map_delete_elem(bpf_map__fd(p->skel->maps.proc_layouts), &key);
}

uint64_t probes__dropped_processes(struct probes *p)
{
	return probes__counter(p, SP_CNT_DROPPED_PROCS);
}

uint64_t probes__lost_process_events(struct probes *p)
{
	return probes__counter(p, SP_CNT_LOST_PROC_EVENTS);
}

const struct probes_proc_event *probes__proc_events(const struct probes *p,
						    size_t *n)
{
	*n = p->n_taken;
	return p->taken;
}

static void probes__queue_proc_event(struct probes *p,
				     const struct sp_module_event_rec *ev)
{
	if (array__grow(&p->proc_events, &p->cap_proc_events,
			p->n_proc_events + 1, sizeof(*p->proc_events)))
		return;	/* the exit is seen by /proc, the fork at the next sync */
	p->proc_events[p->n_proc_events] = (struct probes_proc_event){
		.type = ev->type, .pid = (pid_t)ev->tgid,
		.parent = (pid_t)ev->parent,
	};
	memcpy(p->proc_events[p->n_proc_events].comm, ev->comm,
	       sizeof(ev->comm));
	p->proc_events[p->n_proc_events++].comm[sizeof(ev->comm) - 1] = '\0';
	if (ev->type == SP_MODULE_EVENT_FORK)
		probes__note_pid(p, (pid_t)ev->tgid);
	p->events_seen |= PROBES_EVENT_PROCESSES;
}

static int probes__on_event(void *ctx, void *data, size_t size)
{
	struct probes *p = ctx;
	struct sp_module_event_rec ev = { 0 };
	__u32 type;

	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	type = ev.type;
	if (type != SP_MODULE_EVENT_ANCHOR_EXIT)
		probes__queue_proc_event(p, &ev);
	if (type == SP_MODULE_EVENT_FORK || type == SP_MODULE_EVENT_EXIT)
		return 0;
	if (type == SP_MODULE_EVENT_ANCHOR_EXIT) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		p->events_seen |= PROBES_EVENT_THREAD_EXIT;
		p->anchor_exit_ns = (uint64_t)now.tv_sec * 1000000000ull +
				    (uint64_t)now.tv_nsec;
	} else {
		/* A library loaded or unloaded, or an exec. */
		p->events_seen |= PROBES_EVENT_MODULES;
	}
	return 0;
}

static int probes__open_events(struct probes *p)
{
	if (p->events)
		return 0;
	p->events = ring_buffer__new(bpf_map__fd(p->skel->maps.module_events),
				     probes__on_event, p, NULL);
	return p->events ? 0 : -errno;
}

/*
 * Several processes: their exits, and with --children their forks.  The
 * fork program is attached before the probes, so no child forked after
 * them escapes; children forked before are found in /proc (main.c).
 */
static int probes__attach_follow(struct probes *p)
{
	int err;

	if (!p->several)
		return 0;
	err = probes__open_events(p);
	if (err)
		return err;
	if (bpf_program__autoload(p->skel->progs.follow_fork)) {
		p->fork_link = bpf_program__attach_raw_tracepoint(
			p->skel->progs.follow_fork, "sched_process_fork");
		if (!p->fork_link) {
			err = -errno;
			pr_err("cannot attach to the raw tracepoint "
			       "sched_process_fork (--children): %s",
			       strerror(-err));
			return err;
		}
	}
	p->proc_exit_link = bpf_program__attach_tracepoint(
		p->skel->progs.follow_exit, "sched", "sched_process_exit");
	if (!p->proc_exit_link) {
		err = -errno;
		pr_err("cannot attach to the tracepoint sched:sched_process_exit: "
		       "%s", strerror(-err));
		return err;
	}
	return 0;
}

int probes__attach(struct probes *p, const char *library)
{
	int err = probes__attach_follow(p);

	if (!err)
		err = probes__attach_exec(p);
	if (!err)
		err = offcpu__attach(p->offcpu);
	if (err)
		return err;
	if (p->mode == PROBES_CONTENDED)
		return probes__attach_tracepoints(p);
	/* Releases first: a hold begun with no unlock probe would not end. */
	err = p->releases ? probes__attach_releases(p, library) : 0;
	if (!err)
		err = probes__attach_table(p, library, NULL, false);
	if (err)
		return err;
	/* Without it, a main thread's exit is noticed within a second. */
	if (probes__open_events(p))
		return 0;
	p->exit_link = bpf_program__attach_raw_tracepoint(
		p->skel->progs.thread_exit, "sched_process_exit");
	if (!p->exit_link)
		pr_debug("cannot watch thread exits: %s", strerror(errno));
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

int probes__attach_function(struct probes *p, const char *library,
			    const char *name, bool at_entry)
{
	return probes__attach_table(p, library, name, at_entry);
}

static void *probes__destroy_one(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/*
 * Destroys perf-event links, each in a thread of its own: one at a time
 * they took 0.25-0.45 s each here (every unregistration waits for a
 * grace period); from parallel threads they end ~0.09 s apart (15 in
 * 1.4 s instead of 6 s).
 */
static void probes__destroy_links(struct bpf_link **links, size_t n)
{
	pthread_t *threads = calloc(n ? n : 1, sizeof(*threads));
	bool *started = calloc(n ? n : 1, sizeof(*started));

	for (size_t i = 0; i < n; i++)
		started[i] = links[i] && threads && started &&
			     !pthread_create(&threads[i], NULL,
					     probes__destroy_one, links[i]);
	for (size_t i = 0; i < n; i++) {
		if (started && started[i])
			pthread_join(threads[i], NULL);
		else if (links[i])
			bpf_link__destroy(links[i]);
	}
	free(threads);
	free(started);
}

void probes__detach(struct probes *p)
{
	for (size_t i = 0; i < p->n_multi_links; i++)
		close(p->multi_links[i]);
	p->n_multi_links = 0;
	probes__destroy_links(&p->links[0][0], N_PROBES * 2);
	memset(p->links, 0, sizeof(p->links));
}

int probes__attach_loader(struct probes *p, const char *loader)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct elfimage_func func;
	struct elfimage *image;
	int err = elfimage__open(loader, &image);

	if (err)
		return err;
	err = elfimage__find_func(image, "_dl_debug_state", &func);
	elfimage__close(image);
	if (err)
		return err;
	err = probes__open_events(p);
	if (err)
		return err;
	err = probes__keep_file(loader, &p->loader);
	if (err)
		return err;
	p->loader_offset = func.file_offset;
	if (p->multi) {
		uint64_t offset = func.file_offset;

		p->loader_multi_link = uprobemulti__attach(
			bpf_program__fd(p->skel->progs.modules_changed), loader,
			&offset, NULL, 1, false, probes__probe_pid(p, true));
		return p->loader_multi_link < 0 ? p->loader_multi_link : 0;
	}
	p->loader_link = bpf_program__attach_uprobe_opts(
		p->skel->progs.modules_changed, probes__probe_pid(p, false),
		loader,
		func.file_offset, &opts);
	if (!p->loader_link)
		return -errno;
	return 0;
}

int probes__events_fd(struct probes *p)
{
	return p->events ? ring_buffer__epoll_fd(p->events) : -1;
}

unsigned int probes__consume_events(struct probes *p)
{
	unsigned int seen;

	if (!p->events)
		return 0;
	ring_buffer__consume(p->events);
	/* The queue becomes what the caller reads until the next consume. */
	{
		struct probes_proc_event *t = p->taken;
		size_t cap = p->cap_taken;

		p->taken = p->proc_events;
		p->cap_taken = p->cap_proc_events;
		p->n_taken = p->n_proc_events;
		p->proc_events = t;
		p->cap_proc_events = cap;
		p->n_proc_events = 0;
	}
	seen = p->events_seen;
	p->events_seen = 0;
	return seen;
}

/*
 * The live thread of the target with the lowest TID other than `not`
 * (the oldest, short of TID wraparound: likely to live on), or 0.
 */
static pid_t probes__live_thread(const struct probes *p, pid_t not)
{
	struct dirent *entry;
	pid_t found = 0;
	char path[64];
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->tgid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((entry = readdir(dir))) {
		pid_t tid = (pid_t)atoi(entry->d_name);

		if (tid > 0 && tid != not && (!found || tid < found) &&
		    probes__thread_alive(p, tid))
			found = tid;
	}
	closedir(dir);
	return found;
}

/* Keeps a link of an exited anchor until the end: closing one takes ~0.25 s. */
static void probes__retire(struct probes *p, struct bpf_link *link)
{
	void *grown;

	if (!link)
		return;
	grown = realloc(p->retired, (p->n_retired + 1) * sizeof(*p->retired));
	if (!grown) {
		bpf_link__destroy(link);
		return;
	}
	p->retired = grown;
	p->retired[p->n_retired++] = link;
}

/*
 * Attaches full mode's probes and the loader watch through thread tid;
 * the links of the previous anchor are closed (uprobe_multi: at once) or
 * retired.
 */
static int probes__attach_through(struct probes *p, pid_t tid,
				  uint64_t *attached_ns)
{
	struct timespec now;
	struct bpf_link *old[N_PROBES][2], *old_loader = p->loader_link;
	int err;

	memcpy(old, p->links, sizeof(old));
	memset(p->links, 0, sizeof(p->links));
	p->loader_link = NULL;
	p->anchor = tid;
	p->skel->bss->anchor_tid = (__u32)tid;
	err = probes__attach_sites(p, p->library, p->site_index,
				   p->site_offset, p->site_cookie, p->n_sites);
	if (!err && p->releases) {
		struct bpf_link *old_releases[N_RELEASES];

		memcpy(old_releases, p->release_links, sizeof(old_releases));
		memset(p->release_links, 0, sizeof(p->release_links));
		if (p->release_multi_link >= 0)
			close(p->release_multi_link);
		p->release_multi_link = -1;
		err = probes__attach_releases(p, p->library);
		for (size_t i = 0; i < N_RELEASES; i++)
			probes__retire(p, old_releases[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	*attached_ns = (uint64_t)now.tv_sec * 1000000000ull +
		       (uint64_t)now.tv_nsec;
	if (!err && p->loader) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);

		p->loader_link = bpf_program__attach_uprobe_opts(
			p->multi ? p->skel->progs.modules_changed_thread
				 : p->skel->progs.modules_changed,
			tid, p->loader, p->loader_offset, &opts);
		if (!p->loader_link)
			pr_debug("cannot watch the loader through thread %d: %s",
				 (int)tid, strerror(errno));
	}
	for (size_t i = 0; i < p->n_multi_links; i++)
		close(p->multi_links[i]);
	p->n_multi_links = 0;
	if (p->loader_multi_link >= 0)
		close(p->loader_multi_link);
	p->loader_multi_link = -1;
	for (size_t i = 0; i < N_PROBES; i++)
		for (int ret = 0; ret < 2; ret++)
			probes__retire(p, old[i][ret]);
	probes__retire(p, old_loader);
	return err;
}

/*
 * The kernel filters a uprobe by the memory of the task it was attached
 * through: a perf-event uprobe by its task's, a uprobe_multi link by its
 * process's group leader's.  Once that task has exited, its memory is
 * gone and no probe runs for the threads that go on (a pthread_exit in
 * main): the perf-event filter fails and the kernel takes the
 * breakpoints out; a uprobe_multi link keeps them in and, before Linux
 * 6.13, runs nothing (since, it runs on: then nothing moves).
 * A perf-event uprobe attached through any live thread of the process
 * runs for all of them, so the probes are attached again through one, as
 * soon as the anchor's exit is known (a BPF program on
 * sched_process_exit, or a check every second), and the dead links are
 * closed.  Calls in between are not counted: the caller says how long
 * that was (0.15-1.2 s here: each perf-event registration can wait for a
 * grace period).  Rejected: a second set of probes through a worker
 * thread all along (every call would run the programs twice).
 */
pid_t probes__follow_threads(struct probes *p, uint64_t *gap_ns)
{
	uint64_t attached_ns;
	pid_t tid;
	int err;

	*gap_ns = 0;
	/*
	 * Attached for every process: no thread to follow; uprobe_multi
	 * links that run on for the other threads: nothing to move (moving
	 * lost the calls made meanwhile and ran some twice).
	 */
	if (p->mode != PROBES_FULL || !p->library || p->several ||
	    (p->multi && p->anchor == p->tgid &&
	     uprobemulti__outlives_leader()) ||
	    probes__thread_alive(p, p->anchor))
		return 0;
	for (int tries = 0; tries < 8; tries++) {
		tid = probes__live_thread(p, p->anchor);
		if (!tid)
			return 0;	/* the process is ending */
		err = probes__attach_through(p, tid, &attached_ns);
		if (!err) {
			if (p->anchor_exit_ns && attached_ns > p->anchor_exit_ns)
				*gap_ns = attached_ns - p->anchor_exit_ns;
			p->anchor_exit_ns = 0;
			return tid;
		}
		probes__detach(p);
	}
	return -ESRCH;
}

bool probes__unwinds(const struct probes *p)
{
	return p->unwinder != NULL;
}

int probes__sync_modules(struct probes *p)
{
	int err = 0;

	if (!p->several)
		return probes__sync_process(p, p->tgid);
	for (size_t i = 0; i < p->n_pids; i++) {
		int e = probes__sync_process(p, p->pids[i]);

		/* One that exited meanwhile is not an error. */
		if (e && e != -ENOENT && e != -ESRCH && !err)
			err = e;
	}
	return err;
}

int probes__sync_process(struct probes *p, pid_t pid)
{
	uint32_t key = (uint32_t)pid, seq = 0;
	int changed;

	if (!p->unwinder)
		return 0;
	/* The image first: an exec after this read makes the array stale. */
	bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.exec_seqs), &key, &seq);
	changed = unwinder__sync_pid(p->unwinder, pid, seq);
	if (changed > 0)
		framecache__publish(p->skel->maps.proc_layouts,
				    p->skel->maps.exec_seqs, pid, seq,
				    unwinder__layout(p->unwinder, pid));
	return changed < 0 ? changed : 0;
}

void probes__unwind_stats(const struct probes *p, struct unwinder_stats *st)
{
	const struct bpf_map *cache = p->skel->maps.frame_cache;

	if (p->unwinder)
		unwinder__stats(p->unwinder, st);
	else
		*st = (struct unwinder_stats){ 0 };
	if (p->unwinder)
		st->cache_bytes = (size_t)bpf_map__max_entries(cache) *
				  bpf_map__value_size(cache);
}

void probes__set_translate(struct probes *p,
			   uint64_t (*translate)(void *ctx, pid_t pid,
						 uint64_t pc),
			   void *ctx)
{
	p->translate = translate;
	p->translate_ctx = ctx;
}

int probes__read_stacks(struct probes *p, const struct snapshot *snap,
			struct stacktab *tab)
{
	const struct snapshot_entry *e = snapshot__entries(snap);
	int fd = bpf_map__fd(p->skel->maps.stacks);
	struct sp_stack *stack = p->stack_buf;

	for (size_t i = 0; i < snapshot__count(snap); i++) {
		const uint64_t *frames;
		enum stacktab_end end;
		uint64_t id = e[i].key.stack_id;
		uint32_t n;
		int err;

		if (!id || !stacktab__get(tab, id, &frames, &n, &end))
			continue;
		if (bpf_map_lookup_elem(fd, &id, stack))
			continue;	/* lost: the map was full (counted) */
		n = stack->n < p->stack_depth ? stack->n : p->stack_depth;
		for (uint32_t k = 0; p->translate && k < n; k++)
			stack->pcs[k] = p->translate(p->translate_ctx,
						     (pid_t)e[i].key.pid,
						     stack->pcs[k]);
		err = stacktab__add(tab, id, (const uint64_t *)stack->pcs, n,
				    (enum stacktab_end)stack->end);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Reads the whole map into p->keys/values: in batches of 4096 (one
 * syscall each, where one per row took ~1 us here), else row by row.
 * Returns the rows read.
 */
static size_t probes__read_map(struct probes *p, int fd)
{
	__u32 batch_out = 0, n;
	size_t got = 0;
	void *in = NULL;
	int err;

	do {
		n = p->map_size - (__u32)got < 4096 ? p->map_size - (__u32)got
						    : 4096;
		if (!n)
			break;
		err = bpf_map_lookup_batch(fd, in, &batch_out, p->keys + got,
					   p->values + got, &n, NULL);
		if (err && errno != ENOENT) {
			if (got || errno != EINVAL)
				return got;
			break;	/* no batches: row by row */
		}
		got += n;
		in = &batch_out;
	} while (!err);
	if (in)
		return got;
	struct sp_key *prev = NULL;

	while (got < p->map_size &&
	       !bpf_map_get_next_key(fd, prev, &p->keys[got])) {
		prev = &p->keys[got];
		if (!bpf_map_lookup_elem(fd, prev, &p->values[got]))
			got++;
	}
	return got;
}

static int cmp_tid(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* --hold's rows of the dead threads (sorted TIDs), into the fold. */
static int probes__fold_holds(struct probes *p, const __u32 *dead,
			      size_t n_dead)
{
	int fd = bpf_map__fd(p->skel->maps.hold_stats);
	struct sp_key prev, next;
	bool started = false;
	struct sp_value row;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, started ? &prev : NULL, &next)) {
		/* A deleted key's successor is the next one after prev. */
		if (bsearch(&next.tid, dead, n_dead, sizeof(*dead), cmp_tid) &&
		    !bpf_map_lookup_and_delete_elem(fd, &next, &row)) {
			err = fold__add_hold(p->fold, &next, &row, p->window);
			continue;
		}
		prev = next;
		started = true;
	}
	return err;
}

/* A thread and its process: TIDs are unique machine-wide. */
struct tid_pid {
	__u32 tid;
	__u32 pid;
};

/*
 * Whether a thread has exited while its process lives on: a process
 * that has exited keeps its threads' rows (the last report shows them).
 */
static bool probes__thread_gone(const struct probes *p, pid_t pid, pid_t tid)
{
	char path[32];

	if (!pid)
		pid = p->tgid;
	if (probes__thread_alive_in(pid, tid))
		return false;
	if (pid == p->tgid && !p->several)
		return true;	/* the caller checked the process lives */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return !access(path, F_OK);
}

/*
 * Takes the rows of the threads that have exited out of the map and
 * into the fold, recording their moves in snap; marks them in gone[].
 * Only while the target lives: the last report keeps every thread.
 */
static int probes__fold_exited(struct probes *p, int fd, size_t n,
			       bool *gone, struct snapshot *snap)
{
	int hist_fd = bpf_map__fd(p->skel->maps.hists);
	struct tid_pid *tids = malloc((n ? n : 1) * sizeof(*tids));
	size_t n_tids = 0, n_dead = 0;
	struct sp_hist hist;
	__u32 *dead;
	int err = 0;

	if (!tids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tids[n_tids++] = (struct tid_pid){ p->keys[i].tid,
						   p->keys[i].pid };
	qsort(tids, n_tids, sizeof(*tids), cmp_tid);
	dead = (__u32 *)tids;	/* reused in place: dead TIDs, sorted */
	for (size_t i = 0; i < n_tids; i++) {
		struct tid_pid t = tids[i];

		if (i && t.tid == tids[i - 1].tid)
			continue;
		if (t.tid && probes__thread_gone(p, (pid_t)t.pid, (pid_t)t.tid))
			dead[n_dead++] = t.tid;
	}
	for (size_t i = 0; i < n_dead; i++)
		fold__thread_exited(p->fold);
	for (size_t i = 0; i < n && n_dead && !err; i++) {
		struct sp_value last;

		if (!bsearch(&p->keys[i].tid, dead, n_dead, sizeof(*dead), cmp_tid))
			continue;
		/* Its last value, and out: nothing can add to it after. */
		if (bpf_map_lookup_and_delete_elem(fd, &p->keys[i], &last))
			continue;
		gone[i] = true;
		err = fold__add(p->fold, &p->keys[i], &last, p->window, snap);
		if (!err && !bpf_map_lookup_and_delete_elem(hist_fd,
							    &p->keys[i], &hist))
			err = fold__add_hist(p->fold, &p->keys[i], &hist);
	}
	if (!err && n_dead && p->hold)
		err = probes__fold_holds(p, dead, n_dead);
	free(tids);
	return err;
}

/* Whether any thread of the target still runs. */
static bool probes__target_alive(const struct probes *p)
{
	char path[64];

	/* Several: each thread's own process is checked (thread_gone). */
	if (p->several)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->tgid);
	return !access(path, F_OK) && (probes__thread_alive(p, p->tgid) ||
				       probes__live_thread(p, p->tgid));
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sp_key));
}

/* Side-map rows per lookup_batch call. */
#define SIDE_BATCH 1024

/*
 * A side map's rows, whole, in batches of SIDE_BATCH (one syscall each;
 * row by row took three per row: the next key, its value, and whether
 * the stats map still has it).  0, -EOPNOTSUPP when the kernel has no
 * batches or a batch failed part way (nothing is kept: the caller reads
 * row by row), or -ENOMEM.
 */
static int probes__batch_side(int fd, size_t vsize, struct sp_key **keys,
			      void **values, size_t *count)
{
	size_t cap_k = 0, cap_v = 0, got = 0;
	__u32 batch_out = 0, n;
	void *in = NULL;
	int ret;

	*keys = NULL;
	*values = NULL;
	do {
		if (array__grow(keys, &cap_k, got + SIDE_BATCH, sizeof(**keys)) ||
		    array__grow(values, &cap_v, got + SIDE_BATCH, vsize))
			return -ENOMEM;
		n = SIDE_BATCH;
		ret = bpf_map_lookup_batch(fd, in, &batch_out, *keys + got,
					   (char *)*values + got * vsize, &n, NULL);
		if (ret && errno != ENOENT)
			return -EOPNOTSUPP;
		got += n;
		in = &batch_out;
	} while (!ret);
	*count = got;
	return 0;
}

/*
 * Adds the rows of a map beside the stats map (the histograms, --hold's
 * holds) to snap: under their own key while the stats map has the row,
 * else under the key the fold keeps an exited thread's row under.  live:
 * the stats map's keys as read (sorted), so that only a row that came
 * after them asks the kernel.
 */
static int probes__read_side(struct probes *p, int side_fd, int stats_fd,
			     const struct sp_key *live, size_t n_live,
			     struct snapshot *snap, uint64_t closing)
{
	bool hist = side_fd == bpf_map__fd(p->skel->maps.hists);
	size_t vsize = hist ? sizeof(struct sp_hist) : sizeof(struct sp_value);
	struct sp_key key, next, *prev = NULL, *keys = NULL;
	void *values = NULL;
	struct sp_value row;
	size_t n = 0;
	int err = probes__batch_side(side_fd, vsize, &keys, &values, &n);

	for (size_t i = 0; !err && i < n; i++) {
		struct sp_key at = keys[i];
		void *v = (char *)values + i * vsize;

		if (!bsearch(&keys[i], live, n_live, sizeof(*live), cmp_key) &&
		    bpf_map_lookup_elem(stats_fd, &keys[i], &row))
			at = fold__key(p->fold, &keys[i]);
		err = hist ? snapshot__add_hist(snap, &at, v)
			   : snapshot__add_hold(snap, &at, v, 1, closing);
	}
	free(keys);
	free(values);
	if (err != -EOPNOTSUPP)
		return err;
	err = 0;
	while (!err && !bpf_map_get_next_key(side_fd, prev, &next)) {
		struct sp_key at = next;
		struct sp_hist h;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(stats_fd, &key, &row))
			at = fold__key(p->fold, &key);
		if (hist) {
			if (!bpf_map_lookup_elem(side_fd, &key, &h))
				err = snapshot__add_hist(snap, &at, &h);
		} else if (!bpf_map_lookup_elem(side_fd, &key, &row)) {
			err = snapshot__add_hold(snap, &at, &row, 1, closing);
		}
	}
	return err;
}

int probes__read(struct probes *p, struct snapshot **out)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	int hist_fd = bpf_map__fd(p->skel->maps.hists);
	int hold_fd = bpf_map__fd(p->skel->maps.hold_stats);
	uint64_t closing = p->window;
	struct snapshot *snap;
	bool *gone = NULL;
	size_t n, live = 0;
	int err;

	/* Calls ending from now on count toward the next window's max. */
	p->skel->bss->window = ++p->window;
	err = snapshot__new(&snap);
	if (err)
		return err;
	n = probes__read_map(p, fd);
	gone = calloc(n ? n : 1, sizeof(*gone));
	if (!gone) {
		err = -ENOMEM;
		goto fail;
	}
	if (probes__target_alive(p)) {
		err = probes__fold_exited(p, fd, n, gone, snap);
		if (err)
			goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		if (gone[i])
			continue;
		err = snapshot__add(snap, &p->keys[i], &p->values[i], 1, closing);
		if (err)
			goto fail;
		/* The rows still in the map, for the side maps' lookups. */
		p->keys[live++] = p->keys[i];
	}
	qsort(p->keys, live, sizeof(*p->keys), cmp_key);
	err = fold__into(p->fold, snap, closing);
	if (!err)
		err = probes__read_side(p, hist_fd, fd, p->keys, live, snap,
					closing);
	if (!err && p->hold)
		err = probes__read_side(p, hold_fd, fd, p->keys, live, snap,
					closing);
	if (err)
		goto fail;
	snapshot__set_threads_exited(snap, fold__threads(p->fold));
	snapshot__seal(snap);
	free(gone);
	*out = snap;
	return 0;
fail:
	free(gone);
	snapshot__free(snap);
	return err;
}

int probes__read_blame(struct probes *p, struct snapshot **out)
{
	struct snapshot *snap;
	struct sp_key key, next;
	struct sp_key *prev = NULL;
	int fd = bpf_map__fd(p->skel->maps.blame);
	int err = snapshot__new(&snap);

	if (err)
		return err;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, p->values))
			continue;
		err = snapshot__add(snap, &key, p->values, 1,
				    p->window - 1);
		if (err) {
			snapshot__free(snap);
			return err;
		}
	}
	snapshot__seal(snap);
	*out = snap;
	return 0;
}

int probes__read_waiting(struct probes *p, uint64_t now_ns,
			 struct snapshot **out)
{
	bool contended = p->mode == PROBES_CONTENDED;
	struct bpf_map *map = contended ? p->skel->maps.contended
					: p->skel->maps.inflight;
	struct snapshot *snap;
	int err = snapshot__new(&snap);

	if (!err && !p->several)
		err = waiting__read(bpf_map__fd(map), contended, p->tgid,
				    now_ns, snap);
	for (size_t i = 0; !err && p->several && i < p->n_pids; i++)
		err = waiting__read(bpf_map__fd(map), contended, p->pids[i],
				    now_ns, snap);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	snapshot__seal(snap);
	*out = snap;
	return 0;
}

static uint64_t probes__counter(struct probes *p, __u32 which)
{
	int fd = bpf_map__fd(p->skel->maps.counters);
	uint64_t total = 0;

	if (bpf_map_lookup_elem(fd, &which, p->counter_values))
		return 0;
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		total += p->counter_values[cpu];
	return total;
}

/*
 * Runs the kernel skipped because another BPF program was running on the
 * same CPU (a preempted tracepoint program holds the CPU's slot): each is
 * a wait or a wake not seen.  sched: the scheduler programs' (--states),
 * which fire for every task on the machine, so nearly all of theirs are
 * other processes' events; a target's shows as a gap in its thread's
 * events (probes__sched_missed).
 */
static uint64_t probes__recursion_misses(struct probes *p, bool sched)
{
	struct bpf_program *prog;
	uint64_t total = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (probes__is_sched_prog(p, prog) != sched)
			continue;
		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			total += info.recursion_misses;
	}
	return total;
}

uint64_t probes__window(const struct probes *p)
{
	return p->window;
}

void probes__bpf_time(struct probes *p, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_program *prog;

	*run_ns = *runs = 0;
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
			*run_ns += info.run_time_ns;
			*runs += info.run_cnt;
		}
	}
}

void probes__drops(struct probes *p, struct probes_drops *out)
{
	*out = (struct probes_drops){ 0 };
	if (!p)
		return;
	/* The stats map's rows, or --states' threads map's. */
	out->map_full = probes__counter(p, SP_CNT_DROPPED_STATS) +
			probes__counter(p, SP_CNT_DROPPED_THREADS);
	out->no_storage = probes__counter(p, SP_CNT_DROPPED_INFLIGHT);
	out->nested = probes__counter(p, SP_CNT_DROPPED_NESTED);
	out->skipped = probes__recursion_misses(p, false);
	out->ring = probes__counter(p, SP_CNT_DROPPED_RING);
}

uint64_t probes__dropped(struct probes *p)
{
	struct probes_drops d;

	probes__drops(p, &d);
	return d.map_full + d.no_storage + d.nested + d.skipped + d.ring;
}

uint64_t probes__sched_missed(struct probes *p)
{
	return p->states ? probes__counter(p, SP_CNT_SCHED_GAPS) : 0;
}

uint64_t probes__ring_dropped(struct probes *p)
{
	return probes__counter(p, SP_CNT_DROPPED_RING);
}

int probes__record_ring_fd(const struct probes *p)
{
	return p->recording ? bpf_map__fd(p->skel->maps.record_ring) : -1;
}

int probes__record_lost_fd(const struct probes *p)
{
	return p->recording ? bpf_map__fd(p->skel->maps.record_lost) : -1;
}

uint64_t probes__abandoned(struct probes *p)
{
	if (!p)
		return 0;
	return probes__counter(p, SP_CNT_ABANDONED);
}

uint64_t probes__unwind_stopped(struct probes *p)
{
	if (!p)
		return 0;
	return probes__counter(p, SP_CNT_UNWIND_STOPPED) +
	       probes__counter(p, SP_CNT_UNWIND_DEEP);
}

void probes__wait_timing(struct probes *p, uint64_t *bpf_ns, uint64_t *waits)
{
	*bpf_ns = probes__counter(p, SP_CNT_WAIT_BPF_NS);
	*waits = probes__counter(p, SP_CNT_WAITS);
}

void probes__stack_counts(struct probes *p, struct probes_stack_counts *c)
{
	c->stopped = probes__counter(p, SP_CNT_STACK_STOPPED);
	c->anon = probes__counter(p, SP_CNT_STACK_ANON);
	c->stale = probes__counter(p, SP_CNT_STACK_STALE);
	c->lost = probes__counter(p, SP_CNT_STACK_LOST);
	c->misses = probes__counter(p, SP_CNT_FRAME_MISS);
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
	bpf_link__destroy(p->exit_link);
	bpf_link__destroy(p->fork_link);
	bpf_link__destroy(p->proc_exit_link);
	free(p->proc_events);
	free(p->taken);
	free(p->pids);
	probes__destroy_links(p->retired, p->n_retired);
	free(p->retired);
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
	unwinder__free(p->unwinder);
	syncprof_bpf__destroy(p->skel);
	free(p->stack_buf);
	free(p->keys);
	free(p->values);
	free(p->counter_values);
	fold__free(p->fold);
	free(p);
}
