// SPDX-License-Identifier: GPL-2.0
/*
 * Waits in progress are read, not tracked: each report opens a pidfd of
 * every thread of the target (PIDFD_THREAD, Linux 6.9) and looks its
 * in-flight state up in the BPF task storage the wait programs keep
 * anyway (a task-storage map takes a pidfd as its key from user space).
 * That is one pidfd_open, one lookup and one close per thread and
 * report, and nothing on the BPF side.  Rejected: a hash map of waits in
 * flight kept by the BPF programs, which would put an update and a
 * delete on every wait (and on every full-mode lock call) for a read
 * made once a report.  Before Linux 6.9 only the main thread has a
 * pidfd; the other threads' waits are then not seen.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "waiting.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

bool waiting__contended(const struct sp_contended *st, uint64_t now_ns,
			struct sp_key *key, uint64_t *ns)
{
	if (st->t0) {
		*ns = st->episode_ns + (now_ns > st->t0 ? now_ns - st->t0 : 0);
	} else if (st->uaddr && !st->counted && st->episode_ns) {
		*ns = st->episode_ns;	/* in a signal handler, to wait again */
	} else {
		return false;
	}
	*key = st->key;
	return true;
}

bool waiting__full(const struct sp_inflight *st, uint32_t tid,
		   uint64_t now_ns, struct sp_key *key, uint64_t *ns)
{
	const struct sp_call *call;

	/* The innermost call in flight is the one the thread waits in. */
	if (!st->depth || st->depth > SP_CALLS_MAX)
		return false;
	call = &st->calls[st->depth - 1];
	*key = (struct sp_key){
		.object = call->object,
		.callsite = call->callsite,
		.tid = tid,
		.type = call->type,
	};
	*ns = now_ns > call->t0 ? now_ns - call->t0 : 0;
	return true;
}

static int waiting__add(struct snapshot *snap, const struct sp_key *key,
			uint64_t ns)
{
	const struct sp_value v = {
		.count = 1,
		.wait_ns = ns,
		.max_ns = ns,
		.window_max_ns = ns,
	};

	return snapshot__add(snap, key, &v, 1, 0);
}

/* A thread's state: 1 if it has one, 0 if not, -errno. */
static int waiting__lookup(int map_fd, pid_t tid, void *value)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	int found;

	if (fd < 0)
		return -errno;
	found = bpf_map_lookup_elem(map_fd, &fd, value) ? -errno : 1;
	close(fd);
	return found == -ENOENT ? 0 : found;
}

int waiting__read(int map_fd, bool contended, pid_t tgid, uint64_t now_ns,
		  struct snapshot *snap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;	/* it exited */
	while (!err && (d = readdir(dir))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);
		union {
			struct sp_contended contended;
			struct sp_inflight full;
		} state;
		struct sp_key key;
		uint64_t ns;
		bool in_wait;
		int found;

		if (tid <= 0)
			continue;
		/* A thread gone, or without a pidfd (old kernel): skipped. */
		found = waiting__lookup(map_fd, tid, &state);
		if (found <= 0)
			continue;
		in_wait = contended
			  ? waiting__contended(&state.contended, now_ns, &key, &ns)
			  : waiting__full(&state.full, (uint32_t)tid, now_ns,
					  &key, &ns);
		key.pid = (uint32_t)tgid;
		if (in_wait)
			err = waiting__add(snap, &key, ns);
	}
	closedir(dir);
	return err;
}
