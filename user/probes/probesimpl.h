/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to user/probes/: the state the probes' files share (struct
 * probes), the tables of what each mode attaches, and the functions one
 * of them defines for the others.  Everything else uses probes.h.
 */
#ifndef SYNCPROF_PROBESIMPL_H
#define SYNCPROF_PROBESIMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probes.h"

struct bpf_link;
struct bpf_program;
struct fold;
struct ring_buffer;
struct syncprof_bpf;

/*
 * switched: --duty attaches and detaches the function's probes at every
 * switch (duty.c); the others stay attached, gated by the window's flag.
 * The functions a lock-heavy program calls all the time are switched;
 * part of a switch's cost is per probed offset, called or not (the
 * kernel walks every process mapping the file, under its mmap lock).
 */
static const struct probe_spec {
	const char *func;
	enum sp_probe_class class;
	bool required;
	bool switched;
} probe_table[] = {
	{ "pthread_mutex_lock", SP_CLASS_MUTEX, true, true },
	{ "pthread_mutex_trylock", SP_CLASS_MUTEX, true, true },
	{ "pthread_mutex_timedlock", SP_CLASS_MUTEX, false, false },
	{ "pthread_mutex_clocklock", SP_CLASS_MUTEX, false, false },	/* glibc 2.30+ */
	{ "pthread_cond_wait", SP_CLASS_CONDVAR, true, true },
	{ "pthread_cond_timedwait", SP_CLASS_CONDVAR, false, true },
	{ "pthread_cond_clockwait", SP_CLASS_CONDVAR, false, false },	/* glibc 2.30+ */
	{ "pthread_rwlock_rdlock", SP_CLASS_RWLOCK_R, false, true },
	{ "pthread_rwlock_tryrdlock", SP_CLASS_RWLOCK_R, false, false },
	{ "pthread_rwlock_timedrdlock", SP_CLASS_RWLOCK_R, false, false },
	{ "pthread_rwlock_clockrdlock", SP_CLASS_RWLOCK_R, false, false },	/* 2.30+ */
	{ "pthread_rwlock_wrlock", SP_CLASS_RWLOCK_W, false, true },
	{ "pthread_rwlock_trywrlock", SP_CLASS_RWLOCK_W, false, false },
	{ "pthread_rwlock_timedwrlock", SP_CLASS_RWLOCK_W, false, false },
	{ "pthread_rwlock_clockwrlock", SP_CLASS_RWLOCK_W, false, false },	/* 2.30+ */
	{ "sem_wait", SP_CLASS_SEM, false, false },
	{ "sem_trywait", SP_CLASS_SEM, false, false },
	{ "sem_timedwait", SP_CLASS_SEM, false, false },
	{ "sem_clockwait", SP_CLASS_SEM, false, false },	/* glibc 2.30+ */
	{ "pthread_barrier_wait", SP_CLASS_BARRIER, false, false },
	{ "pthread_spin_lock", SP_CLASS_SPIN, false, false },
	{ "pthread_spin_trylock", SP_CLASS_SPIN, false, false },
};

#define N_PROBES (sizeof(probe_table) / sizeof(probe_table[0]))

/*
 * Full mode with --hold or --blame: entry probes on the functions that
 * let a lock go (unlock_enter, see bpf/measure/hold.bpf.c).  A barrier has no
 * release: its waits are in no blame row and it holds nothing.
 * pthread_spin_unlock shares its code with pthread_spin_init in glibc
 * 2.36: an init is seen as a release of a lock no one holds.
 */
static const struct probe_spec release_table[] = {
	{ "pthread_mutex_unlock", SP_CLASS_UNLOCK, true, true },
	{ "pthread_cond_signal", SP_CLASS_SIGNAL, true, true },
	{ "pthread_cond_broadcast", SP_CLASS_SIGNAL, true, true },
	{ "pthread_rwlock_unlock", SP_CLASS_RWUNLOCK, false, true },
	{ "pthread_spin_unlock", SP_CLASS_UNLOCK, false, false },
	{ "sem_post", SP_CLASS_SIGNAL, false, false },
};

#define N_RELEASES (sizeof(release_table) / sizeof(release_table[0]))

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

/* --states: the scheduler's tracepoints (see bpf/measure/states.bpf.c). */
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

/* Threads the guards are attached through (thread_exit watches them). */
#define PROBES_GUARDS 2

/* A thread that exited (tid 0: every thread of the process). */
struct probes_gone {
	__u32 pid;
	__u32 tid;
};

