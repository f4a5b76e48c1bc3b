// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "locktype.h"
#include "log.h"
#include "optvalue.h"
#include "options.h"
#include "readiness.h"

#define SYNCPROF_VERSION "0.2"

enum {
	OPT_MAP_SIZE = 0x100,
	OPT_CALLSITE,
	OPT_PROBE_AT,
	OPT_NO_CALIBRATE,
	OPT_USAGE,
	OPT_BATCH,
	OPT_MODE,
	OPT_RECORD,
	OPT_CHROME,
	OPT_RING_SIZE,
	OPT_REPLAY,
	OPT_STACK_DEPTH,
	OPT_SKIP,
	OPT_NO_SKIP,
	OPT_STATES,
	OPT_GROUP_THREADS,
	OPT_STATES_CSV,
	OPT_HIST,
	OPT_BLAME,
	OPT_HOLD,
	OPT_LOCK_ORDER,
	OPT_DUTY,
	OPT_TID,
	OPT_TYPE,
	OPT_OBJECT,
	OPT_MIN_WAIT,
	OPT_CHILDREN,
	OPT_PER_PROCESS,
	OPT_ALL,
	OPT_SERVE,
	OPT_MAX_SERIES,
	OPT_READY_FD,
	OPT_OFF_CPU,
	OPT_WHY,
	OPT_WHAT_IF,
	OPT_PROGRESS,
};

static const char doc[] =
"syncprof -- where the threads of a running process wait on locks.\n\n"
"Prints a report in the shape of QEMU's QSP: one row per lock type, "
"object and call site. Nothing is rebuilt, restarted or preloaded; the "
"target runs on unchanged when syncprof stops.\n\n"
"--mode contended (default): only waits that block in the kernel are seen, at the "
"futex system call; an uncontended lock is never probed. Count is the "
"number of contended acquisitions: acquisitions whose thread went into "
"the kernel to wait, however many futex waits that took. Wait Time is the "
"time blocked in the kernel. A wait that times out adds to Failed. Types: "
"mutex, rec_mutex, condvar (the wait for the signal; taking the mutex "
"back afterwards is a separate mutex row at the same call site), "
"rwlock-r, rwlock-w, sem, libc-lock (glibc's own stdio and malloc locks) "
"and futex (any other futex wait). With --per-thread, rows are also split "
"by the mutex's holder when the thread blocked (JSON owner_tid).\n\n"
"--mode full: uprobes on the pthread lock functions of the target's libc: "
"mutexes, condvar waits, rwlocks, semaphores (sem_wait, sem_trywait, "
"sem_timedwait, sem_clockwait), barriers and spinlocks, each with its "
"trylock, timed and clock calls. Count is the number of successful "
"acquisitions (a failed trylock or a timeout adds time but no count; every "
"thread through a barrier counts); Wait Time is the time spent inside the "
"call; every call pays the probes (~2 us here). Types: mutex, rec_mutex, "
"condvar, rwlock-r, rwlock-w, sem, barrier, spinlock (only full mode sees "
"spinlocks: they never sleep).\n\n"
"In both modes Average = the wait of the counted acquisitions / Count "
"(failed waits left out; '-' without a count), Max is the longest single "
"wait, and Failed counts the waits that ended without the lock.\n\n"
"--blame adds who made them wait: each wait a release ended (an unlock, a "
"condvar signal or broadcast, a semaphore post, a futex wake) is charged "
"to where the releasing thread called it, in a section of its own. "
"--hist draws each row's distribution of waits; --hold (full mode) times "
"how long each lock was held.\n\n"
"Profiles: --format folded prints flame-graph input (flamegraph.pl, "
"inferno): one line per distinct stack, frames outermost first joined "
"by ';', the lock last, then the wait in ns. --format pprof -o FILE "
"writes a gzipped profile.proto (contentions/count, delay/nanoseconds) "
"for go tool pprof. Both hold every row unless --top is given.\n\n"
"A DURATION (--duration, --interval, --min-wait) is a number of seconds, "
"or a number and a unit: ns, us, ms, s, m or h (2, 1.5s, 500ms, 10us, 2m). "
"A report's elapsed is its window: from when the probes were in (or the "
"report before) to the report. "
"The columns of the table are explained after the options."
"\v"
"Examples:\n"
"  syncprof --pid 4242                     report on Ctrl-C\n"
"  syncprof --pid 4242 --interval 1        live screen, like top\n"
"  syncprof -p 4242 -d 10 -s mean -n -N 20\n"
"  syncprof --format json -i 5 -- ./server --port 9000\n"
"  syncprof --states --group-threads -p 4242 -d 5   where threads' time went\n";

