// SPDX-License-Identifier: GPL-2.0
/*
 * Following the target: the processes (several --pid, --children: the
 * targets map, their forks, execs and exits from the events ring), the
 * thread full mode's probes are attached through (attached again when it
 * exits), and the unwind tables of each process's modules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "clock.h"
#include "framecache.h"
#include "log.h"
#include "probesimpl.h"
#include "procmaps.h"
#include "syncprof.skel.h"
#include "uprobemulti.h"

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
	/* Its rows fold at the next read, told or found by a sweep. */
	if (p->several)
		probes__note_gone(p, pid, 0);
	if (p->unwinder)
		unwinder__forget(p->unwinder, pid);
	bpf_map_delete_elem(bpf_map__fd(p->skel->maps.proc_layouts), &key);
}

void probes__forget_rows(struct probes *p, const pid_t *pids, size_t n)
{
	if (!n || array__grow(&p->forget, &p->forget_cap, p->n_forget + n,
			      sizeof(*p->forget)))
		return;	/* without memory, their rows stay theirs */
	memcpy(p->forget + p->n_forget, pids, n * sizeof(*pids));
	p->n_forget += n;
}

/*
 * Several processes: their exits, and with --children their forks.  The
 * fork program is attached before the probes, so no child forked after
 * them escapes; children forked before are found in /proc (main.c).
 */
int probes__attach_follow(struct probes *p)
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

/*
 * The live thread of the target with the lowest TID other than `not`
 * (the oldest, short of TID wraparound: likely to live on), or 0.
 */
/* The same, none of the n threads in not[]. */
static pid_t probes__live_thread_but(const struct probes *p, const pid_t *not,
				     size_t n)
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
		bool left_out = false;

		for (size_t i = 0; i < n; i++)
			left_out |= tid == not[i];
		if (tid > 0 && !left_out && (!found || tid < found) &&
		    probes__thread_alive(p, tid))
			found = tid;
	}
	closedir(dir);
	return found;
}

pid_t probes__live_thread(const struct probes *p, pid_t not)
{
	return probes__live_thread_but(p, &not, 1);
}

/*
 * Whether full mode's breakpoints are still in the target's code, seen
 * through live thread tid: the byte at the first site differs from the
 * file's (the kernel writes its breakpoint there).  true when it cannot
 * tell.
 */
static bool probes__breakpoints_in(const struct probes *p, pid_t tid)
{
	const struct procmaps_entry *e = NULL;
	struct procmaps *maps = NULL;
	uint8_t in_file, in_memory;
	struct iovec local, remote;
	bool in = true;
	struct stat st;
	int fd;

	if (!p->n_sites || !p->library)
		return true;
	fd = atoi(p->library + strlen("/proc/self/fd/"));
	if (fstat(fd, &st) ||
	    pread(fd, &in_file, 1, (off_t)p->site_offset[0]) != 1 ||
	    procmaps__read(tid, &maps))
		return true;
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		e = procmaps__entry(maps, i);
		if (e->exec && e->inode == st.st_ino && e->dev == st.st_dev &&
		    p->site_offset[0] >= e->offset &&
		    p->site_offset[0] - e->offset < e->end - e->start)
			break;
		e = NULL;
	}
	if (e) {
		local = (struct iovec){ &in_memory, 1 };
		remote = (struct iovec){
			(void *)(uintptr_t)(e->start + p->site_offset[0] -
					    e->offset), 1 };
		in = process_vm_readv(tid, &local, 1, &remote, 1, 0) != 1 ||
		     in_memory != in_file;
	}
	procmaps__free(maps);
	return in;
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
 * Attaches full mode's probes and the loader watch through thread tid,
 * as the other generation (SP_COOKIE_GEN): they run nothing until all
 * are in place and probe_gen switches to them, and the old links, in
 * place until then, end the calls they began.  So a move neither loses
 * nor doubles a call (the old ones ran on meanwhile, or had gone with
 * their thread).  The old links are retired, not closed: closing one
 * takes ~0.25 s, and a call in flight still returns through it.
 */
