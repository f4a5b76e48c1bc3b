// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's windows on one lock.  First the hold phase: the lock's
 * holds timed for HOLD_PHASE_S, longer (up to HOLD_PHASE_MAX_S) until
 * WHATIFPLAN_MIN_HOLDS holds were seen (the lock return probes attached
 * for it only).  From it the plan (whatifplan.c): rounds of four
 * windows, reference, +25% of the mean hold, reference, +50% (the
 * delays' order swapped every other round), and a last reference, each
 * window long enough for enough progress and enough holds, and the
 * delay budget the rounds need.  Every delayed window has a reference
 * on each side (whatifmodel.c), and the last one shows the rate once
 * the delay is off.
 *
 * The delay is written into the programs' .bss between windows: no
 * attach or detach while the target runs, only two stores.
 *
 * The probes that time a hold sit inside it: the lock's return probe
 * reads the clock before the trap returns to the holder, the unlock's
 * probe after the trap in.  Their share of the mean hold is measured
 * once (empty_hold_ns): a forked child takes and drops a mutex of its
 * own under the same programs, EMPTY_SESSIONS times EMPTY_HOLDS, and
 * the median session's mean hold on a CPU is what an empty critical
 * section reads.  It is taken off the hold: the delays are fractions of
 * the target's own critical section, and the share of the time the lock
 * is held is its, not the probes'.  Where the probes cost more than a
 * critical section of a few microseconds, the measured hold was mostly
 * them and the delays were too long (a prediction too high by the
 * ratio).  A child whose libc is not the target's reads nothing: then
 * nothing is taken off, and the debug log says so.
 *
 * The hold phase also asks whether the lock can matter to the progress
 * at all (wakereach.c): the threads that held it, the threads that made
 * progress, and every wakeup among the experiment's processes.  Only with
 * --progress: the default progress, every lock call, is made by every
 * lock's holders.
 *
 * The hold phase times the lock's handoffs and its waiters' wake-ups
 * too (bpf/experiment/whatif.bpf.c): the sums, binned by the idle of the
 * CPU a waiter ran on, are read at its start and end like the holds
 * (their difference is the phase's), into a wakecurve (wakecurve.c).  The
 * phase is said on stderr at both ends ("timing the holds", "holds
 * timed"): a test holds the handoffs to the target's own in between.
 *
 * Several processes (--children, several --pid): every probe is attached
 * once per process, with its PID (not system-wide: other programs using
 * the same libc pay nothing, and a lock at the same address in one of
 * them is never delayed); the progress is summed over them, and their
 * CPUs read together.  A process forked during the experiment is not in
 * it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "array.h"
#include "clock.h"
#include "elfimage.h"
#include "experiment.h"
#include "log.h"
#include "sortorder.h"
#include "taskcpu.h"
#include "wakereach.h"
#include "whatifbpf.h"
#include "whatif.skel.h"

/* The kernel's ENOTSUPP: an instruction uprobes cannot step. */
#define ENOTSUPP_UPROBE	524

#define HOLD_PHASE_S	0.5
#define HOLD_PHASE_STEP_S	0.25
#define HOLD_PHASE_MAX_S	2.0
#define SETTLE_S	0.1
/* A thread that ran less than this share of the time adds no capacity. */
#define MIN_RUN_SHARE	0.02
/* The empty critical section: sessions of holds, the median's mean. */
#define EMPTY_SESSIONS	5
#define EMPTY_HOLDS	400
#define EMPTY_WAIT_MS	2000
/* The hold left once the probes' part is off, at least this share. */
#define MIN_HOLD_SHARE	0.05

static const char *const unlock_funcs[] = {
	"pthread_mutex_unlock", "pthread_rwlock_unlock", "pthread_spin_unlock",
};
static const char *const lock_funcs[] = {
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
	"pthread_spin_lock",
};

/* How a lock call's return says it holds the lock. */
enum held_by { HELD_ZERO, HELD_ALWAYS, HELD_TRUE };

/* PostgreSQL's lightweight locks, in the program's own file. */
static const char *const program_unlocks[] = { "LWLockRelease" };
static const struct {
	const char *name;
	enum held_by held;
} program_locks[] = {
	{ "LWLockAcquire", HELD_ALWAYS },
	{ "LWLockConditionalAcquire", HELD_TRUE },
	{ "LWLockAcquireOrWait", HELD_TRUE },
};

/* A lock function whose holds the hold phase times. */
struct hold_func {
	const char *path;
	uint64_t offset;
	enum held_by held;
	const char *name;
};

struct experiment {
	struct experiment_config cfg;
	struct whatif_bpf *skel;
	struct bpf_link **links;	/* for as long as the experiment */
	size_t n_links, cap_links;
	struct bpf_link **hold_links;	/* the hold phase's */
	size_t n_hold, cap_hold;
	struct hold_func holds[ARRAY_SIZE(lock_funcs) +
			       ARRAY_SIZE(program_locks)];
	size_t n_holds;
	uint64_t unlock_offset;		/* pthread_mutex_unlock's, in libc */
	uint64_t empty_ns;		/* the probes' part of a hold */
	bool empty_known;
	bool processes_kept;		/* all in the programs' map */
};

static int attach(struct bpf_program *prog, bool ret, pid_t pid,
		  const char *path, uint64_t offset, struct bpf_link ***links,
		  size_t *n, size_t *cap)
{
	struct bpf_link *link;
	int err;

	err = array__grow(links, cap, *n + 1, sizeof(**links));
	if (err)
		return err;
	link = bpf_program__attach_uprobe(prog, ret, pid, path, (size_t)offset);
	if (!link)
		return -errno;	/* -ENOTSUPP (524): an instruction uprobes refuse */
	(*links)[(*n)++] = link;
	return 0;
}

static void detach(struct bpf_link **links, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		bpf_link__destroy(links[i]);
	*n = 0;
}

static int attach_funcs(struct experiment *e, struct elfimage *libc,
			const char *path, struct bpf_program *prog,
			const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct elfimage_func f;
		int err = 0;

		if (elfimage__find_func(libc, names[i], &f)) {
			pr_debug("--what-if: no %s in %s", names[i], path);
			continue;	/* not in this libc: not used */
		}
		for (size_t p = 0; p < e->cfg.n_pids; p++) {
			err = attach(prog, false, e->cfg.pids[p],
				     path, f.file_offset,
				     &e->links, &e->n_links, &e->cap_links);
			/* Gone meanwhile: the others go on. */
			if (err == -ESRCH && e->cfg.n_pids > 1)
				err = 0;
			if (err)
				break;
		}
		/* Only pthread_mutex_unlock is a must. */
		if (err == -ENOTSUPP_UPROBE && i) {
			pr_debug("--what-if: cannot probe %s", names[i]);
			continue;
		}
		if (err) {
			pr_err("--what-if: cannot attach to %s in %s: %s",
			       names[i], path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* PostgreSQL's lightweight locks, when the program has them. */
static int program_locks_open(struct experiment *e)
{
	struct elfimage *image = NULL;
	struct elfimage_func f;
	int err;

	if (elfimage__open(e->cfg.program_path, &image))
		return 0;	/* not readable: its pthread locks only */
	if (elfimage__find_func(image, program_unlocks[0], &f)) {
		elfimage__close(image);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(program_locks); i++) {
		struct elfimage_func l;

		if (!elfimage__find_func(image, program_locks[i].name, &l))
			e->holds[e->n_holds++] = (struct hold_func){
				e->cfg.program_path, l.file_offset,
				program_locks[i].held, program_locks[i].name };
	}
	pr_debug("--what-if: %s has lightweight locks (%s)",
		 e->cfg.program_path, program_unlocks[0]);
	err = attach_funcs(e, image, e->cfg.program_path,
			   e->skel->progs.whatif_release, program_unlocks,
			   ARRAY_SIZE(program_unlocks));
	elfimage__close(image);
	return err;
}

int experiment__open(const struct experiment_config *cfg,
		     struct experiment **out)
{
	struct experiment *e = calloc(1, sizeof(*e));
	struct elfimage *libc = NULL;
	int err;

	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	e->skel = whatif_bpf__open_and_load();
	if (!e->skel) {
		err = -errno;
		pr_err("--what-if: cannot load its BPF programs: %s",
		       strerror(-err));
		goto fail;
	}
	e->skel->bss->budget_ns = 0;	/* each experiment sets its own */
	e->processes_kept = true;
	for (size_t p = 0; p < cfg->n_pids; p++) {
		uint32_t tgid = (uint32_t)cfg->pids[p];
		uint8_t one = 1;

		if (bpf_map__update_elem(e->skel->maps.processes, &tgid,
					 sizeof(tgid), &one, sizeof(one),
					 BPF_ANY))
			e->processes_kept = false;
	}
	err = elfimage__open(cfg->libc_path, &libc);
	if (err) {
		pr_err("--what-if: cannot read %s: %s", cfg->libc_path,
		       strerror(-err));
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(lock_funcs); i++) {
		struct elfimage_func f;

		if (elfimage__find_func(libc, lock_funcs[i], &f))
			continue;
		e->holds[e->n_holds++] = (struct hold_func){
			cfg->libc_path, f.file_offset, HELD_ZERO,
			lock_funcs[i] };
	}
	{
		struct elfimage_func f;

		if (!elfimage__find_func(libc, unlock_funcs[0], &f))
			e->unlock_offset = f.file_offset;
	}
	err = attach_funcs(e, libc, cfg->libc_path,
			   e->skel->progs.whatif_release, unlock_funcs,
			   ARRAY_SIZE(unlock_funcs));
	if (!err && !cfg->progress_path)
		err = attach_funcs(e, libc, cfg->libc_path,
				   e->skel->progs.whatif_acquire, lock_funcs,
				   ARRAY_SIZE(lock_funcs));
	if (!err && cfg->program_path)
		err = program_locks_open(e);
	for (size_t p = 0; !err && cfg->progress_path && p < cfg->n_pids;
	     p++) {
		err = attach(e->skel->progs.whatif_progress, false, cfg->pids[p],
			     cfg->progress_path, cfg->progress_offset,
			     &e->links, &e->n_links, &e->cap_links);
		if (err == -ESRCH && cfg->n_pids > 1)
			err = 0;
		if (err == -ENOTSUPP_UPROBE)
			pr_err("--progress: uprobes cannot probe the first "
			       "instruction of the function (a locked "
			       "instruction?): name another");
		else if (err)
			pr_err("--progress: cannot attach to %s: %s",
			       cfg->progress_path, strerror(-err));
	}
	elfimage__close(libc);
	if (err)
		goto fail;
	*out = e;
	return 0;
fail:
	experiment__free(e);
	return err;
}

void experiment__free(struct experiment *e)
{
	if (!e)
		return;
	if (e->skel)
		e->skel->bss->delay_ns = 0;
	detach(e->hold_links, &e->n_hold);
	detach(e->links, &e->n_links);
	free(e->hold_links);
	free(e->links);
	whatif_bpf__destroy(e->skel);
	free(e);
}

static volatile struct whatif_counts *counts(struct experiment *e)
{
	return &e->skel->bss->counts;
}

static uint64_t progress_now(struct experiment *e)
{
	return e->cfg.progress_path ? counts(e)->progress
				    : counts(e)->acquisitions;
}

/* The counters a phase reads, and when. */
struct stamp {
	uint64_t ns;
	uint64_t holds, hold_ns, off_ns, holders, units;
};

/* A read of the clock this far from the counters' is retried. */
#define STAMP_SLACK_NS	1000000ull
#define STAMP_TRIES	8

/*
 * The counters with the time they were read at: between two clock reads
 * close together (syncprof runs at its own nice, and on a loaded machine
 * it can be off its CPU for a quarter of a second between reading the
 * clock and the counters, which the threads' holds and progress go on
 * filling: the hold phase once read more hold than time on a mutex).
 */
static void stamp_now(struct experiment *e, struct stamp *st)
{
	for (int i = 0; i < STAMP_TRIES; i++) {
		uint64_t before = clock__monotonic_ns();

		st->holds = counts(e)->holds;
		st->hold_ns = counts(e)->hold_ns;
		st->off_ns = counts(e)->hold_off_ns;
		st->holders = counts(e)->holders;
		st->units = progress_now(e);
		st->ns = clock__monotonic_ns();
		if (st->ns - before <= STAMP_SLACK_NS) {
			st->ns = before + (st->ns - before) / 2;
			return;
		}
	}
}

/* Waits seconds, unless a stop fd fires first (-EINTR). */
static int wait_window(struct experiment *e, double seconds)
{
	uint64_t end = clock__monotonic_ns() + (uint64_t)(seconds * 1e9);
	struct pollfd fds[2];

	for (int i = 0; i < 2; i++)
		fds[i] = (struct pollfd){ .fd = e->cfg.stop_fds[i],
					  .events = POLLIN };
	for (;;) {
		uint64_t now = clock__monotonic_ns();
		int ms;

		if (now >= end)
			return 0;
		ms = (int)((end - now + 999999) / 1000000);
		if (poll(fds, 2, ms) > 0)
			return -EINTR;
	}
}

/* The empty critical section's mutex: at one address in the child. */
static pthread_mutex_t empty_lock = PTHREAD_MUTEX_INITIALIZER;

/* The child: a session of empty holds per byte read, a byte back. */
static void empty_child(int fd)
{
	unsigned char b;

	while (read(fd, &b, 1) == 1) {
		for (int i = 0; i < EMPTY_HOLDS; i++) {
			pthread_mutex_lock(&empty_lock);
			pthread_mutex_unlock(&empty_lock);
		}
		if (write(fd, &b, 1) != 1)
			break;
	}
	_exit(0);
}

/* One session: its mean hold on a CPU, 0 when none was timed.  A child
   gone raises no SIGPIPE (MSG_NOSIGNAL). */
static uint64_t empty_session(struct experiment *e, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct stamp a, b;
	unsigned char byte = 1;

	stamp_now(e, &a);
	if (send(fd, &byte, 1, MSG_NOSIGNAL) != 1 ||
	    poll(&pfd, 1, EMPTY_WAIT_MS) != 1 || read(fd, &byte, 1) != 1)
		return 0;
	stamp_now(e, &b);
	if (b.holds == a.holds || b.hold_ns - a.hold_ns < b.off_ns - a.off_ns)
		return 0;
	return (b.hold_ns - a.hold_ns - (b.off_ns - a.off_ns)) /
	       (b.holds - a.holds);
}

/*
 * What the probes add to a measured hold: an empty critical section's
 * hold under them, in a child of syncprof (design comment above).
 */
static uint64_t empty_hold_ns(struct experiment *e)
{
	const struct hold_func *lock = NULL;
	uint64_t means[EMPTY_SESSIONS], saved = e->skel->bss->object;
	struct bpf_link **links = NULL, *sw = NULL;
	size_t n = 0, cap = 0, got = 0;
	int sv[2], err;
	pid_t child;

	for (size_t i = 0; i < e->n_holds; i++)
		if (!strcmp(e->holds[i].name, lock_funcs[0]))
			lock = &e->holds[i];
	if (!lock || !e->unlock_offset ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	child = fork();
	if (child == 0) {
		/* Its socket as fd 3 and nothing else of syncprof's (a link
		   kept open would keep a probe in the target), and gone with
		   syncprof. */
		if (dup2(sv[1], 3) != 3)
			_exit(1);
		close_range(4, ~0u, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		empty_child(3);
	}
	close(sv[1]);
	e->skel->bss->object = (uint64_t)(uintptr_t)&empty_lock;
	err = child < 0 ? -errno : 0;
	if (!err)
		err = attach(e->skel->progs.whatif_lock, false, child,
			     lock->path, lock->offset, &links, &n, &cap);
	if (!err)
		err = attach(e->skel->progs.whatif_locked, true, child,
			     lock->path, lock->offset, &links, &n, &cap);
	if (!err)
		err = attach(e->skel->progs.whatif_release, false, child,
			     e->cfg.libc_path, e->unlock_offset, &links, &n,
			     &cap);
	if (!err) {
		sw = bpf_program__attach(e->skel->progs.whatif_switch);
		err = sw ? 0 : -errno;
	}
	for (int i = 0; !err && i < EMPTY_SESSIONS; i++) {
		uint64_t mean = empty_session(e, sv[0]);

		if (mean)
			means[got++] = mean;
	}
	bpf_link__destroy(sw);
	detach(links, &n);
	free(links);
	e->skel->bss->object = saved;
	close(sv[0]);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (err)
		pr_debug("--what-if: the empty hold not measured: %s",
			 strerror(-err));
	else if (!got)
		pr_debug("--what-if: the empty hold not timed (syncprof's libc "
			 "is not %s?): nothing taken off the holds",
			 e->cfg.libc_path);
	qsort(means, got, sizeof(*means), order__u64_at);
	return got ? means[got / 2] : 0;
}

/* A mean hold with the probes' part off, never below MIN_HOLD_SHARE. */
static uint64_t without_probes(uint64_t hold, uint64_t probes)
{
	uint64_t floor = (uint64_t)((double)hold * MIN_HOLD_SHARE);

	return hold > probes && hold - probes > floor ? hold - probes : floor;
}

/* Empties a map of the hold phase's, for the next lock's. */
static void map_clear(struct bpf_map *map, size_t key_size)
{
	unsigned char key[16];

	if (key_size > sizeof(key))
		return;
	while (!bpf_map__get_next_key(map, NULL, key, key_size))
		if (bpf_map__delete_elem(map, key, key_size, 0))
			break;
}

/* The keys of a map, in *keys (key_size bytes each). */
static int map_keys(struct bpf_map *map, size_t key_size, void *keys,
		    size_t *n)
{
	unsigned char **out = keys, prev[16];
	size_t cap = 0;
	const void *at = NULL;

	*out = NULL;
	*n = 0;
	if (key_size > sizeof(prev))
		return -EINVAL;
	for (;;) {
		int err = array__grow(out, &cap, *n + 1, key_size);

		if (err)
			return err;
		if (bpf_map__get_next_key(map, at, *out + *n * key_size,
					  key_size))
			return 0;
		memcpy(prev, *out + *n * key_size, key_size);
		at = prev;
		(*n)++;
	}
}

/*
 * Whether the object's holders reach a thread that made progress, from
 * what the hold phase kept (the design comment above).
 */
static int judge_reach(struct experiment *e, uint64_t object, bool lost,
		       struct experiment_result *r)
{
	struct whatif_holder *held = NULL;
	struct whatif_wake *wakes = NULL;
	uint32_t *progress = NULL, *holders = NULL;
	struct wakereach_graph g = { 0 };
	size_t n_held = 0, n_holders = 0;
	bool reached = true;
	int err;

	r->reach = WHATIF_REACH_UNKNOWN;
	err = map_keys(e->skel->maps.progress_threads, sizeof(*progress),
		       &progress, &g.n_progress);
	if (!err)
		err = map_keys(e->skel->maps.wakes, sizeof(*wakes), &wakes,
			       &g.n_wakes);
	if (!err)
		err = map_keys(e->skel->maps.holders, sizeof(*held), &held,
			       &n_held);
	if (!err && n_held)
		holders = malloc(n_held * sizeof(*holders));
	if (!err && n_held && !holders)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n_held; i++)
		if (held[i].object == object)
			holders[n_holders++] = held[i].tid;
	r->progress_threads = g.n_progress;
	r->wakes = g.n_wakes;
	g.holders = holders;
	g.n_holders = n_holders;
	g.progress = progress;
	g.wakes = wakes;
	if (!err && !lost && g.n_progress && n_holders)
		err = wakereach__judge(&g, &reached);
	if (!err && !lost && g.n_progress && n_holders)
		r->reach = reached ? WHATIF_REACH_YES : WHATIF_REACH_NO;
	free(held);
	free(holders);
	free(progress);
	free(wakes);
	return err;
}

/* The handoffs and wake-ups counted so far, into c times sign. */
static void wake_add(struct experiment *e, struct wakecurve *c, double sign)
{
	const struct whatif_wakebin *w = e->skel->bss->wake_bins;
	const struct whatif_wakebin *h = e->skel->bss->handoff_bins;

	for (size_t i = 0; i < WAKECURVE_BINS; i++) {
		c->wakes[i].count += sign * (double)w[i].count;
		c->wakes[i].idle_ns += sign * (double)w[i].idle_ns;
		c->wakes[i].lat_ns += sign * (double)w[i].lat_ns;
		c->handoffs[i].count += sign * (double)h[i].count;
		c->handoffs[i].idle_ns += sign * (double)h[i].idle_ns;
		c->handoffs[i].lat_ns += sign * (double)h[i].lat_ns;
		c->handoffs[i].handoff_ns += sign * (double)h[i].handoff_ns;
	}
	c->n_handoffs += sign * (double)counts(e)->handoffs;
	c->handoff_ns += sign * (double)counts(e)->handoff_ns;
}

/*
 * The holds' share of the CPU the target's threads used in the hold
 * phase.  A unit's CPU moves between the hold phase and the windows
 * (the loop's speed on a CPU whose sibling is busy, the probes' own):
 * on the test target pinned to one CPU its holds' CPU read 96 to 141 us
 * for 100 us of work from one run to the next, where the share of the
 * two in the same seconds moved by 3%.  The holds' part on a CPU is
 * their time on the wall less their time switched out, which counts
 * what the host took from the CPU meanwhile (a guest's steal); the
 * threads' CPU (schedstat) does not, where the kernel accounts steal:
 * the holds' part is taken down by the host's share of the busy time
 * in the same seconds (without it, a hold phase whose host took 47%
 * read every hold's time on a CPU, a share of 1 for the target's 0.6).
 */
static void hold_cpu_share(struct taskcpu *cpu, struct experiment_result *r)
{
	double used = 0, capacity = 0, most = 0;
	double stolen = taskcpu__stolen(cpu);

	taskcpu__window(cpu, taskcpu__last_ns(cpu), MIN_RUN_SHARE, &used,
			&capacity, &most);
	if (used > 0)
		r->cpu.hold_cpu_share = fmin(r->holds_per_s *
					     (double)r->hold_cpu_ns * 1e-9 *
					     (1 - stolen) / used, 1);
	pr_debug("--what-if: hold phase: CPUs used %.2f, the host's share "
		 "%.3f, the holds' share %.3f", used, stolen,
		 r->cpu.hold_cpu_share);
}

/* The hold phase: the lock's mean hold, its holds and progress per s. */
static int hold_phase(struct experiment *e, struct experiment_result *r,
		      struct taskcpu *cpu, double *rate)
{
	uint64_t holds, hold_ns, off_ns, units;
	/* Threads that held it, from the probes' start (keyed by object:
	   those of other objects' experiments are not ours). */
	uint64_t holders = counts(e)->holders;
	uint64_t lost = counts(e)->reach_lost;
	struct stamp first, last;
	struct bpf_link *sw, *waking = NULL, *woken = NULL;
	size_t n_hold = 0;
	bool observe = e->cfg.progress_path && e->processes_kept;
	double s;
	int err = 0;

	map_clear(e->skel->maps.progress_threads, sizeof(uint32_t));
	map_clear(e->skel->maps.wakes, sizeof(struct whatif_wake));
	map_clear(e->skel->maps.taking, sizeof(uint32_t));
	e->skel->bss->released_ns = 0;

	for (size_t i = 0; !err && i < e->n_holds; i++) {
		const struct hold_func *h = &e->holds[i];
		struct bpf_program *ret =
			h->held == HELD_ALWAYS ? e->skel->progs.whatif_locked_any :
			h->held == HELD_TRUE ? e->skel->progs.whatif_locked_true :
			e->skel->progs.whatif_locked;

		for (size_t p = 0; !err && p < e->cfg.n_pids; p++) {
			pid_t pid = e->cfg.pids[p];

			err = attach(e->skel->progs.whatif_lock, false, pid,
				     h->path, h->offset, &e->hold_links,
				     &e->n_hold, &e->cap_hold);
			if (!err)
				err = attach(ret, true, pid, h->path,
					     h->offset, &e->hold_links,
					     &e->n_hold, &e->cap_hold);
			if (err == -ESRCH && e->cfg.n_pids > 1)
				err = 0;
		}
		/* Not probed: its holds are not timed (the others are). */
		if (err == -ENOTSUPP_UPROBE) {
			pr_debug("--what-if: cannot probe %s", h->name);
			err = 0;
		}
	}
	sw = err ? NULL : bpf_program__attach(e->skel->progs.whatif_switch);
	if (!err && !sw)
		err = -errno;
	/* Without it the handoffs are timed, their wake-ups not. */
	if (!err) {
		woken = bpf_program__attach(e->skel->progs.whatif_waiter_woken);
		if (!woken)
			pr_debug("--what-if: waiters' wake-ups not timed: %s",
				 strerror(errno));
	}
	if (!err && observe) {
		waking = bpf_program__attach(e->skel->progs.whatif_waking);
		if (!waking)
			pr_debug("--what-if: no wakeups seen: %s",
				 strerror(errno));
		observe = waking != NULL;
	}
	e->skel->bss->observing = observe;
	/* Counted once the probes are in: installing them stalls the
	   target a moment (its text pages are replaced). */
	if (!err)
		err = wait_window(e, SETTLE_S);
	stamp_now(e, &first);
	if (!err)
		err = taskcpu__begin(cpu);
	wake_add(e, &r->wake, -1);
	pr_info("--what-if: timing the holds and handoffs");
	if (!err)
		err = wait_window(e, HOLD_PHASE_S);
	/* Read before the probes go: removing them takes a while. */
	stamp_now(e, &last);
	/* A lock held long: enough holds for their mean and the plan. */
	while (!err && (double)(last.holds - first.holds) <
		       WHATIFPLAN_MIN_HOLDS &&
	       (double)(last.ns - first.ns) * 1e-9 < HOLD_PHASE_MAX_S) {
		err = wait_window(e, HOLD_PHASE_STEP_S);
		stamp_now(e, &last);
	}
	if (!err)
		err = taskcpu__end(cpu);
	wake_add(e, &r->wake, 1);
	s = (double)(last.ns - first.ns) * 1e-9;
	pr_info("--what-if: holds timed: %.2f s, %" PRIu64 " holds, %.0f "
		"handoffs of %.1f us", s, last.holds - first.holds,
		r->wake.n_handoffs, r->wake.n_handoffs > 0 ?
		r->wake.handoff_ns / r->wake.n_handoffs / 1e3 : 0.0);
	holds = last.holds - first.holds;
	hold_ns = last.hold_ns - first.hold_ns;
	off_ns = last.off_ns - first.off_ns;
	holders = last.holders - holders;
	units = last.units - first.units;
	n_hold = e->n_hold;
	e->skel->bss->observing = 0;
	bpf_link__destroy(woken);
	bpf_link__destroy(waking);
	detach(e->hold_links, &e->n_hold);
	bpf_link__destroy(sw);
	if (!err && observe)
		err = judge_reach(e, e->skel->bss->object,
				  counts(e)->reach_lost != lost, r);
	if (err)
		return err;
	r->hold_ns = holds ? hold_ns / holds : 0;
	/* Off-CPU time counted on a switch back in may end after the
	   phase's last unlock: never more than the holds. */
	hold_ns = off_ns < hold_ns ? hold_ns - off_ns : 0;
	*rate = (double)units / s;
	pr_debug("--what-if: hold phase of 0x%llx (%zu+%zu probes): %llu "
		 "holds, %llu ns on a CPU, progress %.0f/s; %llu threads made "
		 "progress, %llu wakeup pairs, holders reach them: %s",
		 (unsigned long long)e->skel->bss->object, e->n_links, n_hold,
		 (unsigned long long)holds, (unsigned long long)hold_ns, *rate,
		 (unsigned long long)r->progress_threads,
		 (unsigned long long)r->wakes,
		 r->reach == WHATIF_REACH_YES ? "yes" :
		 r->reach == WHATIF_REACH_NO ? "no" : "not known");
	for (size_t i = 0; i < WAKECURVE_BINS; i++)
		if (r->wake.wakes[i].count > 0)
			pr_debug("--what-if: waiters woken after %s%.0f us idle: "
				 "%.0f, %.1f us each; %.0f handoffs of them, "
				 "%.1f us each", i == WHATIF_WAKE_BUSY ?
				 "a busy CPU, " : "",
				 r->wake.wakes[i].idle_ns / 1e3 /
				 r->wake.wakes[i].count,
				 r->wake.wakes[i].count,
				 r->wake.wakes[i].lat_ns / 1e3 /
				 r->wake.wakes[i].count,
				 r->wake.handoffs[i].count,
				 r->wake.handoffs[i].count > 0 ?
				 r->wake.handoffs[i].handoff_ns / 1e3 /
				 r->wake.handoffs[i].count : 0.0);
	if (!holds)
		return -ENODATA;
	r->hold_cpu_ns = hold_ns / holds;
	r->probe_ns = e->empty_ns;
	r->hold_ns = without_probes(r->hold_ns, e->empty_ns);
	r->hold_cpu_ns = without_probes(r->hold_cpu_ns, e->empty_ns);
	r->holds_per_s = (double)holds / s;
	r->holds = holds;
	r->holders = holders;
	r->rate = *rate;
	hold_cpu_share(cpu, r);
	return r->hold_ns ? 0 : -ENODATA;
}

/* The windows and the budget, from the hold phase; said on stderr. */
static int plan(struct experiment *e, double time_max_s,
		struct experiment_result *r)
{
	struct whatifplan_input in = {
		.rate = r->rate, .holds_per_s = r->holds_per_s,
		.hold_s = (double)r->hold_ns * 1e-9,
		.max_delay_s = (double)WHATIF_MAX_DELAY_NS * 1e-9,
		.time_max_s = time_max_s,
	};
	int err = whatifplan__make(&in, &r->plan);

	if (err == -ENOSPC) {
		pr_warn("--what-if: the lock is held %.1f times over (%.0f "
			"holds/s of %.1f us): even %d rounds of windows of "
			"%.2f s would inject %.1f s of delay, past the budget "
			"of %.0f s at most; no experiment",
			r->holds_per_s * in.hold_s, r->holds_per_s,
			in.hold_s * 1e6, WHATIFPLAN_ROUNDS_MIN,
			r->plan.window_s, r->plan.spend_s,
			WHATIFPLAN_BUDGET_MAX_S);
		return err;
	}
	if (err == -ETIME)
		return err;	/* the caller says what it had left */
	if (err)
		return -ENODATA;
	pr_info("--what-if: delays begin: mean hold %.1f us (%.1f us on a "
		"CPU), %u windows of %.2f s (%.0f holds each), delay budget "
		"%.1f s (%.1f s expected)", in.hold_s * 1e6,
		(double)r->hold_cpu_ns / 1e3, whatifplan__windows(&r->plan),
		r->plan.window_s, r->plan.holds_per_window, r->plan.budget_s,
		r->plan.spend_s);
	/* Budget per experiment: what the earlier ones spent is not ours. */
	e->skel->bss->budget_ns = counts(e)->injected_ns +
				  (uint64_t)(r->plan.budget_s * 1e9);
	return 0;
}

int experiment__run(struct experiment *e, uint64_t object,
		    double time_max_s, struct experiment_result *r)
{
	uint64_t begin = clock__monotonic_ns();
	uint64_t injected = counts(e)->injected;
	uint64_t injected_ns = counts(e)->injected_ns;
	uint64_t over = counts(e)->over_budget;
	double rate = 0, delayed = 0, used = 0, capacity = 0;
	double most = 0;
	struct taskcpu *cpu = NULL, *phase_cpu = NULL;
	size_t n_delayed = 0;
	int err;

	*r = (struct experiment_result){ 0 };
	e->skel->bss->delay_ns = 0;
	if (!e->empty_known) {
		e->empty_ns = empty_hold_ns(e);
		e->empty_known = true;
		pr_debug("--what-if: an empty critical section reads %.1f us "
			 "under the probes", (double)e->empty_ns / 1e3);
	}
	e->skel->bss->object = object;
	err = taskcpu__new(e->cfg.pids, e->cfg.n_pids, &cpu);
	if (!err)
		err = taskcpu__new(e->cfg.pids, e->cfg.n_pids, &phase_cpu);
	if (!err)
		err = hold_phase(e, r, phase_cpu, &rate);
	if (!err && rate <= 0)
		err = -ENODATA;
	if (!err)
		err = plan(e, time_max_s, r);
	for (unsigned int i = 0; !err && i < whatifplan__windows(&r->plan);
	     i++) {
		uint64_t delay = (uint64_t)(whatifplan__delay(&r->plan, i) *
					    1e9 + 0.5);
		bool slowed = delay > 0;
		uint64_t units, start, spent;
		struct stamp at;

		e->skel->bss->delay_ns = delay;
		stamp_now(e, &at);
		units = at.units;
		start = at.ns;
		if (!slowed)
			err = taskcpu__begin(cpu);
		if (!err)
			err = wait_window(e, r->plan.window_s);
		if (!err && !slowed)
			err = taskcpu__end(cpu);
		if (!err && !slowed)
			taskcpu__window(cpu, taskcpu__last_ns(cpu),
					MIN_RUN_SHARE, &used, &capacity, &most);
		e->skel->bss->delay_ns = 0;
		if (err)
			break;
		stamp_now(e, &at);
		spent = at.ns - start;
		r->windows[i] = (struct whatif_window){
			.delay = (double)delay / (double)r->hold_ns,
			.rate = (double)(at.units - units) /
				((double)spent * 1e-9),
			.used = slowed ? 0 : used,
			.capacity = slowed ? 0 : capacity,
			.most = slowed ? 0 : most,
		};
		r->n_windows = i + 1;
		pr_debug("--what-if: window %u: delay %" PRIu64 " ns, %.0f "
			 "units/s, %.2f s", i, delay, r->windows[i].rate,
			 (double)spent * 1e-9);
		if (slowed) {
			delayed += r->windows[i].rate;
			n_delayed++;
		}
		if (counts(e)->over_budget != over) {
			pr_warn("--what-if: the delay budget (%.1f s) is spent; "
				"the experiment stops early", r->plan.budget_s);
			break;
		}
	}
	e->skel->bss->delay_ns = 0;
	if (!err && r->n_windows) {
		taskcpu__usage(cpu, taskcpu__sum_ns(cpu), MIN_RUN_SHARE,
			       &r->used, &r->capacity);
		r->stolen = taskcpu__stolen(cpu);
		/* Holds per unit of progress (hold phase) x mean on a CPU. */
		r->cpu.hold_cpu_per_unit = r->holds_per_s / rate *
					   (double)r->hold_cpu_ns * 1e-9;
		r->rate_delayed = n_delayed ? delayed / (double)n_delayed : 0;
		r->rate_after = r->windows[r->n_windows - 1].delay == 0 ?
				r->windows[r->n_windows - 1].rate : 0;
	}
	r->injected = counts(e)->injected - injected;
	r->injected_ns = counts(e)->injected_ns - injected_ns;
	r->over_budget = counts(e)->over_budget - over;
	r->elapsed_ns = clock__monotonic_ns() - begin;
	pr_debug("--what-if: %" PRIu64 " releases delayed, %.1f us each; "
		 "CPUs used %.2f, could %.2f, holds' CPU %.1f us a unit",
		 r->injected, r->injected ? (double)r->injected_ns /
			       (double)r->injected / 1e3 : 0.0,
		 r->used, r->capacity, r->cpu.hold_cpu_per_unit * 1e6);
	taskcpu__free(phase_cpu);
	taskcpu__free(cpu);
	return err;
}
