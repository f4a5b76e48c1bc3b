/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF side: owns the skeleton, attaches the probes, reads the maps. */
#ifndef SYNCPROF_PROBES_H
#define SYNCPROF_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libcmodel.h"
#include "skiplist.h"
#include "snapshot.h"
#include "stacktab.h"
#include "syncprof.h"
#include "unwinder.h"

struct probes;

enum probes_mode {
	PROBES_FULL = 0,	/* uprobes on every pthread lock call */
	PROBES_CONTENDED,	/* futex tracepoints: blocking waits only */
};

struct probes_config {
	pid_t tgid;
	/*
	 * Several processes (several --pid, --children): the programs
	 * filter by the targets map, full mode's probes are attached for
	 * every process and filtered there.  pids: the processes at start
	 * (tgid among them).
	 */
	bool several;
	bool children;			/* --children: fork adds to the map */
	const pid_t *pids;
	size_t n_pids;
	enum probes_mode mode;
	/* Contended mode: the target's libc, read. */
	const struct libcmodel *libc;
	/* The target's pthread library (a path syncprof can open). */
	const char *libc_path;
	unsigned int stack_depth;	/* frames kept per wait; 0: call site only */
	const struct skiplist *skip;	/* --skip, or NULL */
	bool follow_exec;		/* sched_process_exec can be attached */
	bool wait_timing;		/* the programs time themselves per wait */
	bool rows_by_thread;		/* stats rows keep their thread */
	uint32_t cond_signal_offset;	/* 0: condvars named by their futex word */
	bool probe_at_entry;		/* first instruction, not the cheapest site */
	uint64_t calibration_ns[SP_SITE__COUNT]; /* probe time taken out of each call */
	/*
	 * Full mode's lock calls' entry and return programs only, attached
	 * by probes__attach_function (the calibration): half the verifier's
	 * work of the whole set.
	 */
	bool lock_calls_only;
	unsigned int map_size;		/* stats map entries */
	uint32_t ring_size;		/* --record's ring buffer in bytes; 0: off */
	/* --states: thread states by the scheduler's tracepoints. */
	bool states;
	unsigned int max_threads;	/* threads map entries */
	bool blame;			/* --blame: charge waits to releases */
	/*
	 * Stacks drained that no row read names are held this many seconds
	 * to twice as many, then let go (counted); 0: for the whole run.
	 */
	unsigned int unnamed_stacks_s;
	bool caused;			/* contended, with blame: charge waits
					   to the holds they waited through
					   (read by the findings only) */
	bool why;			/* --why (contended): holders' states,
					   chains' roots; needs blame, states */
	bool hold;			/* --hold (full mode): time holds */
	bool lock_order;		/* --lock-order (full mode): pairs of
					   locks taken in order */
	bool off_cpu;			/* --off-cpu: other sleeps too */
	bool per_thread;		/* rows by holder too; exited threads'
					   rows keep their thread */
	/* Filters (bpf/stats.bpf.h): what the programs measure at all. */
	const pid_t *tids;		/* --tid: only these; n_tids 0: all */
	unsigned int n_tids;
	uint32_t types;			/* bit per sp_lock_type; 0: all */
	uint64_t object_start;		/* --object: [start, end); */
	uint64_t object_end;		/* end 0: any object */
	uint64_t min_wait_ns;		/* --min-wait */
};

/* Opens, sizes and loads the BPF programs for one target. */
int probes__new(const struct probes_config *cfg, struct probes **out);
/*
 * Full mode: attaches entry and return probes to the pthread functions of
 * library, and with --hold or --blame entry probes to its unlock, signal
 * and broadcast.  Contended mode: attaches to the futex tracepoints (and
 * with --blame to sched_waking).
 */
int probes__attach(struct probes *p, const char *library);
/*
 * --states: attaches the scheduler tracepoints.  Threads already running
 * go into the map (probes__threads_fd) before, and again after.
 */