static int probes__attach_through(struct probes *p, pid_t tid,
				  uint64_t *attached_ns)
{
	struct bpf_link *old[N_PROBES][2], *old_loader = p->loader_link;
	uint64_t cookies[N_PROBES];
	uint32_t gen = !p->gen;
	int err;

	memcpy(old, p->links, sizeof(old));
	memset(p->links, 0, sizeof(p->links));
	p->loader_link = NULL;
	p->anchor = tid;
	p->skel->bss->anchor_tid = (__u32)tid;
	for (size_t i = 0; i < p->n_sites; i++)
		cookies[i] = (p->site_cookie[i] & ~SP_COOKIE_GEN) |
			     (gen ? SP_COOKIE_GEN : 0);
	/* The old generation's multi links stay in place until the switch. */
	size_t n_old_multi = p->n_multi_links;
	int old_multi[sizeof(p->multi_links) / sizeof(p->multi_links[0])];

	memcpy(old_multi, p->multi_links, n_old_multi * sizeof(*old_multi));
	p->n_multi_links = 0;
	err = probes__attach_sites(p, p->library, p->site_index,
				   p->site_offset, cookies, p->n_sites);
	if (!err) {
		p->skel->bss->probe_gen = gen;
		p->gen = gen;
	}
	if (!err && p->releases) {
		struct bpf_link *old_releases[N_RELEASES];

		memcpy(old_releases, p->release_links, sizeof(old_releases));
		memset(p->release_links, 0, sizeof(p->release_links));
		if (p->release_multi_link >= 0)
			close(p->release_multi_link);
		p->release_multi_link = -1;
		/* --duty's kept releases: all of them are in the new link. */
		if (p->release_kept_link >= 0)
			close(p->release_kept_link);
		p->release_kept_link = -1;
		err = probes__attach_releases(p, p->library);
		for (size_t i = 0; i < N_RELEASES; i++)
			probes__retire(p, old_releases[i]);
	}
	*attached_ns = clock__monotonic_ns();
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
	for (size_t i = 0; i < n_old_multi; i++)
		if (array__grow(&p->retired_multi, &p->cap_retired_multi,
				p->n_retired_multi + 1,
				sizeof(*p->retired_multi)))
			close(old_multi[i]);
		else
			p->retired_multi[p->n_retired_multi++] = old_multi[i];
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
 * Guards, once main has exited and its uprobe_multi links run on: the
 * kernel takes a process's breakpoints out when a consumer of the same
 * functions goes (another tool's, or a thread's perf-event probes) and
 * no consumer left passes its filter for the process; the links through
 * the exited leader pass none.  A guard is the site table attached as
 * perf-event uprobes through a live thread (SP_COOKIE_GUARD: its programs
 * return at once), whose filter passes while that thread lives; with two,
 * through two threads, one guard's thread exiting leaves the other to
 * keep the breakpoints in, and a new guard is attached through another
 * thread as soon as thread_exit says so.  Returns how many guards stand.
 */
static int probes__keep_guards(struct probes *p)
{
	int standing = 0;

	for (int g = 0; g < PROBES_GUARDS; g++) {
		pid_t tid = p->guard_tid[g];

		if (tid && probes__thread_alive(p, tid)) {
			standing++;
			continue;
		}
		for (size_t i = 0; i < N_PROBES; i++)
			for (int ret = 0; ret < 2; ret++)
				probes__retire(p, p->guard_links[g][i][ret]);
		memset(p->guard_links[g], 0, sizeof(p->guard_links[g]));
		p->guard_tid[g] = 0;
		p->skel->bss->guard_tids[g] = 0;
		/* The oldest live thread that no other guard stands on. */
		pid_t taken[PROBES_GUARDS + 1] = { p->anchor };

		memcpy(taken + 1, p->guard_tid, sizeof(p->guard_tid));
		tid = probes__live_thread_but(p, taken, PROBES_GUARDS + 1);
		if (!tid)
			continue;
		if (probes__attach_guard(p, tid, p->guard_links[g])) {
			probes__destroy_links(&p->guard_links[g][0][0],
					      N_PROBES * 2);
			memset(p->guard_links[g], 0, sizeof(p->guard_links[g]));
			continue;
		}
		p->guard_tid[g] = tid;
		p->skel->bss->guard_tids[g] = (__u32)tid;
		standing++;
	}
	return standing;
}

/*
 * The kernel filters a uprobe by the memory of the task it was attached
 * through: a perf-event uprobe by its task's, a uprobe_multi link by its
 * process's group leader's.  Once that task has exited, its memory is
 * gone and no probe runs for the threads that go on (a pthread_exit in
 * main): the perf-event filter fails and the kernel takes the
 * breakpoints out; a uprobe_multi link keeps them in and, before Linux
 * 6.13, runs nothing (since, it runs on: then nothing moves, and guards
 * keep its breakpoints in, see probes__keep_guards).
 * A perf-event uprobe attached through any live thread of the process
 * runs for all of them, so the probes are attached again through one, as
 * soon as the anchor's exit is known (a BPF program on
 * sched_process_exit, or a check every second), and switched to by
 * generation (probes__attach_through: no call counted twice).  Calls in
 * between are not counted: the caller says how long that was (0.15-1.2 s
 * here: each perf-event registration can wait for a grace period).
 * Rejected: a second set of probes through a worker thread all along
 * (every call would run the programs twice), and links on the whole host
 * filtered in BPF (every process's lock calls would trap).
 */
pid_t probes__follow_threads(struct probes *p, uint64_t *gap_ns,
			     bool *stayed)
{
	uint64_t attached_ns;
	pid_t tid;
	int err;

	*gap_ns = 0;
	*stayed = false;
	/* Attached for every process: no thread to follow. */
	if (p->mode != PROBES_FULL || !p->library || p->several ||
	    probes__thread_alive(p, p->anchor))
		return 0;
	/*
	 * uprobe_multi links that run on for the other threads: nothing to
	 * move (their calls go on being counted), the guards keep their
	 * breakpoints in.  If they were taken out all the same (no guard
	 * stood: a thread for it came late), they move, as on older kernels.
	 */
	if (p->multi && p->anchor == p->tgid && uprobemulti__outlives_leader()) {
		tid = probes__live_thread(p, p->anchor);
		if (!tid)
			return 0;
		if (probes__breakpoints_in(p, tid)) {
			probes__keep_guards(p);
			*stayed = !p->anchor_gone_said;
			p->anchor_gone_said = true;
			return 0;
		}
		p->anchor_exit_ns = 0;	/* since they were taken out */
	}
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

const struct procmaps *probes__last_maps(const struct probes *p, pid_t pid)
{
	return p ? unwinder__last_maps(p->unwinder, pid) : NULL;
}

void probes__keep_maps(struct probes *p, bool keep)
{
	if (p && p->unwinder)
		unwinder__keep_maps(p->unwinder, keep);
}

struct procmaps *probes__take_maps(struct probes *p, pid_t pid)
{
	return p ? unwinder__take_maps(p->unwinder, pid) : NULL;
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
