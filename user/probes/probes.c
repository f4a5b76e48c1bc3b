// SPDX-License-Identifier: GPL-2.0
/*
 * Full mode's probes are one table: each pthread function with the class
 * passed to the BPF programs as the attach cookie.  Symbols are resolved
 * here (elfimage), not by libbpf, because libc holds several versions of
 * some names (pthread_cond_wait@GLIBC_2.2.5 is the pre-2.3.2 condvar) and
 * only the default version is the one programs call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "elfimage.h"
#include "hostcheck.h"
#include "log.h"
#include "probes.h"
#include "probesite.h"
#include "syncprof.skel.h"
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
};

#define N_PROBES (sizeof(probe_table) / sizeof(probe_table[0]))

/*
 * Full mode with --hold or --blame: entry probes on the functions that
 * let a lock go (unlock_enter, see bpf/hold.bpf.c).
 */
static const struct probe_spec release_table[] = {
	{ "pthread_mutex_unlock", SP_CLASS_UNLOCK, true },
	{ "pthread_cond_signal", SP_CLASS_SIGNAL, true },
	{ "pthread_cond_broadcast", SP_CLASS_SIGNAL, true },
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
	struct sp_value *values;	/* ncpus slots for one read */
	uint64_t *counter_values;	/* ncpus slots for one counter */
	struct bpf_link *links[N_PROBES][2];
	enum sp_site_kind kinds[N_PROBES];
	struct bpf_link *tracepoint_links[N_TRACEPOINTS];
	bool states;
	struct bpf_link *sched_links[N_SCHED_TRACEPOINTS];
	struct bpf_link *loader_link;
	struct bpf_link *exec_link;
	struct bpf_link *release_link;	/* --blame, contended: sched_waking */
	struct bpf_link *release_links[N_RELEASES];	/* full: unlocks */
	bool releases;			/* full mode: attach release_table */
	bool hold;
	struct ring_buffer *module_events;
	int n_module_events;
	struct unwinder *unwinder;	/* NULL: no walk through modules */
	unsigned int stack_depth;
	void *stack_buf;		/* one stacks map value */
};

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
	       !skiplist__empty(cfg->skip);
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
	return false;
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
	};
	struct cfitable_range lll = { 0, 0 };
	unsigned int depth = cfg->stack_depth;
	size_t n_funcs = 0;
	int err;

	err = probes__configure_states(p, cfg);
	if (err)
		return err;
	for (size_t i = 0; i < 2; i++)
		bpf_program__set_autoload(full[i], !contended);
	bpf_program__set_autoload(p->skel->progs.release_wakes,
				  contended && cfg->blame);
	p->releases = !contended && (cfg->blame || cfg->hold);
	p->hold = !contended && cfg->hold;
	bpf_program__set_autoload(p->skel->progs.unlock_enter, p->releases);
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
	bpf_program__set_autoload(p->skel->progs.target_exec,
				  cfg->follow_exec && probes__wants_unwinder(cfg));
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
		.libc_path = cfg->libc_path,
		.skip = cfg->skip,
	};
	int err = unwinder__new(&ucfg, &p->unwinder);

	if (!err)
		err = probes__sync_modules(p);
	return err < 0 ? err : 0;
}

int probes__new(const struct probes_config *cfg, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->tgid = cfg->tgid;
	p->mode = cfg->mode;
	p->stack_depth = cfg->stack_depth > SP_STACK_MAX_DEPTH ?
			 SP_STACK_MAX_DEPTH : cfg->stack_depth;
	p->states = cfg->states;
	p->probe_at_entry = cfg->probe_at_entry;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto fail;
	}
	p->values = calloc((size_t)p->ncpus, sizeof(*p->values));
	p->counter_values = calloc((size_t)p->ncpus, sizeof(*p->counter_values));
	p->stack_buf = calloc(1, sizeof(struct sp_stack));
	if (!p->values || !p->counter_values || !p->stack_buf) {
		err = -ENOMEM;
		goto fail;
	}
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
	err = bpf_map__set_max_entries(p->skel->maps.stats, cfg->map_size);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.hists, cfg->map_size);
	if (!err)
		err = probes__configure(p, cfg);
	if (err)
		goto fail;
	err = syncprof_bpf__load(p->skel);
	if (err) {
		pr_err("cannot load the BPF programs: %s (run with -vv for "
		       "the verifier's log)", strerror(-err));
		goto fail;
	}
	if (p->mode == PROBES_CONTENDED) {
		err = probes__fill_funcs(p, cfg->libc);
		if (err) {
			pr_err("cannot fill the lock function table: %s",
			       strerror(-err));
			goto fail;
		}
	}
	if (probes__wants_unwinder(cfg)) {
		err = probes__start_unwinder(p, cfg);
		if (err) {
			pr_err("cannot load the unwind tables: %s", strerror(-err));
			goto fail;
		}
	}
	*out = p;
	return 0;
