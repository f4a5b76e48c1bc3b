// SPDX-License-Identifier: GPL-2.0
/*
 * An uncontended pthread_mutex_lock takes ~30 ns; through an entry and a
 * return uprobe the BPF clock reads ~0.3-20 us on these PVM guests (the
 * traps' own time between the two bpf_ktime_get_ns() calls).  That bias
 * is the same for every call, contended or not, so it is measured once
 * and the BPF program subtracts it from every call, clamped at 0.
 *
 * How: a forked child locks CALIBRATE_CALLS distinct private mutexes once
 * each under the same probes, so that each map row holds exactly one
 * call's interval.  The figure is the lower quartile of those intervals.
 * A call preempted between its two probes reads milliseconds: on a busy
 * machine (a CPU hog at nice -15 here) most single-stepped calls are,
 * and the old figure, the median of 7 rounds' means of 200 calls, read
 * 1085-1202 us where the probes cost 14 us (a loaded run elsewhere: 6.80
 * us against 0.4-0.6).  Single calls let the clean ones show: when the
 * quartile stays well above the fastest call after CALIBRATE_TRIES
 * samples, the fastest call is taken instead (it undercuts the typical
 * cost by a little, never by much) and syncprof warns.
 *
 * The cost depends on how the kernel runs the probed instruction
 * (emulated or single-stepped, ~0.3-5 vs ~4-19 us here), so
 * pthread_mutex_lock is measured at the site the probes use and at its
 * first instruction when that is of the other kind: both figures are
 * measured, not derived.  A single-stepped figure below the emulated one
 * means one of them was disturbed: the smaller is used for both, with a
 * warning.  A kind that could not be measured gets the smaller figure,
 * never more than a probe costs.  The child maps syncprof's own libc, so
 * a target with another libc build gets the figures of this one.
 * Rejected: calibrating inside the target (it must not be run).
 *
 * It runs in a thread of its own (calibrate__start) while the real
 * programs load: its own load is the verifier's work on the lock calls'
 * two programs, and on a busy machine the two loads side by side on two
 * CPUs took the wall time of one.  The figures go into the loaded
 * programs' writable data before the probes attach.  Rejected: the real
 * object's programs on the child (their filter is the target's PID, a
 * constant the verifier folds; their rows would be the target's).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate.h"
#include "log.h"
#include "sortorder.h"
#include "probes.h"
#include "target.h"

/* Sessions of the child: one per sample, each on mutexes of its own. */
#define SESSIONS (SP_SITE__COUNT * CALIBRATE_TRIES)