struct probes {
	struct syncprof_bpf *skel;
	enum probes_mode mode;
	pid_t tgid;
	bool probe_at_entry;
	bool recording;
	int ncpus;
	uint64_t window;
	uint64_t live_ns;	/* every counting probe in place; 0: not yet */
	unsigned int map_size;
	struct sp_key *keys;		/* map_size slots for one read */
	struct sp_value *values;
	uint64_t *counter_values;	/* ncpus slots for one counter */
	pid_t *forget;		/* processes whose rows go to process 0 */
	size_t n_forget, forget_cap;
	struct fold *fold;		/* rows of exited threads */
	bool multi;			/* uprobe_multi links (Linux 6.6+) */
	int multi_links[2 * N_PROBES];	/* uprobe_multi links, one per attach
					   and program */
	size_t n_multi_links;
	/*
	 * uprobe_multi links of an exited anchor, kept open until the end:
	 * the calls that began under them still end by their returns.
	 */
	int *retired_multi;
	size_t n_retired_multi, cap_retired_multi;
	uint32_t gen;			/* the links' generation that runs
					   (SP_COOKIE_GEN) */
	/* Guards (SP_COOKIE_GUARD), once main has exited: see following.c. */
	struct bpf_link *guard_links[PROBES_GUARDS][N_PROBES][2];
	pid_t guard_tid[PROBES_GUARDS];
	bool anchor_gone_said;		/* it exited, the links stayed: told */
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
	int release_kept_link;		/* --duty: the releases not switched */
	bool releases;			/* full mode: attach release_table */
	bool hold;
	bool lock_order;		/* --lock-order: held sets, order pairs */
	int loader_multi_link;
	struct unwinder *unwinder;	/* NULL: no walk through modules */
	struct latewalks *late;		/* walks cut by tables read late */
	struct ring_buffer *late_ring;
	struct offcpu *offcpu;		/* --off-cpu, or NULL */
	unsigned int stack_depth;
	void *stack_buf;		/* one stacks map value */
	/* Drained, not resolved yet: this generation and the one before. */
	struct stacktab *raw_stacks, *raw_old;
	uint64_t raw_since_ns;		/* when this generation began */
	uint64_t raw_keep_ns;		/* its length; 0: kept for the run */
	uint64_t raw_let_go;		/* stacks of generations let go */
	size_t stacks_drained;		/* drained since the last read began */
	size_t rows_read;		/* in the stats map at the last read */
	size_t charge_rows_read;	/* the most in a charges map since */
	bool caused;			/* the caused map is filled */
	/* Its rows of exited threads, taken out of it since its last read. */
	struct sp_key *caused_gone_keys;
	struct sp_value *caused_gone_values;
	size_t n_caused_gone, cap_caused_gone;
	bool blame;			/* --blame's map is filled */
	struct blamekeep *blame_kept;	/* its rows taken out (blamekeep.c) */
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
	/*
	 * Several: the threads (tid, pid) and processes (0, pid) whose exit
	 * the kernel told since the read before last: their rows fold
	 * (mapread.c).  [0] since the last read, [1] the read's before.
	 */
	struct probes_gone *gone[2];
	size_t n_gone[2], cap_gone[2];
	uint64_t lost_events_seen;	/* SP_CNT_LOST_PROC_EVENTS, last read */
	uint64_t (*translate)(void *ctx, pid_t pid, uint64_t pc);
	void *translate_ctx;
	struct stacktab *stacks;	/* the session's, for folded rows */
};

/* stackread.c */
/*
 * The raw frames (untranslated) of a stack no row read has named yet:
 * drained (held here) or made since the last drain (p->stack_buf's
 * copy, valid until the next call).  0, or -ENOENT: lost, or let go.
 * What a reader of the rows' stacks asks after the session's table,
 * instead of the kernel's (which each read drains).
 */
int probes__raw_stack(struct probes *p, uint64_t id, const uint64_t **frames,
		      uint32_t *n, enum stacktab_end *end);

/* causedread.c */
/* A map of charges to releases (blame, caused), as a sealed snapshot. */
int probes__read_charges(struct probes *p, int fd, struct snapshot **out);
/* Whether the kernel told of tid's exit (tid 0: of pid's). */
typedef bool (*probes_told_gone_fn)(const struct probes *p, __u32 pid,
				    __u32 tid);
/*
 * The caused map's rows of exited threads (dead: sorted TIDs) and, with
 * several processes, of the exits the kernel told (told, else NULL), out
 * of the map and kept for its next read.
 */