static const char args_doc[] = "--pid PID | -- COMMAND [ARG...] | --replay DIR";

static const struct argp_option option_table[] = {
	{ NULL, 0, NULL, 0, "Target:", 0 },
	{ "pid", 'p', "PID[,PID]", 0,
	  "Attach to running process PID (all threads); several: a list, or "
	  "--pid again", 0 },
	{ "children", OPT_CHILDREN, NULL, 0,
	  "Also every descendant of the targets, present and future (fork, "
	  "clone of a process, vfork, exec), from its first instruction; in "
	  "attach and launch mode", 0 },
	{ "all", OPT_ALL, NULL, 0,
	  "Every process of the host, present and future, in containers "
	  "too; syncprof itself left out", 0 },
	{ "mode", OPT_MODE, "MODE", 0,
	  "contended (default): only waits that block in the kernel, at the "
	  "futex system call; full: every lock call, by uprobes (see above)", 0 },
	{ NULL, 0, NULL, 0, "When to report:", 0 },
	{ "duration", 'd', "DURATION", 0,
	  "Stop after DURATION (default: Ctrl-C or target exit), counted "
	  "from when the probes are in", 0 },
	{ "interval", 'i', "DURATION", 0,
	  "Report every DURATION; on a terminal, a live screen that "
	  "refreshes every DURATION (keys: ? for help, q to quit)", 0 },
	{ "cumulative", 'c', NULL, 0, "With --interval: totals since attach, not deltas", 0 },
	{ "batch", OPT_BATCH, NULL, 0,
	  "With --interval: plain reports even on a terminal, no live screen", 0 },
	{ NULL, 0, NULL, 0, "Serving (Prometheus, pprof):", 0 },
	{ "serve", OPT_SERVE, "[HOST:]PORT", 0,
	  "Run until SIGINT or SIGTERM and serve over HTTP (default host "
	  "127.0.0.1): /metrics for Prometheus, /debug/pprof/block and "
	  "/debug/pprof/mutex (?seconds=N) for pprof scrapers; implies --blame",
	  0 },
	{ "max-series", OPT_MAX_SERIES, "N", 0,
	  "--serve: series per metric, the \"other\" ones included (default "
	  "500, at least 3); waits of the rest are summed under "
	  "callsite=\"other\"", 0 },
	{ NULL, 0, NULL, 0, "What to report:", 0 },
	{ "top", 'N', "N", 0, "Rows per report (default 10; 0 = all)", 0 },
	{ "sort", 's', "KEY", 0, "total | mean | max | count (default: total, "
	  "each thread's waits weighed by impact)", 0 },
	{ NULL, 'm', NULL, 0, "Same as --sort mean", 0 },
	{ "no-coalesce", 'n', NULL, 0, "One row per object, not per call site", 0 },
	{ "per-thread", 'T', NULL, 0, "One row per thread", 0 },
	{ "per-process", OPT_PER_PROCESS, NULL, 0,
	  "One row per process: rows of processes that share a call site "
	  "(same module and offset) are otherwise merged", 0 },
	{ "format", 'f', "FMT", 0, "table (default) | csv | json | folded | pprof", 0 },
	{ "stacks", 'g', NULL, 0,
	  "Table and live screen: each row's distinct stacks under it, with "
	  "their share of its wait and count", 0 },
	{ "output", 'o', "FILE", 0, "Write reports to FILE instead of stdout", 0 },
	{ "callsite", OPT_CALLSITE, "STYLE", 0,
	  "How the table names call sites: line (file:line, default) | func | both", 0 },
	{ "blame", OPT_BLAME, NULL, 0,
	  "Also report where the lock was released when each waiter woke "
	  "(the holder's unlock, signal or post): the wait each release "
	  "site caused", 0 },
	{ "why", OPT_WHY, NULL, 0,
	  "Either mode, across processes too (not --all): for each row, "
	  "what the holders did while its waiters waited (running, "
	  "runnable, lock wait, sleep) and where "
	  "each chain of waits ends (the last holder's release site); "
	  "runs --blame's and --states' probes", 0 },
	{ "hold", OPT_HOLD, NULL, 0,
	  "--mode full: also time how long each lock was held, from the "
	  "return of the call that took it to its unlock (Hold Time and "
	  "Average Hold columns, JSON hold_ns and hold_max_ns)", 0 },
	{ "duty", OPT_DUTY, "PCT", 0,
	  "--mode full: the probes sample a window of PCT% of each second "
	  "only (1-100); counts and totals are scaled by the windows' time "
	  "and marked as estimates, means and maxima come from the windows "
	  "(docs/modes.md)", 0 },
	{ "lock-order", OPT_LOCK_ORDER, NULL, 0,
	  "--mode full: the order in which each thread takes locks; report "
	  "every cycle (a possible deadlock, even one that never happened) "
	  "with both sites (JSON lock_order)", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0,
	  "Also every other blocking wait of the target's threads, typed by "
	  "the system call: poll, io, sleep, child, flock, sem, syscall, "
	  "fault (docs/off-cpu.md)", 0 },
	{ "what-if", OPT_WHAT_IF, "OBJECT,...", OPTION_ARG_OPTIONAL,
	  "At the end, experiment on the running target: how much faster it "
	  "would go if each lock's critical sections were 25% and 50% "
	  "shorter (default: the three locks with the most wait that some "
	  "progress waits for); a few seconds per lock, delays of at most 10 ms per hold (docs/what-if.md)", 0 },
	{ "progress", OPT_PROGRESS, "FUNCTION", 0,
	  "--what-if: the target's function whose calls count as progress "
	  "(a request served); without it, lock acquisitions", 0 },
	{ "hist", OPT_HIST, NULL, 0,
	  "Table: each row's log2 histogram of single waits under it, in ns "
	  "(JSON rows always have theirs)", 0 },
	{ NULL, 0, NULL, 0, "Filters (applied in the kernel; see the man page):", 0 },
	{ "tid", OPT_TID, "TID", 0,
	  "Only the waits of thread TID (repeatable, or TID,TID,...)", 0 },
	{ "type", OPT_TYPE, "TYPE", 0,
	  "Only locks of TYPE (repeatable, or TYPE,TYPE,...): mutex, "
	  "rec_mutex, condvar, rwlock-r, rwlock-w, sem, libc-lock, futex, "
	  "barrier, spinlock, join, park; --off-cpu: poll, io, sleep, child, "
	  "flock, syscall, fault; or a class: lock (waits for a lock), event "
	  "(waits for something to happen)", 0 },
	{ "object", OPT_OBJECT, "SYMBOL|ADDR", 0,
	  "Only the lock at ADDR (0x...), or inside the global or static "
	  "variable SYMBOL or its member (queue.not_empty, table[3].lock)", 0 },
	{ "min-wait", OPT_MIN_WAIT, "DURATION", 0,
	  "Leave out each wait shorter than DURATION (e.g. 500ns, 10us, 5ms, "
	  "1): it adds nothing to Count, Failed, Wait Time or the histograms; "
	  "idle workers' short naps, or everything but the long stalls", 0 },
	{ NULL, 0, NULL, 0, "Timeline:", 0 },
	{ "record", OPT_RECORD, "DIR", 0,
	  "Also record every wait as a span on its thread, in uftrace's data "
	  "format: uftrace replay|report|tui|dump -d DIR reads it; each span is "
	  "named 'type object @ call site'", 0 },
	{ "chrome", OPT_CHROME, "FILE", 0,
	  "Also write every wait as Chrome trace-event JSON (Perfetto, "
	  "chrome://tracing); with --replay, from the recording", 0 },
	{ "ring-size", OPT_RING_SIZE, "BYTES", 0,
	  "The buffer the kernel hands waits to syncprof through: a power of "
	  "two, K/M/G suffixes (default 8M); when it is full, waits are left "
	  "out of the timeline, counted in 'dropped' and marked where they "
	  "were lost", 0 },
	{ "replay", OPT_REPLAY, "DIR", 0,
	  "Print the reports of a recording made with --record DIR, as the run "
	  "printed them, with this run's --sort, --no-coalesce, --per-thread, "
	  "--top, --format (table, csv or json), --callsite, --cumulative; "
	  "needs no root", 0 },
	{ NULL, 0, NULL, 0, "Stacks:", 0 },
	{ "stack-depth", OPT_STACK_DEPTH, "N", 0,
	  "Frames kept per wait, from the first outside libc (default 32, "
	  "at most 127; 0: the call site only)", 0 },
	{ "skip", OPT_SKIP, "GLOB", 0,
	  "A function that is part of the lock implementation (demangled "
	  "name, shell glob; repeatable): the call site is the first frame "
	  "outside libc and outside these; added to the built-in runtimes' "
	  "lock functions (QEMU, GLib, Rust, libstdc++, PostgreSQL, InnoDB, "
	  "Abseil, folly, HotSpot)", 0 },
	{ "no-skip", OPT_NO_SKIP, NULL, 0,
	  "Without the built-in runtimes' lock functions: the call site is "
	  "the first frame outside libc (and --skip), and runtimes' waits "
	  "are typed by libc alone", 0 },
	{ NULL, 0, NULL, 0, "Thread states:", 0 },
	{ "states", OPT_STATES, NULL, 0,
	  "Also where each thread's time went: running, runnable (waiting for "
	  "a CPU), lock wait (by lock type), other sleep", 0 },
	{ "group-threads", OPT_GROUP_THREADS, NULL, 0,
	  "With --states: one entry per thread name, its threads summed "
	  "(implies --states)", 0 },
	{ "states-csv", OPT_STATES_CSV, "FILE", 0,
	  "With --states: one CSV line per thread and report to FILE, after a "
	  "header line (implies --states)", 0 },
	{ NULL, 0, NULL, 0, "Limits and diagnostics:", 0 },
	{ "map-size", OPT_MAP_SIZE, "N", 0,
	  "Distinct rows kept in the kernel (default 131072); rows beyond are dropped and counted", 0 },
	{ "probe-at", OPT_PROBE_AT, "WHERE", 0,
	  "auto (default): each probe on the cheapest safe instruction; entry: on the first", 0 },
	{ "no-calibrate", OPT_NO_CALIBRATE, NULL, 0,
	  "Keep the probes' own time (~us) in every measured call", 0 },
	{ "ready-fd", OPT_READY_FD, "FD", 0,
	  "Once attached (every probe in place, a launched COMMAND let go), "
	  "write 'ready PID' and a newline to file descriptor FD and close it: "
	  "a script waits for that, not for a fixed time", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics on stderr (repeat for debug)", 0 },
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print the version and libbpf's", -1 },
	{ 0 },
};

/* --pid PID[,PID...]: added to the list, each once. */
static int parse_pids(const char *arg, struct options *opts)
{
	char item[32];
	const char *at = arg;

	do {
		const char *comma = strchr(at, ',');
		size_t len = comma ? (size_t)(comma - at) : strlen(at);
		unsigned long n;
		bool known = false;
		int err;

		if (len >= sizeof(item))
			len = sizeof(item) - 1;
		memcpy(item, at, len);
		item[len] = '\0';
		err = optvalue__uint("--pid", item, 1, INT_MAX, &n);
		if (err)
			return err;
		for (size_t i = 0; i < opts->n_pids; i++)
			known |= opts->pids[i] == (pid_t)n;
		if (!known) {
			if (opts->n_pids == OPTIONS_MAX_PIDS) {
				pr_err("too many --pid: at most %d processes "
				       "(--children follows descendants)",
				       OPTIONS_MAX_PIDS);
				return -EINVAL;
			}
			opts->pids[opts->n_pids++] = (pid_t)n;
		}
		if (!opts->pid)
			opts->pid = (pid_t)n;
		at = comma ? comma + 1 : NULL;
	} while (at);
	return 0;
}

int options__parse_size(const char *arg, unsigned long page_size,
			uint32_t *out)
{
	unsigned long long v, shift = 0;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*arg))
		return -EINVAL;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end || v > (OPTIONS_MAX_RING_SIZE >> shift))
		return -EINVAL;
	v <<= shift;
	if (v < page_size || (v & (v - 1)))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

