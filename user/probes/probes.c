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
	struct ring_buffer *module_events;
	int n_module_events;
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

/* Only the mode's programs are loaded; contended mode's maps get sized. */
static int probes__configure(struct probes *p, const struct probes_config *cfg)
{
	bool contended = cfg->mode == PROBES_CONTENDED;
	struct bpf_program *full[] = {
		p->skel->progs.lock_enter, p->skel->progs.lock_return,
	};
	struct cfitable_range lll = { 0, 0 };
	size_t n_rows, n_funcs;
	int err;

	err = probes__configure_states(p, cfg);
	if (err)
		return err;
	for (size_t i = 0; i < 2; i++)
		bpf_program__set_autoload(full[i], !contended);
	for (size_t i = 0; i < N_TRACEPOINTS; i++)
		bpf_program__set_autoload(probes__tracepoint_prog(p, i),
			contended && hostcheck__syscall_tracepoint("/sys",
					tracepoint_table[i].name));
	if (!contended)
		return 0;
	libcmodel__rows(cfg->libc, &n_rows);
	libcmodel__funcs(cfg->libc, &n_funcs);
	libcmodel__lll_private(cfg->libc, &lll);
	err = bpf_map__set_max_entries(p->skel->maps.unwind_rows,
				       n_rows ? (__u32)n_rows : 1);
	if (!err)
		err = bpf_map__set_max_entries(p->skel->maps.libc_funcs,
					       n_funcs ? (__u32)n_funcs : 1);
	if (err)
		return err;
	p->skel->rodata->libc_bias = cfg->libc_place.bias;
	p->skel->rodata->libc_text_start = cfg->libc_place.text_start;
	p->skel->rodata->libc_text_end = cfg->libc_place.text_end;
	p->skel->rodata->unwind_nrows = (__u32)n_rows;
	p->skel->rodata->func_nrows = (__u32)n_funcs;
	p->skel->rodata->lll_private_start = lll.start;
	p->skel->rodata->lll_private_end = lll.end;
	p->skel->rodata->cond_signal_offset = cfg->cond_signal_offset;
	return 0;
}

/* Fills contended mode's tables after load. */
static int probes__fill_tables(struct probes *p, const struct libcmodel *libc)
{
	int rows_fd = bpf_map__fd(p->skel->maps.unwind_rows);
	int funcs_fd = bpf_map__fd(p->skel->maps.libc_funcs);
	const struct sp_unwind_row *rows;
	const struct sp_func_range *funcs;
	size_t n_rows, n_funcs;

	rows = libcmodel__rows(libc, &n_rows);
	funcs = libcmodel__funcs(libc, &n_funcs);
	for (__u32 i = 0; i < n_rows; i++)
		if (bpf_map_update_elem(rows_fd, &i, &rows[i], BPF_ANY))
			return -errno;
	for (__u32 i = 0; i < n_funcs; i++)
		if (bpf_map_update_elem(funcs_fd, &i, &funcs[i], BPF_ANY))
			return -errno;
	return 0;
}

int probes__new(const struct probes_config *cfg, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->tgid = cfg->tgid;
	p->mode = cfg->mode;
	p->states = cfg->states;
	p->probe_at_entry = cfg->probe_at_entry;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto fail;
	}
	p->values = calloc((size_t)p->ncpus, sizeof(*p->values));
	p->counter_values = calloc((size_t)p->ncpus, sizeof(*p->counter_values));
	if (!p->values || !p->counter_values) {
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
	for (int k = 0; k < SP_SITE__COUNT; k++)
		p->skel->rodata->calibration_ns[k] = cfg->calibration_ns[k];
	err = bpf_map__set_max_entries(p->skel->maps.stats, cfg->map_size);
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
		err = probes__fill_tables(p, cfg->libc);
		if (err) {
			pr_err("cannot fill the unwind tables: %s", strerror(-err));
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

static int probes__attach_tracepoints(struct probes *p)
{
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

int probes__attach(struct probes *p, const char *library)
{
	if (p->mode == PROBES_CONTENDED)
		return probes__attach_tracepoints(p);
	return probes__attach_table(p, library, NULL);
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

int probes__read(struct probes *p, struct snapshot **out)
{
	struct snapshot *snap;
	struct sp_key key, next;
	struct sp_key *prev = NULL;
	int fd = bpf_map__fd(p->skel->maps.stats);
	uint64_t closing = p->window;
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
		if (err) {
			snapshot__free(snap);
			return err;
		}
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
	bpf_link__destroy(p->loader_link);
	ring_buffer__free(p->module_events);
	syncprof_bpf__destroy(p->skel);
	free(p->values);
	free(p->counter_values);
	free(p);
}