int probes__fold_caused(struct probes *p, const __u32 *dead, size_t n_dead,
			probes_told_gone_fn told);
void probes__caused_free(struct probes *p);
/*
 * Whether no charge can add to a charge map's row any more: its releasing
 * thread is in dead (sorted TIDs), or (told, several processes) the
 * kernel told of its thread's or process's exit, or of the waiter's.
 */
bool probes__charge_gone(const struct probes *p, const struct sp_key *key,
			 const __u32 *dead, size_t n_dead,
			 probes_told_gone_fn told);
/* Every key of a charge map (fd), read before any is taken out. */
int probes__charge_keys(int fd, struct sp_key **keys, size_t *n);
/* Takes a gone row (probes__charge_gone) out of a charge map: 0/-errno. */
typedef int (*probes_take_charge_fn)(struct probes *p, int fd,
				     const struct sp_key *key);
/* Every gone row of a charge map, each through take; 0 or -errno. */
int probes__take_gone_charges(struct probes *p, int fd, const __u32 *dead,
			      size_t n_dead, probes_told_gone_fn told,
			      probes_take_charge_fn take);

/* blamekeep.c */
/*
 * --blame's rows of exited threads and processes (as fold_caused), out
 * of the map and kept for every later read of it; canon(p, key) makes a
 * row's stack canonical where it is kept by program (see blamekeep.c).
 */
int probes__fold_blame(struct probes *p, const __u32 *dead, size_t n_dead,
		       probes_told_gone_fn told,
		       void (*canon)(void *p, struct sp_key *key));
void probes__blame_kept_free(struct probes *p);
/*
 * The own rows of blamekeep.c whose releaser's or waiter's process is
 * in pids (forgotten by the report; sorted here) folded by program; 0 or
 * -ENOMEM (the rows not folded yet stay).
 */
int probes__forget_blame(struct probes *p, pid_t *pids, size_t n);

/* procevents.c */
/* pid's thread tid (0: the whole process) exited: its rows fold. */
void probes__note_gone(struct probes *p, pid_t pid, pid_t tid);

/* fullprobes.c */
/* The site table through thread tid as a guard's links, into out. */
int probes__attach_guard(struct probes *p, pid_t tid,
			 struct bpf_link *out[N_PROBES][2]);
int probes__attach_sites(struct probes *p, const char *library,
			 const size_t *index, const uint64_t *offsets,
			 const uint64_t *cookies, size_t n);
void probes__forget_file(char **kept);
int probes__attach_table(struct probes *p, const char *library,
			 const char *only, bool at_entry);
int probes__attach_releases(struct probes *p, const char *library);
/* Which of a table's functions (probe_spec.switched): --duty's sets. */
enum probes_set { PROBES_SET_ALL, PROBES_SET_SWITCHED, PROBES_SET_KEPT };
/*
 * The releases of set: ALL and SWITCHED into release_multi_link, KEPT
 * into release_kept_link (uprobe_multi links only, else -EOPNOTSUPP).
 */
int probes__attach_release_set(struct probes *p, const char *library,
			       enum probes_set set);
void probes__destroy_links(struct bpf_link **links, size_t n);

/* lateread.c */
int probes__configure_late(struct probes *p, unsigned int depth);
int probes__open_late(struct probes *p);
void probes__close_late(struct probes *p);
/* Takes the late walks out of the kernel's ring (a long sync's pauses). */
void probes__drain_late(void *p);

/* counters.c */
uint64_t probes__counter(struct probes *p, __u32 which);
/* Every probe that counts waits is in place now (probes__live_ns). */
void probes__going_live(struct probes *p);

/* tracepoints.c */
struct bpf_program *probes__tracepoint_prog(struct probes *p, size_t i);
struct bpf_program *probes__sched_prog(struct probes *p, size_t i);
bool probes__is_sched_prog(struct probes *p,
			   const struct bpf_program *prog);
int probes__attach_tracepoints(struct probes *p);
int probes__attach_exec(struct probes *p);

/* procevents.c */
bool probes__thread_alive_in(pid_t pid, pid_t tid);
bool probes__thread_alive(const struct probes *p, pid_t tid);
int probes__open_events(struct probes *p);
/* pid among the processes followed: 0, or -ENOMEM. */
int probes__note_pid(struct probes *p, pid_t pid);

/* following.c */
int probes__attach_follow(struct probes *p);
pid_t probes__live_thread(const struct probes *p, pid_t not);

#endif
