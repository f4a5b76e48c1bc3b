// SPDX-License-Identifier: GPL-2.0
/*
 * An uncontended pthread_mutex_lock takes ~30 ns; through an entry and a
 * return uprobe the BPF clock reads ~5-20 us on these PVM guests (the
 * traps' own time between the two bpf_ktime_get_ns() calls).  That bias
 * is the same for every call, contended or not, so it is measured once:
 * a forked child locks a private mutex in rounds under the same probes,
 * the median of the rounds' means is taken (a preempted round moves the
 * mean, not the median), and the BPF program subtracts it from every call,
 * clamped at 0.  The child maps syncprof's own libc, so a target with
 * another libc build gets the bias of this one: the trap costs depend on
 * the kind of instruction probed, which placement makes alike.
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

/* The child: one round of locking per byte read, one byte back after it. */
static void calibrate__child(int go_fd, int done_fd)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char byte;

	while (read(go_fd, &byte, 1) == 1) {
		for (int i = 0; i < CALLS_PER_ROUND; i++) {
			pthread_mutex_lock(&lock);
			pthread_mutex_unlock(&lock);
		}
		if (write(done_fd, &byte, 1) != 1)
			break;
	}
	_exit(0);
}

static int calibrate__rounds(struct probes *p, int go_fd, int done_fd,
			     struct calibration *out)
{
	uint64_t means[ROUNDS], last_count = 0, last_wait = 0;
	struct snapshot *snap;
	char byte = 'g';

	for (unsigned int r = 0; r < ROUNDS; r++) {
		uint64_t count = 0, wait = 0;

		if (write(go_fd, &byte, 1) != 1 || read(done_fd, &byte, 1) != 1)
			return -EPIPE;
		int err = probes__read(p, &snap);
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
	out->rounds = ROUNDS;
	out->calls = CALLS_PER_ROUND;
	out->ns = calibrate__median(means, ROUNDS);
	out->min_ns = means[0];
	out->max_ns = means[ROUNDS - 1];
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
		err = probes__attach_function(p, library, "pthread_mutex_lock");
	if (!err)
		err = calibrate__rounds(p, go[1], done[0], out);
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