int probes__attach_states(struct probes *p);
/* --lock-order's pairs map (bpf/measure/lockorder.bpf.h); -1 without. */
int probes__lock_order_fd(const struct probes *p);
/* --lock-order's losses: pairs not kept (the map was full), and locks not
 * tracked (a thread held more than SP_HELD_MAX). */
void probes__lock_order_drops(struct probes *p, uint64_t *pairs,
			      uint64_t *held);
/* --states: the threads map (struct sp_thread by TID); -1 without. */
int probes__threads_fd(const struct probes *p);
/*
 * Full mode, one function only (calibration), at its first instruction
 * when at_entry, else where the configuration places it.
 */
int probes__attach_function(struct probes *p, const char *library,
			    const char *name, bool at_entry);
/*
 * Full mode: what the programs take out of each call, per kind of site
 * (SP_SITE__COUNT figures), from now on.  Before probes__attach: the
 * calibration may end after the load.
 */
void probes__set_calibration(struct probes *p, const uint64_t *site_ns);
/* Removes the full-mode probes attached so far. */
void probes__detach(struct probes *p);
/*
 * Watches the dynamic loader (the file defining _dl_debug_state) for
 * library loads and unloads; the events come on probes__events_fd.
 */
int probes__attach_loader(struct probes *p, const char *loader);

/* What probes__consume_events reports. */
enum probes_event {
	PROBES_EVENT_MODULES = 1 << 0,	   /* the target's libraries changed */
	PROBES_EVENT_THREAD_EXIT = 1 << 1, /* call probes__follow_threads */
	PROBES_EVENT_PROCESSES = 1 << 2,   /* see probes__proc_events */
};

/* What happened to a process (several processes). */
struct probes_proc_event {
	enum sp_module_event type;	/* FORK, EXEC, EXIT (and LOAD) */
	pid_t pid;
	pid_t parent;			/* FORK */
	char comm[16];			/* its name then, NUL-terminated */
};

/*
 * The process events taken by the last probes__consume_events, in the
 * order they happened; valid until the next consume.
 */
const struct probes_proc_event *probes__proc_events(const struct probes *p,
						    size_t *n);
/* Starts following pid (a --pid): the targets map and its tables. */
int probes__add_process(struct probes *p, pid_t pid);
/* Its tables leave the kernel (it exited). */
void probes__forget_process(struct probes *p, pid_t pid);
/*
 * The rows of these processes, exited long ago and no longer named,
 * become rows of process 0 at the next read (fold.c).
 */
void probes__forget_rows(struct probes *p, const pid_t *pids, size_t n);
/* New processes the targets map had no room for (--children). */
uint64_t probes__dropped_processes(struct probes *p);
/*
 * Events of processes (fork, exec, exit, a library load) the kernel could
 * not pass on: a full ring.  Their waits are counted all the same.
 */
uint64_t probes__lost_process_events(struct probes *p);

/* Readable when there are events; -1 if nothing is watched. */
int probes__events_fd(struct probes *p);
/* Takes the pending events; returns the PROBES_EVENT_* bits seen. */
unsigned int probes__consume_events(struct probes *p);
/*
 * Full mode: when the thread the probes are attached through (the main
 * thread at first) has exited while others run on, attaches them again
 * through a live one.  Returns its TID (*gap_ns: how long no probe ran,
 * 0 if not known), 0 when nothing needed doing, or a negative errno.
 * *stayed is set, once, when it exited and the probes stay attached for
 * the other threads (uprobe_multi links outlive it on newer kernels).
 */
pid_t probes__follow_threads(struct probes *p, uint64_t *gap_ns,
			     bool *stayed);
/* How the kernel runs the probed instruction of an attached function. */
enum sp_site_kind probes__site_kind(const struct probes *p, const char *name);
/*
 * Brings the kernel's unwind tables up to date with the target's
 * mappings (call on module events and after an exec); 0 when nothing
 * unwinds.
 */
