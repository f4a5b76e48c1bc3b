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
 * (The tables are in probesimpl.h: the loader sizes its state by them.)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "elfimage.h"
#include "targetfile.h"
#include "log.h"
#include "probesimpl.h"
#include "probesite.h"
#include "syncprof.skel.h"
#include "uprobemulti.h"

/* Bytes of a function decoded to place its probe (more is not needed). */
#define PROBESITE_CODE_MAX 4096

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

/*
 * Perf-event uprobes, one pair per function, through the anchor thread:
 * kernels without uprobe_multi, and after the main thread exited.  Return
 * probes first: a call entering between the two would leave a call in
 * flight that no return pops.  (Attaching from parallel threads was
 * slower here: 0.8-1.0 s against 0.15-0.6 s.)
 */
static int probes__attach_perf_into(struct probes *p, pid_t pid,
				    const char *library, const size_t *index,
				    const uint64_t *offsets,
				    const uint64_t *cookies, size_t n,
				    struct bpf_link *out[N_PROBES][2])
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
				prog, pid, library, offsets[i], &opts);

			if (!link) {
				int err = -errno;

				pr_err("cannot attach a uprobe to %s in %s: %s",
				       probe_table[index[i]].func, library,
				       strerror(-err));
				return err;
			}
			out[index[i]][ret] = link;
		}
	}
	return 0;
}

static int probes__attach_perf(struct probes *p, const char *library,
			       const size_t *index, const uint64_t *offsets,
			       const uint64_t *cookies, size_t n)
{
	return probes__attach_perf_into(p, probes__probe_pid(p, false), library,
					index, offsets, cookies, n, p->links);
}

int probes__attach_guard(struct probes *p, pid_t tid,
			 struct bpf_link *out[N_PROBES][2])
{
	uint64_t cookies[N_PROBES];

	for (size_t i = 0; i < p->n_sites; i++)
		cookies[i] = p->site_cookie[i] | SP_COOKIE_GUARD;
	return probes__attach_perf_into(p, tid, p->library, p->site_index,
					p->site_offset, cookies, p->n_sites,
					out);
}

/* Return probes first, as above; with uprobe_multi, one link each. */
int probes__attach_sites(struct probes *p, const char *library,
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

/* Closes the descriptor behind a probes__keep_file path, and frees it. */
void probes__forget_file(char **kept)
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
	int fd, err = targetfile__open(path, 0, &fd);

	if (err)
		return err;
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
int probes__attach_table(struct probes *p, const char *library,
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
	err = targetfile__open(library, 0, &fd);
	if (err) {
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
		/* Every try function of the table has "_try" in its name. */
		cookies[n] = SP_COOKIE(spec->class, site.kind) |
			     (site.rehit ? SP_COOKIE_REHIT : 0) |
			     (strstr(spec->func, "_try") ? SP_COOKIE_TRY : 0);
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
int probes__attach_releases(struct probes *p, const char *library)
{
	return probes__attach_release_set(p, library, PROBES_SET_ALL);
}

/* Whether release_table[i] is in the set. */
static bool probes__in_set(const struct probe_spec *spec, enum probes_set set)
{
	return set == PROBES_SET_ALL ||
	       spec->switched == (set == PROBES_SET_SWITCHED);
}

int probes__attach_release_set(struct probes *p, const char *library,
			       enum probes_set set)
{
	uint64_t offsets[N_RELEASES], cookies[N_RELEASES];
	size_t index[N_RELEASES], n = 0;
	struct elfimage *image;
	int err = elfimage__open(library, &image);
	int fd;

	if (err)
		return err;
	err = targetfile__open(library, 0, &fd);
	if (err) {
		elfimage__close(image);
		return err;
	}
	for (size_t i = 0; i < N_RELEASES && !err; i++) {
		const struct probe_spec *spec = &release_table[i];
		struct elfimage_func func;
		struct probes_site site;

		if (!probes__in_set(spec, set))
			continue;
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
		int *link = set == PROBES_SET_KEPT ? &p->release_kept_link
						   : &p->release_multi_link;

		*link = uprobemulti__attach(
			bpf_program__fd(p->skel->progs.unlock_enter), library,
			offsets, cookies, (uint32_t)n, false,
			probes__probe_pid(p, true));
		if (*link < 0)
			pr_err("cannot attach uprobes to the release functions "
			       "of %s: %s", library, strerror(-*link));
		return *link < 0 ? *link : 0;
	}
	if (set != PROBES_SET_ALL)
		return -EOPNOTSUPP;	/* --duty: uprobe_multi links only */
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
void probes__destroy_links(struct bpf_link **links, size_t n)
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
	struct elfimage_func func, r_debug;
	struct elfimage *image;
	int err = elfimage__open(loader, &image);

	if (err)
		return err;
	err = elfimage__find_func(image, "_dl_debug_state", &func);
	/* Without _r_debug every call is told (modwatch.bpf.c). */
	if (!err && !elfimage__find_object(image, "_r_debug", &r_debug) &&
	    r_debug.size >= 32) {
		p->skel->bss->loader_debug_state = func.vaddr;
		p->skel->bss->loader_r_debug = r_debug.vaddr;
	}
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
