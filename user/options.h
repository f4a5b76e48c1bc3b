/* SPDX-License-Identifier: GPL-2.0 */
/* The command line: argp in, one plain settings struct out. */
#ifndef SYNCPROF_OPTIONS_H
#define SYNCPROF_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum sort_key {
	SORT_TOTAL = 0,
	SORT_MEAN,
	SORT_MAX,
	SORT_COUNT,
};

/* How the table names a call site. */
enum callsite_style {
	CALLSITE_LINE = 0,	/* file:line, as QSP */
	CALLSITE_FUNC,		/* function */
	CALLSITE_BOTH,		/* function (file:line) */
};

/* How waits are measured. */
enum measure_mode {
	MODE_FULL = 0,		/* every lock call, by uprobes */
	MODE_CONTENDED,		/* only waits that block, at the futex call */
};

enum output_format {
	FORMAT_TABLE = 0,
	FORMAT_CSV,
	FORMAT_JSON,
	FORMAT_FOLDED,		/* flame-graph input */
	FORMAT_PPROF,		/* gzipped profile.proto, to a file */
};

#define OPTIONS_DEFAULT_TOP		10
#define OPTIONS_DEFAULT_MAP_SIZE	131072
#define OPTIONS_MAX_MAP_SIZE		(1u << 22)
#define OPTIONS_MIN_INTERVAL_S		0.01
/* --ring-size: a power of two from the page size up to 1 GiB. */
#define OPTIONS_DEFAULT_RING_SIZE	(8u << 20)
#define OPTIONS_MAX_RING_SIZE		(1u << 30)
#define OPTIONS_DEFAULT_STACK_DEPTH	32
#define OPTIONS_MAX_STACK_DEPTH		127	/* SP_STACK_MAX_DEPTH */
#define OPTIONS_MAX_SKIP		64
#define OPTIONS_MAX_TIDS		1024
#define OPTIONS_MAX_PIDS		4096	/* --pid, all of them; --all */
/* --serve: series per metric before the rest is summed (--max-series). */
#define OPTIONS_DEFAULT_MAX_SERIES	500

struct options {
	pid_t pid;		/* > 0: attach to this process (the first) */
	pid_t pids[OPTIONS_MAX_PIDS];	/* every --pid, in order, once each */
	size_t n_pids;
	bool children;		/* --children: every descendant too */
	bool all;		/* --all: every process of the host */
	const char *serve;	/* --serve [HOST:]PORT, or NULL */
	unsigned int max_series; /* --serve: series per metric */
	bool per_process;	/* rows of different processes apart */
	char **command;		/* else: launch this, NULL-terminated */
	enum measure_mode mode;
	double duration_s;	/* 0: until Ctrl-C or the target exits */
	double interval_s;	/* 0: one report at the end */
	unsigned int top;	/* rows per report, 0 = all */
	enum sort_key sort;
	bool sort_given;	/* --sort or -m: else the table's rows go by
				   impact (docs/findings.md) */
	bool coalesce;
	bool per_thread;
	bool cumulative;
	bool batch;		/* plain reports even on a terminal */
	bool hist;		/* table: histograms under the rows */
	bool blame;		/* report the release sites that ended waits */
	bool why;		/* --why: holders' states, chains' roots */
	bool hold;		/* full mode: time how long locks are held */
	bool lock_order;	/* full mode: cycles in the lock order */
	unsigned int duty_pct;	/* --duty: full mode's probes on this % of
				   each period; 0: not given (always on) */
	bool off_cpu;		/* --off-cpu: other blocking waits too */
	bool what_if;		/* --what-if: experiment at the end */
	const char *what_if_objects;	/* its OBJECT,... or NULL: the top */
	const char *progress;	/* --progress FUNCTION, or NULL */
	enum output_format format;
	bool stacks;		/* -g: each row's stacks under it */
	enum callsite_style callsite;
	const char *output;	/* NULL: stdout */
	unsigned int map_size;	/* stats map entries */
	bool probe_at_entry;	/* probe first instructions, not cheapest sites */
	bool calibrate;		/* measure and subtract the probes' own time */
	const char *record_dir;	/* --record: the timeline in uftrace's format */
	const char *chrome;	/* --chrome: the timeline as trace-event JSON */
	uint32_t ring_size;	/* --ring-size: bytes, when recording */
	const char *replay_dir;	/* --replay: report from a recording */
	bool ring_size_given;	/* what --replay refuses: given, not defaulted */
	bool mode_given;
	bool map_size_given;
	unsigned int stack_depth; /* frames kept per wait; 0: call site only */
	const char *skip[OPTIONS_MAX_SKIP]; /* --skip globs (argv's strings) */
	unsigned int n_skip;
	bool no_skip;		/* --no-skip: no built-in wrappers */
	/* Filters, applied in the kernel (bpf/stats.bpf.h). */
	pid_t tids[OPTIONS_MAX_TIDS];	/* --tid: only these threads */
	unsigned int n_tids;
	uint32_t types;		/* --type: bit per enum sp_lock_type; 0: all */
	const char *object;	/* --object: a variable's name or 0xADDR */
	uint64_t min_wait_ns;	/* --min-wait: shorter waits not counted */
	bool states;		/* where each thread's time went */
	bool group_threads;	/* --states: one entry per thread name */
	const char *states_csv;	/* --states: CSV lines to this file */
	int ready_fd;		/* --ready-fd: "ready PID" once attached; or -1 */
	int verbosity;
	bool help_shown;	/* --help/--usage/--version printed: exit 0 */
	bool help_full;		/* --help: the columns follow the options */
};

/* Fills *opts from argv; 0, or -EINVAL after printing why. */
int options__parse(struct options *opts, int argc, char **argv);
/*
 * The parsed options taken together (optcheck.c): 0, or -EINVAL after
 * printing why; top_given: --top was on the command line.
 */
int options__check(struct options *opts, bool top_given);
const char *options__sort_name(enum sort_key key);
const char *options__format_name(enum output_format format);
const char *options__mode_name(enum measure_mode mode);
/*
 * --ring-size's value: bytes, or with a K, M or G suffix (binary); a
 * power of two from page_size to OPTIONS_MAX_RING_SIZE.  0 or -EINVAL
 * (nothing printed).
 */
int options__parse_size(const char *arg, unsigned long page_size,
			uint32_t *out);
/* Whether the run records a timeline (--record or --chrome, not --replay). */
bool options__recording(const struct options *opts);
/* Several processes: more than one --pid, or --children. */
bool options__several(const struct options *opts);

#endif