uint64_t calibrate__median(uint64_t *values, unsigned int n)
{
	if (!n)
		return 0;
	qsort(values, n, sizeof(*values), order__u64_at);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void calibrate__summarize(uint64_t *intervals, unsigned int n,
			  struct calibrate_sample *out)
{
	*out = (struct calibrate_sample){ 0 };
	if (!n)
		return;
	qsort(intervals, n, sizeof(*intervals), order__u64_at);
	out->calls = n;
	out->min_ns = intervals[0];
	out->quartile_ns = intervals[n / 4];
	out->median_ns = intervals[n / 2];
	out->max_ns = intervals[n - 1];
	/* Clean calls agree within a few hundred ns (make bench). */
	out->stable = out->quartile_ns <= out->min_ns + out->min_ns / 4 + 200;
}

void calibrate__settle(struct calibration *cal)
{
	uint64_t least = UINT64_MAX;

	cal->unstable = false;
	for (int k = 0; k < SP_SITE__COUNT; k++) {
		const struct calibrate_sample *s = &cal->sample[k];

		if (!cal->measured[k])
			continue;
		if (s->stable) {
			cal->by_site[k] = s->quartile_ns;
		} else {
			cal->by_site[k] = s->min_ns;
			cal->unstable = true;
		}
	}
	if (cal->measured[SP_SITE_EMULATED] && cal->measured[SP_SITE_STEPPED] &&
	    cal->by_site[SP_SITE_EMULATED] > cal->by_site[SP_SITE_STEPPED]) {
		cal->by_site[SP_SITE_EMULATED] = cal->by_site[SP_SITE_STEPPED];
		cal->inverted = true;
		cal->unstable = true;
	}
	for (int k = 0; k < SP_SITE__COUNT; k++)
		if (cal->measured[k] && cal->by_site[k] < least)
			least = cal->by_site[k];
	for (int k = 0; k < SP_SITE__COUNT; k++)
		if (!cal->measured[k])
			cal->by_site[k] = least == UINT64_MAX ? 0 : least;
}

/*
 * The child: for each session byte s read, locks mutexes
 * [s * CALIBRATE_CALLS, (s + 1) * CALIBRATE_CALLS) once each, then
 * answers with a byte.
 */
static void calibrate__child(int go_fd, int done_fd)
{
	static pthread_mutex_t locks[SESSIONS * CALIBRATE_CALLS];
	unsigned char session;

	for (size_t i = 0; i < SESSIONS * CALIBRATE_CALLS; i++)
		pthread_mutex_init(&locks[i], NULL);
	while (read(go_fd, &session, 1) == 1 && session < SESSIONS) {
		pthread_mutex_t *m = &locks[session * CALIBRATE_CALLS];

		for (int i = 0; i < CALIBRATE_CALLS; i++) {
			if (pthread_mutex_lock(&m[i]))
				_exit(1);
			pthread_mutex_unlock(&m[i]);
		}
		if (write(done_fd, &session, 1) != 1)
			break;
	}
	_exit(0);
}

/*
 * One sample: the child runs session s on mutexes no session used
 * before, so the rows that changed are this session's, one call each.
 */
static int calibrate__sample(struct probes *p, int go_fd, int done_fd,
			     unsigned char session,
			     struct calibrate_sample *out)
{
	uint64_t intervals[CALIBRATE_CALLS];
	const struct snapshot_entry *e;
	struct snapshot *before, *after, *delta;
	unsigned int n = 0;
	int err;

	err = probes__read(p, &before);
	if (err)
		return err;
	if (write(go_fd, &session, 1) != 1 || read(done_fd, &session, 1) != 1) {
		snapshot__free(before);
		return -EPIPE;
	}
	err = probes__read(p, &after);
	if (!err)
		err = snapshot__delta(after, before, &delta);
	snapshot__free(before);
	snapshot__free(after);
	if (err)
		return err;
	e = snapshot__entries(delta);
	for (size_t i = 0; i < snapshot__count(delta); i++) {
		if (e[i].count != 1 || n == CALIBRATE_CALLS) {
			n = 0;	/* lost or extra calls: no figure */
			break;
		}
		intervals[n++] = e[i].wait_ns;
	}
	snapshot__free(delta);
	if (n != CALIBRATE_CALLS)
		return -EAGAIN;
	calibrate__summarize(intervals, n, out);
	return 0;
}

/*
 * Attaches pthread_mutex_lock where the probes go (at_entry: at its
 * first instruction), takes up to CALIBRATE_TRIES samples until one is
 * stable, keeps the one with the lowest quartile, and detaches.
 */
static int calibrate__site(struct probes *p, const char *library,
			   bool at_entry, int go_fd, int done_fd,
			   unsigned char *session, struct calibration *cal,
			   enum sp_site_kind *kind)
{
	struct calibrate_sample best = { 0 }, s;
	int err = probes__attach_function(p, library, "pthread_mutex_lock",
					  at_entry);

	if (err)
		return err;
	*kind = probes__site_kind(p, "pthread_mutex_lock");
	for (int t = 0; t < CALIBRATE_TRIES; t++) {
		err = calibrate__sample(p, go_fd, done_fd, (*session)++, &s);
		if (err)
			break;
		if (!best.calls || s.quartile_ns < best.quartile_ns)
			best = s;
		if (s.stable)
			break;
	}
	probes__detach(p);
	if (err)
		return err;
	cal->sample[*kind] = best;
	cal->measured[*kind] = true;
	return 0;
}

static int calibrate__measure(struct probes *p, const char *library,
			      bool probe_at_entry, int go_fd, int done_fd,
			      struct calibration *out)
{
	enum sp_site_kind used, other;
	unsigned char session = 0;
	int err;

	/* Where the probes go, then the first instruction if it differs. */
	err = calibrate__site(p, library, probe_at_entry, go_fd, done_fd,
			      &session, out, &used);
	if (!err && !probe_at_entry)
		err = calibrate__site(p, library, true, go_fd, done_fd,
				      &session, out, &other);
	if (err)
		return err;
	out->calls = CALIBRATE_CALLS;
	calibrate__settle(out);
	out->ns = out->by_site[used];
	return 0;
}

int calibrate__run(bool probe_at_entry, struct calibration *out)
{
	int go[2], done[2], err;
	struct target *child = NULL;
	struct probes *p = NULL;
	char library[4096];
	pid_t pid;

	*out = (struct calibration){ 0 };
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(done, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_pipes;
	}
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		calibrate__child(go[0], done[1]);
	}
	close(go[0]);
	close(done[1]);
	go[0] = done[1] = -1;

	const struct probes_config cfg = {
		.tgid = pid,
		.map_size = SESSIONS * CALIBRATE_CALLS + 64,
		.probe_at_entry = probe_at_entry,
		.rows_by_thread = true,
		.lock_calls_only = true,
	};
	err = target__attach(pid, &child);
	if (!err)
		err = target__pthread_library(child, library, sizeof(library));
	if (!err)
		err = probes__new(&cfg, &p);
	if (!err)
		err = calibrate__measure(p, library, probe_at_entry, go[1],
					 done[0], out);
	probes__free(p);
	target__free(child);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out_pipes:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (done[i] >= 0)
			close(done[i]);
	}
	return err;
}

/* A calibration in a thread of its own. */
struct calibrate_run {
	pthread_t thread;
	bool probe_at_entry;
	int err;
	struct calibration cal;
};

static void *calibrate__thread(void *arg)
{
	struct calibrate_run *run = arg;

	run->err = calibrate__run(run->probe_at_entry, &run->cal);
	return NULL;
}

int calibrate__start(bool probe_at_entry, struct calibrate_run **out)
{
	struct calibrate_run *run = calloc(1, sizeof(*run));
	int err;

	if (!run)
		return -ENOMEM;
	run->probe_at_entry = probe_at_entry;
	err = pthread_create(&run->thread, NULL, calibrate__thread, run);
	if (err) {
		free(run);
		return -err;
	}
	*out = run;
	return 0;
}

int calibrate__join(struct calibrate_run *run, struct calibration *out)
{
	int err;

	pthread_join(run->thread, NULL);
	err = run->err;
	*out = run->cal;
	free(run);
	return err;
}