int probes__sync_modules(struct probes *p);
/* The same for one followed process. */
int probes__sync_process(struct probes *p, pid_t pid);
/* The maps the last sync of pid read, or NULL (unwinder__last_maps). */
const struct procmaps *probes__last_maps(const struct probes *p, pid_t pid);
/* While keep: each sync's whole read of the maps, for names (unwinder.h). */
void probes__keep_maps(struct probes *p, bool keep);
/* The kept read of pid's maps, the caller's to free; NULL: none. */
struct procmaps *probes__take_maps(struct probes *p, pid_t pid);
/* Whether waits are unwound through the target's modules. */
bool probes__unwinds(const struct probes *p);
void probes__unwind_stats(const struct probes *p, struct unwinder_stats *st);
/*
 * Starts a new report window and reads the stats into a sealed snapshot:
 * the map's rows, and those of exited threads (taken out of the map here
 * while the target lives; see fold.c).  Every snapshot read must be
 * deltaed against the one read before it.
 */
int probes__read(struct probes *p, struct snapshot **out);
/*
 * The rows of exited threads kept; of them, of forgotten processes; and
 * the rows merged into the "other" rows by their bound (fold.h).
 */
void probes__exited_rows(const struct probes *p, size_t *rows,
			 size_t *forgotten, uint64_t *merged);
/*
 * Several processes: the frames probes__read_stacks keeps are
 * translate(ctx, pid, pc) of the raw ones (canonical addresses).
 */
void probes__set_translate(struct probes *p,
			   uint64_t (*translate)(void *ctx, pid_t pid,
						 uint64_t pc),
			   void *ctx);
/*
 * Several processes: tab (the one probes__read_stacks fills) keeps the
 * canonical stacks of folded rows too, and probes__read gives every key
 * with canonical addresses (see probes__set_translate) and the folded
 * rows' stacks by their canonical frames.
 */
void probes__set_stacks(struct probes *p, struct stacktab *tab);
/*
 * Adds to tab the stacks of snap's entries that it does not have yet,
 * after draining the kernel's stacks table (stackread.c): a stack read
 * is held by tab, no longer by the kernel.
 */
int probes__read_stacks(struct probes *p, const struct snapshot *snap,
			struct stacktab *tab);
/* Rows the last read found in the stats map. */
size_t probes__rows_read(const struct probes *p);
/*
 * Stacks drained and named by no row read yet, held raw; *let_go: those
 * let go unnamed (probes_config.unnamed_stacks_s).
 */
size_t probes__stacks_pending(const struct probes *p, uint64_t *let_go);
/*
 * The most rows one of the maps read had at the last read (the stats
 * map, a charges map whose exited rows were looked for, the stacks
 * drained): each holds --map-size rows at most.
 */
size_t probes__rows_most(const struct probes *p);
/* Stacks drained since the last read began: made since the read before. */
size_t probes__stacks_drained(const struct probes *p);
/*
 * Time the kernel spent in syncprof's programs, and how many times they
 * ran (all 0 unless sysctl kernel.bpf_stats_enabled is 1).
 */
void probes__bpf_time(struct probes *p, uint64_t *run_ns, uint64_t *runs);
/*
 * With wait_timing: the waits (full mode: calls) the programs timed
 * themselves on, and the time they took for them, entry and exit.
 */
void probes__wait_timing(struct probes *p, uint64_t *bpf_ns, uint64_t *waits);
/*
 * The window that probes__read opens: waits ending from then on carry
 * it, and the read before closed window - 1.
 */
uint64_t probes__window(const struct probes *p);
/*
 * When probes__attach had every probe that counts a wait in place
 * (CLOCK_MONOTONIC), after their load and placing: a report's window
 * starts here.  0: not attached.
 */
uint64_t probes__live_ns(const struct probes *p);
/*
 * --blame: reads the waits charged to releases into a sealed snapshot
 * (the key's call site, stack and thread are the release's), in the
 * window the last probes__read closed.
 */
int probes__read_blame(struct probes *p, struct snapshot **out);
/*
 * --blame's rows of exited threads and processes kept out of its map
 * (blamekeep.c): all of them (rows), of which under their own keys (own,
 * at most own_max); of those taken out, the rows folded by program from
 * their own keys, and those merged into the "other" rows beyond the
 * bound.
 */
