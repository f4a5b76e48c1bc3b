// SPDX-License-Identifier: GPL-2.0
/*
 * An uncontended pthread_mutex_lock takes ~30 ns; through an entry and a
 * return uprobe the BPF clock reads ~5-20 us on these PVM guests (the
 * traps' own time between the two bpf_ktime_get_ns() calls).  That bias
 * is the same for every call, contended or not, so it is measured once:
 * a forked child locks a private mutex in rounds under the same probes,
 * the median of the rounds' means is taken (a preempted round moves the
 * mean, not the median), and the BPF program subtracts it from every call,
 * clamped at 0.  The cost depends on the kind of instruction probed
 * (emulated or single-stepped, ~1 vs ~4-19 us here), so the figure is
 * kept per kind: lock and trylock are timed, each under its own site's
 * kind; a kind neither has gets the smaller figure, never more than a
 * probe costs.  The child maps syncprof's own libc, so a target with
 * another libc build gets the figures of this one.
 * Rejected: subtracting the smallest interval seen (it undercuts the
 * typical bias), and calibrating inside the target (it must not be run).
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
#include "probes.h"
#include "target.h"

#define ROUNDS 7
#define CALLS_PER_ROUND 200

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t calibrate__median(uint64_t *values, unsigned int n)
{
	if (!n)
		return 0;
	qsort(values, n, sizeof(*values), cmp_u64);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/*
 * The child: one round per byte read ('l' lock, 't' trylock), one byte
 * back after it.
 */
static void calibrate__child(int go_fd, int done_fd)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char byte;

	while (read(go_fd, &byte, 1) == 1) {
		for (int i = 0; i < CALLS_PER_ROUND; i++) {
			if (byte == 't' ? pthread_mutex_trylock(&lock)
					: pthread_mutex_lock(&lock))
				_exit(1);
			pthread_mutex_unlock(&lock);
		}
		if (write(done_fd, &byte, 1) != 1)
			break;
	}
	_exit(0);
}

/* ROUNDS rounds of one function (byte): the per-call mean of each. */
static int calibrate__rounds(struct probes *p, int go_fd, int done_fd,
			     char function, uint64_t means[ROUNDS])
{
	uint64_t last_count = 0, last_wait = 0;
	struct snapshot *snap;
	int err = probes__read(p, &snap);

	/* Start from what earlier rounds left in the map. */
	if (err)
		return err;
	for (size_t i = 0; i < snapshot__count(snap); i++) {
		last_count += snapshot__entries(snap)[i].count;
		last_wait += snapshot__entries(snap)[i].wait_ns;
	}
	snapshot__free(snap);
	for (unsigned int r = 0; r < ROUNDS; r++) {
		uint64_t count = 0, wait = 0;
		char byte = function;

		if (write(go_fd, &byte, 1) != 1 || read(done_fd, &byte, 1) != 1)
			return -EPIPE;
		err = probes__read(p, &snap);
		if (err)
			return err;
		for (size_t i = 0; i < snapshot__count(snap); i++) {
			count += snapshot__entries(snap)[i].count;
			wait += snapshot__entries(snap)[i].wait_ns;
		}
		snapshot__free(snap);
		if (count - last_count != CALLS_PER_ROUND)
			return -EAGAIN;	/* lost or extra calls: no figure */
		means[r] = (wait - last_wait) / CALLS_PER_ROUND;
		last_count = count;
		last_wait = wait;
	}
	return 0;
}

static int calibrate__measure(struct probes *p, int go_fd, int done_fd,
			      struct calibration *out)
{
	uint64_t lock[ROUNDS], trylock[ROUNDS];
	enum sp_site_kind lock_kind, trylock_kind;
	bool measured[SP_SITE__COUNT] = { false };
	uint64_t least = UINT64_MAX;
	int err;

	err = calibrate__rounds(p, go_fd, done_fd, 'l', lock);
	if (!err)
		err = calibrate__rounds(p, go_fd, done_fd, 't', trylock);
	if (err)
		return err;
	out->rounds = ROUNDS;
	out->calls = CALLS_PER_ROUND;
	out->min_ns = out->max_ns = lock[0];
	for (unsigned int r = 1; r < ROUNDS; r++) {
		if (lock[r] < out->min_ns)
			out->min_ns = lock[r];
		if (lock[r] > out->max_ns)
			out->max_ns = lock[r];
	}
	out->ns = calibrate__median(lock, ROUNDS);
	lock_kind = probes__site_kind(p, "pthread_mutex_lock");
	trylock_kind = probes__site_kind(p, "pthread_mutex_trylock");
	out->by_site[trylock_kind] = calibrate__median(trylock, ROUNDS);
	out->by_site[lock_kind] = out->ns;	/* lock's wins a shared kind */
	measured[trylock_kind] = measured[lock_kind] = true;
	for (int k = 0; k < SP_SITE__COUNT; k++)
		if (measured[k] && out->by_site[k] < least)
			least = out->by_site[k];
	for (int k = 0; k < SP_SITE__COUNT; k++)
		if (!measured[k])
			out->by_site[k] = least;
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
		.map_size = 64,
		.probe_at_entry = probe_at_entry,
	};
	err = target__attach(pid, &child);
	if (!err)
		err = target__pthread_library(child, library, sizeof(library));
	if (!err)
		err = probes__new(&cfg, &p);
	if (!err)
		err = probes__attach_function(p, library, "pthread_mutex_lock", false);
	if (!err)
		err = probes__attach_function(p, library, "pthread_mutex_trylock", false);
	if (!err)
		err = calibrate__measure(p, go[1], done[0], out);
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
