// SPDX-License-Identifier: GPL-2.0
/*
 * The options taken together: what argp parsed one by one (options.c) is
 * judged here as a whole, the combinations refused with the reason and
 * the options one implies turned on (--all: --children, --serve and --why:
 * --blame).
 */
#include <errno.h>
#include <stdbool.h>

#include "array.h"
#include "log.h"
#include "options.h"

/*
 * --duty: full mode's probes, attached and detached; --all --mode full is
 * refused (docs/modes.md: its cost falls on every process of the host).
 */
static int options__check_duty(const struct options *opts)
{
	if (opts->all && opts->mode == MODE_FULL) {
		pr_err("--all --mode full is refused: its uprobes would trap "
		       "every pthread lock call of every process on the host "
		       "(0.3-0.9x throughput for a lock-heavy server, "
		       "docs/performance.md); use --all in contended mode, or "
		       "--mode full with --pid or --children");
		return -EINVAL;
	}
	if (!opts->duty_pct)
		return 0;
	if (opts->mode != MODE_FULL) {
		pr_err("--duty PCT (1-100) cycles full mode's uprobes: it needs "
		       "--mode full");
		return -EINVAL;
	}
	if (opts->duty_pct < 100 && (opts->lock_order || opts->blame ||
				     opts->record_dir || opts->chrome)) {
		pr_err("--duty below 100 is not with %s: it needs every lock "
		       "taken and let go (use --duty 100, or leave it out)",
		       opts->lock_order ? "--lock-order" :
		       opts->blame ? "--blame or --why" :
		       opts->record_dir ? "--record" : "--chrome");
		return -EINVAL;
	}
	return 0;
}

/* --replay reads a recording: nothing about a target applies. */
static int options__check_replay(const struct options *opts)
{
	const struct {
		const char *what;
		bool given;
	} refused[] = {
		{ "--pid", opts->pid }, { "a COMMAND", opts->command },
		{ "--record", opts->record_dir },
		{ "--ring-size", opts->ring_size_given },
		{ "--duration", opts->duration_s > 0 },
		{ "--interval", opts->interval_s > 0 }, { "--batch", opts->batch },
		{ "--mode", opts->mode_given },
		{ "--map-size", opts->map_size_given },
		{ "--states", opts->states }, { "--tid", opts->n_tids },
		{ "--type", opts->types }, { "--object", opts->object },
		{ "--min-wait", opts->min_wait_ns },
		{ "--children", opts->children }, { "--all", opts->all },
		{ "--serve", opts->serve },
	};

	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		if (refused[i].given) {
			pr_err("--replay reads a recording; %s does not apply",
			       refused[i].what);
			return -EINVAL;
		}
	}
	if (opts->stacks || opts->format == FORMAT_FOLDED ||
	    opts->format == FORMAT_PPROF) {
		pr_err("a recording keeps each wait's call site, not its stack: "
		       "--replay prints table, csv or json");
		return -EINVAL;
	}
	return 0;
}

bool options__several(const struct options *opts)
{
	return opts->n_pids > 1 || opts->children || opts->all;
}

int options__check(struct options *opts, bool top_given)
{
	int err;

	if (opts->replay_dir && (opts->what_if || opts->progress)) {
		pr_err("--what-if experiments on a running process: not with "
		       "--replay");
		return -EINVAL;
	}
	if (opts->replay_dir)
		return options__check_replay(opts);
	if (opts->ring_size_given && !opts->record_dir && !opts->chrome) {
		pr_err("--ring-size needs --record DIR or --chrome FILE");
		return -EINVAL;
	}
	if (opts->all && (opts->pid || opts->command)) {
		pr_err("--all follows every process: not with --pid or a "
		       "COMMAND");
		return -EINVAL;
	}
	if (opts->all)
		opts->children = true;
	/*
	 * /debug/pprof/mutex is the releasers' profile; --duty below 100
	 * cuts the releases, and serves /metrics and /block without it.
	 */
	if (opts->serve && !(opts->duty_pct && opts->duty_pct < 100))
		opts->blame = true;
	if (opts->pid && opts->command) {
		pr_err("give either --pid PID or a COMMAND, not both");
		return -EINVAL;
	}
	if (!opts->pid && !opts->command && !opts->all) {
		pr_err("nothing to profile: give --pid PID, --all or -- COMMAND "
		       "(see 'syncprof --help')");
		return -EINVAL;
	}
	if (options__several(opts) && (opts->states || opts->record_dir ||
					opts->chrome)) {
		pr_err("%s follows one process: not with several --pid or "
		       "--children", opts->states ? "--states" :
		       opts->record_dir ? "--record" : "--chrome");
		return -EINVAL;
	}
	if (opts->interval_s > 0 && opts->interval_s < OPTIONS_MIN_INTERVAL_S) {
		pr_err("--interval must be at least %g s", OPTIONS_MIN_INTERVAL_S);
		return -EINVAL;
	}
	/* The holders' states of every thread of the machine: too much. */
	if (opts->why && opts->all) {
		pr_err("--why follows the processes given: not with --all "
		       "(give --pid PID,... or --children)");
		return -EINVAL;
	}
	/*
	 * --why is built on both: the releases and the holders' states.
	 * Their sections print where they can; other formats need no file.
	 */
	if (opts->why)
		opts->blame = opts->states = true;
	if (opts->hold && opts->mode != MODE_FULL) {
		pr_err("--hold times holds with probes on the unlock functions: "
		       "it needs --mode full");
		return -EINVAL;
	}
	if (opts->lock_order && opts->mode != MODE_FULL) {
		pr_err("--lock-order sees every lock taken and let go, with "
		       "probes on the lock and unlock functions: it needs "
		       "--mode full");
		return -EINVAL;
	}
	err = options__check_duty(opts);
	if (err)
		return err;
	if (opts->progress && !opts->what_if) {
		pr_err("--progress names the unit of progress of --what-if's "
		       "experiment: give --what-if too");
		return -EINVAL;
	}
	if (opts->what_if && (opts->all || opts->serve)) {
		pr_err("--what-if experiments on the processes followed: not "
		       "with --all or --serve");
		return -EINVAL;
	}
	if (opts->cumulative && opts->interval_s == 0) {
		pr_err("--cumulative needs --interval");
		return -EINVAL;
	}
	if (opts->format == FORMAT_PPROF && !opts->output) {
		pr_err("--format pprof writes a gzipped protobuf file: give "
		       "-o FILE (go tool pprof FILE reads it)");
		return -EINVAL;
	}
	/* A profile is everything: the rows below --top too. */
	if ((opts->format == FORMAT_FOLDED || opts->format == FORMAT_PPROF) &&
	    !top_given)
		opts->top = 0;
	return 0;
}