struct probes_blame_kept {
	size_t rows, own, own_max;
	uint64_t folded, merged;
};
void probes__blame_kept(const struct probes *p,
			struct probes_blame_kept *out);
/*
 * Contended mode with blame on: the waits charged to the holds they
 * overlapped, by the release that ended each hold (bpf/measure/
 * blame.bpf.h, caused); counts: the waits each release woke.
 */
int probes__read_caused(struct probes *p, struct snapshot **out);
/*
 * --why: reads the charges (totals since attach) and the chains cut or
 * lost into a sealed *out.
 */
struct why;
int probes__read_why(struct probes *p, struct why **out);
/*
 * The waits in progress at now_ns (CLOCK_MONOTONIC), one entry per
 * waiting thread (count 1, wait_ns and max_ns its wait so far), sealed.
 */
int probes__read_waiting(struct probes *p, uint64_t now_ns,
			 struct snapshot **out);
/* Events lost since attach, by cause. */
struct probes_drops {
	uint64_t map_full;	/* new rows with the stats map full */
	uint64_t no_storage;	/* no task storage for a call or a wait */
	uint64_t nested;	/* full mode: calls nested too deep */
	uint64_t skipped;	/* runs the kernel skipped (BPF recursion) */
	uint64_t ring;		/* --record: waits counted, not in the
				   timeline (the ring was full) */
	/* Not events: records of counted waits, not kept (not in the sum). */
	uint64_t blame_full;	/* charges to releases, --blame's map full */
	uint64_t caused_full;	/* parts charged to holds, caused map full */
};

void probes__drops(struct probes *p, struct probes_drops *out);
/* Their sum. */
uint64_t probes__dropped(struct probes *p);
/* Of those, the waits counted in the stats but lost to a full ring. */
uint64_t probes__ring_dropped(struct probes *p);
/* --record: the ring buffer's and the lost-waits table's map fds, or -1. */
int probes__record_ring_fd(const struct probes *p);
int probes__record_lost_fd(const struct probes *p);
/*
 * --states: events of the target's threads that never came (a switch-out
 * after a switch-out, a switch-in of a thread asleep): the kernel did not
 * deliver them, or ran no program for them.  Running and runnable are
 * settled on the kernel's CPU time at the next switch-out.
 */
uint64_t probes__sched_missed(struct probes *p);
/*
 * Full mode: calls whose frame went away without a return (longjmp),
 * counted as failed.
 */
uint64_t probes__abandoned(struct probes *p);
/* Waits whose walk out of libc stopped early: the call site is in libc. */
uint64_t probes__unwind_stopped(struct probes *p);

/* How the stack walks ended, since attach. */
struct probes_stack_counts {
	uint64_t stopped;	/* before the outermost frame */
	uint64_t anon;		/* of which at code in no file (JIT) */
	uint64_t stale;		/* of which right after an exec */
	uint64_t lost;		/* frames not kept: the stacks map was full */
	uint64_t misses;	/* frames looked up past the frame cache */
	uint64_t release_stopped; /* releases' walks left inside libc */
};
void probes__stack_counts(struct probes *p, struct probes_stack_counts *c);

/*
 * Late walks (user/unwind/latewalk.h): the stacks cut because a
 * module's table was read after the wait ended, finished once it is.
 */
struct probes_late_stats {
	uint64_t finished;	/* walked whole with the table read late */
	uint64_t cut;		/* left cut: no table came, the bytes kept
				   ran out, or the ring was full */
	uint64_t pending;	/* waiting for a table */
};

/*
 * Reads the late walks the kernel kept and finishes those whose tables
 * are read, into tab; final: the rest are given up (counted as cut).
 * 0 or -errno.
 */
int probes__finish_late(struct probes *p, struct stacktab *tab, bool final);
void probes__late_stats(struct probes *p, struct probes_late_stats *st);
void probes__free(struct probes *p);

#endif