fail:
	probes__free(p);
	return err;
}

static int probes__attach_one(struct probes *p, const char *library,
			      size_t index, uint64_t offset, enum sp_site_kind kind)
{
	const struct probe_spec *spec = &probe_table[index];

	/*
	 * Return probe first: a call entering between the two attaches would
	 * leave in-flight state that no return clears.
	 */
	for (int ret = 1; ret >= 0; ret--) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts,
			    .bpf_cookie = SP_COOKIE(spec->class, kind),
			    .retprobe = ret);
		struct bpf_program *prog = ret ? p->skel->progs.lock_return
					       : p->skel->progs.lock_enter;
		struct bpf_link *link = bpf_program__attach_uprobe_opts(
			prog, p->tgid, library, offset, &opts);

		if (!link) {
			int err = -errno;

			pr_err("cannot attach a uprobe to %s in %s: %s",
			       spec->func, library, strerror(-err));
			return err;
		}
		p->links[index][ret] = link;
	}
	p->kinds[index] = kind;
	return 0;
}

enum sp_site_kind probes__site_kind(const struct probes *p, const char *name)
{
	for (size_t i = 0; i < N_PROBES; i++)
		if (!strcmp(probe_table[i].func, name))
			return p->kinds[i];
	return SP_SITE_STEPPED;
}

/*
 * The cheapest safe site in the function (see probesite.c), as a file
 * offset, and how the kernel will run the instruction there.
 */
static uint64_t probes__site(struct probes *p, int fd, const char *name,
			     const struct elfimage_func *func,
			     enum sp_site_kind *kind)
{
	uint8_t code[PROBESITE_CODE_MAX];
	size_t want = func->size && func->size < sizeof(code) ? func->size
							      : sizeof(code);
	struct probesite site;
	ssize_t got;

	*kind = SP_SITE_STEPPED;
	got = pread(fd, code, want, (off_t)func->file_offset);
	if (got <= 0 || probesite__find(code, (size_t)got, func->vaddr, &site))
		return func->file_offset;
	if (site.entry_emulated)
		*kind = SP_SITE_EMULATED;
	if (p->probe_at_entry)
		return func->file_offset;
	/* Branches into a prefix are checked only within what was decoded. */
	if (site.offset && (!func->size || func->size > (uint64_t)got)) {
		pr_debug("%s: larger than %zu bytes, probed at entry", name,
			 sizeof(code));
		return func->file_offset;
	}
	*kind = site.emulated ? SP_SITE_EMULATED : SP_SITE_STEPPED;
	pr_debug("%s: probe at +0x%lx (%s)%s", name, (unsigned long)site.offset,
		 site.insn, site.emulated ? "" : ", single-stepped");
	return func->file_offset + site.offset;
}

/* Attaches the table's functions named `only` (NULL: all of them). */
static int probes__attach_table(struct probes *p, const char *library,
				const char *only)
{
	struct elfimage *image;
	int err = elfimage__open(library, &image);
	int fd;

	if (err) {
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
		enum sp_site_kind kind;
		uint64_t offset = probes__site(p, fd, spec->func, &func, &kind);

		err = probes__attach_one(p, library, i, offset, kind);
		if (err)
			break;
	}
	close(fd);
	elfimage__close(image);
	return err;
}

/* --hold, --blame: entry probes on the release functions of library. */
static int probes__attach_releases(struct probes *p, const char *library)
{
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
		enum sp_site_kind kind;
		uint64_t offset;

		err = elfimage__find_func(image, spec->func, &func);
		if (err) {
			pr_err("%s has no %s; is it a glibc libc?", library,
			       spec->func);
			break;
		}
		offset = probes__site(p, fd, spec->func, &func, &kind);
		LIBBPF_OPTS(bpf_uprobe_opts, opts,
			    .bpf_cookie = SP_COOKIE(spec->class, kind));
		p->release_links[i] = bpf_program__attach_uprobe_opts(
			p->skel->progs.unlock_enter, p->tgid, library, offset,
			&opts);
		if (!p->release_links[i]) {
			err = -errno;
			pr_err("cannot attach a uprobe to %s in %s: %s",
			       spec->func, library, strerror(-err));
		}
	}
	close(fd);
	elfimage__close(image);
	return err;
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

int probes__attach(struct probes *p, const char *library)
{
	int err = probes__attach_exec(p);

	if (err)
		return err;
	if (p->mode == PROBES_CONTENDED)
		return probes__attach_tracepoints(p);
	/* Releases first: a hold begun with no unlock probe would not end. */
	err = p->releases ? probes__attach_releases(p, library) : 0;
	return err ? err : probes__attach_table(p, library, NULL);
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
			    const char *name)
{
	return probes__attach_table(p, library, name);
}