bool options__recording(const struct options *opts)
{
	return !opts->replay_dir && (opts->record_dir || opts->chrome);
}

/*
 * One --type name, or a comma-separated list of them, into a bit mask; a
 * class's name ("lock", "event") stands for each of its types.
 */
static int parse_types(const char *arg, uint32_t *mask)
{
	char *copy = strdup(arg), *save = NULL;
	const char *names[SP_TYPE__COUNT + LOCK_CLASS__COUNT];
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (int t = 0; t < SP_TYPE__COUNT; t++)
		names[t] = locktype__name((uint32_t)t);
	for (int c = 0; c < LOCK_CLASS__COUNT; c++)
		names[SP_TYPE__COUNT + c] =
			locktype__class_name((enum lock_class)c);
	for (char *tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		int choice;

		err = optvalue__choice("--type", tok, names, (int)ARRAY_SIZE(names),
				   &choice);
		if (err || choice < SP_TYPE__COUNT) {
			*mask |= err ? 0 : 1u << choice;
			continue;
		}
		for (uint32_t t = 0; t < SP_TYPE__COUNT; t++)
			if ((int)locktype__class_of(t) == choice - SP_TYPE__COUNT)
				*mask |= 1u << t;
	}
	if (!err && !*mask) {
		pr_err("invalid --type '%s': expected a lock type", arg);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/* One --tid, or a comma-separated list of them. */
static int parse_tids(const char *arg, struct options *opts)
{
	char *copy = strdup(arg), *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long n;

		err = optvalue__uint("--tid", tok, 1, INT_MAX, &n);
		if (!err && opts->n_tids >= OPTIONS_MAX_TIDS) {
			pr_err("too many --tid (at most %d)", OPTIONS_MAX_TIDS);
			err = -EINVAL;
		}
		if (!err)
			opts->tids[opts->n_tids++] = (pid_t)n;
	}
	free(copy);
	return err;
}

/* The choices' names, by their enums' values. */
static const char *const sort_names[] = {
	[SORT_TOTAL] = "total", [SORT_MEAN] = "mean", [SORT_MAX] = "max",
	[SORT_COUNT] = "count",
};
static const char *const format_names[] = {
	[FORMAT_TABLE] = "table", [FORMAT_CSV] = "csv", [FORMAT_JSON] = "json",
	[FORMAT_FOLDED] = "folded", [FORMAT_PPROF] = "pprof",
};
static const char *const callsite_names[] = {
	[CALLSITE_LINE] = "line", [CALLSITE_FUNC] = "func",
	[CALLSITE_BOTH] = "both",
};
static const char *const probe_at_names[] = { "auto", "entry" };
static const char *const mode_names[] = {
	[MODE_FULL] = "full", [MODE_CONTENDED] = "contended",
};

/* parse_choice over a whole array of names. */
#define PARSE_CHOICE(option, arg, names, out) \
	optvalue__choice(option, arg, names, (int)ARRAY_SIZE(names), out)

const char *options__mode_name(enum measure_mode mode)
{
	return mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "?";
}

const char *options__sort_name(enum sort_key key)
{
	return key < ARRAY_SIZE(sort_names) ? sort_names[key] : "?";
}

const char *options__format_name(enum output_format format)
{
	return format < ARRAY_SIZE(format_names) ? format_names[format] : "?";
}

/* What the parser works on: the options, and whether it said what failed. */
struct parse_state {
	struct options *opts;
	bool reported;
	bool top_given;		/* --top on the command line */
};

/*
 * The parsers of options__parse_one, one kind of option each: each
 * returns 0, -errno (the error already printed), or OPT_NOT_MINE for a
 * key it does not know.
 */
#define OPT_NOT_MINE 1

/* The options that only switch something on or off. */
static int options__parse_switch(int key, struct options *opts)
{
	switch (key) {
	case OPT_CHILDREN:
		opts->children = true;
		break;
	case OPT_PER_PROCESS:
		opts->per_process = true;
		break;
	case OPT_ALL:
		opts->all = true;
		break;
	case 'c':
		opts->cumulative = true;
		break;
	case OPT_BATCH:
		opts->batch = true;
		break;
	case OPT_HIST:
		opts->hist = true;
		break;
	case OPT_BLAME:
		opts->blame = true;
		break;
	case OPT_WHY:
		opts->why = true;
		break;
	case OPT_OFF_CPU:
		opts->off_cpu = true;
		break;
	case OPT_HOLD:
		opts->hold = true;
		break;
	case OPT_LOCK_ORDER:
		opts->lock_order = true;
		break;
	case 'g':
		opts->stacks = true;
		break;
	case 'm':
		opts->sort = SORT_MEAN;
		opts->sort_given = true;
		break;
	case 'n':
		opts->coalesce = false;
		break;
	case 'T':
		opts->per_thread = true;
		break;
	case OPT_NO_CALIBRATE:
		opts->calibrate = false;
		break;
	case OPT_NO_SKIP:
		opts->no_skip = true;
		break;
	case OPT_STATES:
		opts->states = true;
		break;
	case OPT_GROUP_THREADS:
		opts->states = opts->group_threads = true;
		break;
	case 'v':
		opts->verbosity++;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return 0;
}

/* --what-if's experiment at the end: which locks, what counts as progress. */
static int options__parse_experiment(int key, char *arg, struct options *opts)
{
	switch (key) {
	case OPT_WHAT_IF:
		opts->what_if = true;
		opts->what_if_objects = arg && *arg ? arg : NULL;
		break;
	case OPT_PROGRESS:
		opts->progress = arg;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return 0;
}

/* What to watch, for how long, and which waits (--pid, --tid, --type...). */
static int options__parse_scope(int key, char *arg, struct options *opts)
{
	unsigned long n = 0;
	int err = 0;

	switch (key) {
	case 'p':
		err = parse_pids(arg, opts);
		break;
	case OPT_SERVE:
		opts->serve = arg;
		break;
	case OPT_MAX_SERIES:
		err = optvalue__uint("--max-series", arg, 3, 100000, &n);
		opts->max_series = (unsigned int)n;
		break;
	case 'd':
		err = optvalue__seconds("--duration", arg, &opts->duration_s);
		break;
	case 'i':
		err = optvalue__seconds("--interval", arg, &opts->interval_s);
		break;
	case OPT_TID:
		err = parse_tids(arg, opts);
		break;
	case OPT_TYPE:
		err = parse_types(arg, &opts->types);
		break;
	case OPT_OBJECT:
		if (!*arg) {
			pr_err("invalid --object '': expected a variable's name "
			       "or an address (0x...)");
			err = -EINVAL;
		}
		opts->object = arg;
		break;
	case OPT_MIN_WAIT:
		err = optvalue__duration("--min-wait", arg, &opts->min_wait_ns);
		break;
	case OPT_READY_FD:
		err = optvalue__uint("--ready-fd", arg, 0, INT_MAX, &n);
		if (!err && readiness__claim((int)n)) {
			pr_err("invalid --ready-fd '%s': not a file descriptor "
			       "open for writing", arg);
			err = -EINVAL;
		}
		if (!err)
			opts->ready_fd = (int)n;
		break;
	case OPT_STATES_CSV:
		opts->states = true;
		opts->states_csv = arg;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return err;
}

/* How the report is printed: --top, --sort, --format, --output... */
static int options__parse_report(int key, char *arg, struct parse_state *ps)
{
	struct options *opts = ps->opts;
	unsigned long n = 0;
	int choice = 0, err = 0;

	switch (key) {
	case OPT_DUTY:
		err = optvalue__uint("--duty", arg, 1, 100, &n);
		if (!err)
			opts->duty_pct = (unsigned int)n;
		break;
	case 'N':
		err = optvalue__uint("--top", arg, 0, 1000000, &n);
		if (!err)
			opts->top = (unsigned int)n;
		ps->top_given = true;
		break;
	case 's':
		err = PARSE_CHOICE("--sort", arg, sort_names, &choice);
		if (!err)
			opts->sort = choice;
		opts->sort_given = true;
		break;
	case 'f':
		err = PARSE_CHOICE("--format", arg, format_names, &choice);
		if (!err)
			opts->format = choice;
		break;
	case 'o':
		opts->output = arg;
		break;
	case OPT_CALLSITE:
		err = PARSE_CHOICE("--callsite", arg, callsite_names, &choice);
		if (!err)
			opts->callsite = choice;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return err;
}

/* How the probes attach and what they keep: --mode, --skip, --record... */
static int options__parse_probes(int key, char *arg, struct options *opts)
{
	unsigned long n = 0;
	int choice = 0, err = 0;

	switch (key) {
	case OPT_MODE:
		err = PARSE_CHOICE("--mode", arg, mode_names, &choice);
		if (!err) {
			opts->mode = choice;
			opts->mode_given = true;
		}
		break;
	case OPT_PROBE_AT:
		err = PARSE_CHOICE("--probe-at", arg, probe_at_names, &choice);
		if (!err)
			opts->probe_at_entry = choice == 1;
		break;
	case OPT_STACK_DEPTH:
		err = optvalue__uint("--stack-depth", arg, 0, OPTIONS_MAX_STACK_DEPTH, &n);
		if (!err)
			opts->stack_depth = (unsigned int)n;
		break;
	case OPT_SKIP:
		if (!*arg) {
			pr_err("invalid --skip '': expected a function name or glob");
			err = -EINVAL;
		} else if (opts->n_skip >= OPTIONS_MAX_SKIP) {
			pr_err("too many --skip (at most %d)", OPTIONS_MAX_SKIP);
			err = -EINVAL;
		} else {
			opts->skip[opts->n_skip++] = arg;
		}
		break;
	case OPT_MAP_SIZE:
		err = optvalue__uint("--map-size", arg, 1, OPTIONS_MAX_MAP_SIZE, &n);
		if (!err) {
			opts->map_size = (unsigned int)n;
			opts->map_size_given = true;
		}
		break;
	case OPT_RECORD:
		opts->record_dir = arg;
		break;
	case OPT_CHROME:
		opts->chrome = arg;
		break;
	case OPT_REPLAY:
		opts->replay_dir = arg;
		break;
	case OPT_RING_SIZE: {
		long page = sysconf(_SC_PAGESIZE);

		err = options__parse_size(arg, page > 0 ? (unsigned long)page : 4096,
					  &opts->ring_size);
		if (err)
			pr_err("invalid --ring-size '%s': expected a power of two "
			       "from %ld (the page size) to %u bytes, e.g. 64K "
			       "or 8M", arg, page, OPTIONS_MAX_RING_SIZE);
		else
			opts->ring_size_given = true;
		break;
	}
	default:
		return OPT_NOT_MINE;
	}
	return err;
}

/* argp's own keys, the command, and the options that print and stop. */
static int options__parse_meta(int key, struct argp_state *state,
			       struct options *opts)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		opts->help_shown = opts->help_full = true;
		state->next = state->argc;
		break;
	case OPT_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE);
		opts->help_shown = true;
		state->next = state->argc;
		break;
	case 'V':
		printf("syncprof %s (libbpf %u.%u)\n", SYNCPROF_VERSION,
		       libbpf_major_version(), libbpf_minor_version());
		opts->help_shown = true;
		state->next = state->argc;
		break;
	case ARGP_KEY_INIT:
		/* getopt's errors carry argv[0], the error prefix; the hint
		   after them is ours to print. */
		state->err_stream = NULL;
		break;
	case ARGP_KEY_ARG:
		/* The command and everything after it belong to the command. */
		opts->command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return 0;
}

static error_t options__parse_one(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct options *opts = ps->opts;
	int err;

	/* argv[0] is the error prefix (see options__parse), not our name. */
	state->name = "syncprof";
	err = options__parse_switch(key, opts);
	if (err == OPT_NOT_MINE)
		err = options__parse_scope(key, arg, opts);
	if (err == OPT_NOT_MINE)
		err = options__parse_report(key, arg, ps);
	if (err == OPT_NOT_MINE)
		err = options__parse_probes(key, arg, opts);
	if (err == OPT_NOT_MINE)
		err = options__parse_experiment(key, arg, opts);
	if (err == OPT_NOT_MINE)
		err = options__parse_meta(key, state, opts);
	if (err == OPT_NOT_MINE)
		return ARGP_ERR_UNKNOWN;
	if (err)
		ps->reported = true;
	return err ? EINVAL : 0;
}


int options__parse(struct options *opts, int argc, char **argv)
{
	static const struct argp argp = {
		.options = option_table,
		.parser = options__parse_one,
		.args_doc = args_doc,
		.doc = doc,
	};
	struct parse_state ps = { .opts = opts };
	bool states_asked;
	int err;

	*opts = (struct options){
		.top = OPTIONS_DEFAULT_TOP,
		.sort = SORT_TOTAL,
		.coalesce = true,
		.format = FORMAT_TABLE,
		.map_size = OPTIONS_DEFAULT_MAP_SIZE,
		.calibrate = true,
		.mode = MODE_CONTENDED,
		.ring_size = OPTIONS_DEFAULT_RING_SIZE,
		.stack_depth = OPTIONS_DEFAULT_STACK_DEPTH,
		.max_series = OPTIONS_DEFAULT_MAX_SERIES,
		.ready_fd = -1,
	};
	/* getopt prefixes its errors with argv[0]: make it everyone's. */
	char **args = calloc((size_t)argc + 1, sizeof(*args));

	if (!args)
		return -ENOMEM;
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	args[0] = (char *)log__error_prefix();
	/* In order, so options after COMMAND stay the command's. */
	err = argp_parse(&argp, argc, args,
			 ARGP_IN_ORDER | ARGP_NO_EXIT | ARGP_NO_HELP, NULL, &ps);
	if (opts->command)
		opts->command = argv + (opts->command - args);
	free(args);
	if (err) {
		/* getopt said what was wrong; point at the help. */
		if (!ps.reported)
			fprintf(stderr, "Try 'syncprof --help' for the options.\n");
		return -EINVAL;
	}
	if (opts->help_shown)
		return 0;
	states_asked = opts->states;
	err = options__check(opts, ps.top_given);
	if (err || opts->replay_dir)
		return err;
	/* Thread states print in the table and JSON; elsewhere, a file. */
	if (states_asked && opts->format != FORMAT_TABLE &&
	    opts->format != FORMAT_JSON && !opts->states_csv) {
		pr_err("--states with --format %s: give --states-csv FILE for "
		       "the thread lines (they have columns of their own)",
		       options__format_name(opts->format));
		return -EINVAL;
	}
	return 0;
}