static int probes__count_event(void *ctx, void *data, size_t size)
{
	struct probes *p = ctx;

	p->n_module_events++;
	return 0;
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
	p->module_events = ring_buffer__new(bpf_map__fd(p->skel->maps.module_events),
					    probes__count_event, p, NULL);
	if (!p->module_events)
		return -errno;
	p->loader_link = bpf_program__attach_uprobe_opts(
		p->skel->progs.modules_changed, p->tgid, loader,
		func.file_offset, &opts);
	if (!p->loader_link)
		return -errno;
	return 0;
}

int probes__module_events_fd(struct probes *p)
{
	return p->module_events ? ring_buffer__epoll_fd(p->module_events) : -1;
}

int probes__consume_module_events(struct probes *p)
{
	int n;

	if (!p->module_events)
		return 0;
	p->n_module_events = 0;
	ring_buffer__consume(p->module_events);
	n = p->n_module_events;
	return n;
}

bool probes__unwinds(const struct probes *p)
{
	return p->unwinder != NULL;
}

int probes__sync_modules(struct probes *p)
{
	int changed;

	if (!p->unwinder)
		return 0;
	changed = unwinder__sync(p->unwinder, p->skel->bss->exec_seq);
	if (changed > 0) {
		/* Frame cache entries from before are misses from now on. */
		__sync_fetch_and_add(&p->skel->bss->unwind_gen, 1);
	}
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
		err = stacktab__add(tab, id, (const uint64_t *)stack->pcs, n,
				    (enum stacktab_end)stack->end);
		if (err)
			return err;
	}
	return 0;
}

int probes__read(struct probes *p, struct snapshot **out)
{
	struct snapshot *snap;
	struct sp_key key, next;
	struct sp_key *prev = NULL;
	int fd = bpf_map__fd(p->skel->maps.stats);
	int hist_fd = bpf_map__fd(p->skel->maps.hists);
	int hold_fd = bpf_map__fd(p->skel->maps.hold_stats);
	uint64_t closing = p->window;
	struct sp_hist hist;
	int err;

	/* Calls ending from now on count toward the next window's max. */
	p->skel->bss->window = ++p->window;
	err = snapshot__new(&snap);
	if (err)
		return err;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, p->values))
			continue;	/* cannot vanish: entries are never deleted */
		err = snapshot__add(snap, &key, p->values, p->ncpus, closing);
		if (!err && !bpf_map_lookup_elem(hist_fd, &key, &hist))
			err = snapshot__add_hist(snap, &key, &hist);
		if (!err && p->hold &&
		    !bpf_map_lookup_elem(hold_fd, &key, p->values))
			err = snapshot__add_hold(snap, &key, p->values,
						 p->ncpus, closing);
		if (err) {
			snapshot__free(snap);
			return err;
		}
	}
	snapshot__seal(snap);
	*out = snap;
	return 0;
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
		err = snapshot__add(snap, &key, p->values, p->ncpus,
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

	if (!err)
		err = waiting__read(bpf_map__fd(map), contended, p->tgid,
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

uint64_t probes__dropped(struct probes *p)
{
	return probes__counter(p, SP_CNT_DROPPED_STATS) +
	       probes__counter(p, SP_CNT_DROPPED_INFLIGHT) +
	       probes__counter(p, SP_CNT_DROPPED_RING) +
	       probes__counter(p, SP_CNT_DROPPED_THREADS) +
	       probes__recursion_misses(p, false);
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

uint64_t probes__unwind_stopped(struct probes *p)
{
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
 * Detaching costs ~90 ms per uprobe link on these machines (the kernel
 * unregisters them one at a time, each waiting for a grace period; from
 * parallel threads too), so syncprof prints its last report first.
 */
void probes__free(struct probes *p)
{
	if (!p)
		return;
	if (p->skel)
		probes__log_run_times(p);
	for (size_t i = 0; i < N_PROBES; i++) {
		bpf_link__destroy(p->links[i][0]);
		bpf_link__destroy(p->links[i][1]);
	}
	for (size_t i = 0; i < N_TRACEPOINTS; i++)
		bpf_link__destroy(p->tracepoint_links[i]);
	for (size_t i = 0; i < N_SCHED_TRACEPOINTS; i++)
		bpf_link__destroy(p->sched_links[i]);
	for (size_t i = 0; i < N_RELEASES; i++)
		bpf_link__destroy(p->release_links[i]);
	bpf_link__destroy(p->loader_link);
	bpf_link__destroy(p->exec_link);
	bpf_link__destroy(p->release_link);
	ring_buffer__free(p->module_events);
	unwinder__free(p->unwinder);
	syncprof_bpf__destroy(p->skel);
	free(p->stack_buf);
	free(p->values);
	free(p->counter_values);
	free(p);
}
