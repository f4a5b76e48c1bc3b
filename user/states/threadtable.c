// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the threads map.  The programs update an entry in place while
 * this copies it, so each copy is taken twice: it is kept when both show
 * the same even seq (an odd seq is an update in progress; a changed one,
 * an update that ran between).  Dead threads are deleted after the walk,
 * not during it: a hash map's walk starts over when its current key goes.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "array.h"
#include "log.h"
#include "linereader.h"
#include "threadtable.h"
#include "schedstat.h"

/* Copies of one entry before giving up on it for this read. */
#define READ_TRIES 64

struct threadtable {
	int fd;
	pid_t *pids;		/* the processes whose threads it seeds */
	size_t n_pids, pids_cap;
	struct thread_sample *samples;
	size_t count;
	size_t cap;
	uint32_t *dead;
	size_t n_dead;
	size_t dead_cap;
	uint32_t *seeded;	/* TIDs this put in: may be taken out */
	size_t n_seeded;
	size_t seeded_cap;
};

int threadtable__new(int map_fd, pid_t pid, struct threadtable **out)
{
	struct threadtable *tt = calloc(1, sizeof(*tt));
	int err;

	if (!tt)
		return -ENOMEM;
	tt->fd = map_fd;
	err = threadtable__add_pid(tt, pid);
	if (err) {
		threadtable__free(tt);
		return err;
	}
	*out = tt;
	return 0;
}

int threadtable__add_pid(struct threadtable *tt, pid_t pid)
{
	int err;

	for (size_t i = 0; i < tt->n_pids; i++)
		if (tt->pids[i] == pid)
			return 0;
	err = array__grow(&tt->pids, &tt->pids_cap, tt->n_pids + 1,
			  sizeof(*tt->pids));
	if (!err)
		tt->pids[tt->n_pids++] = pid;
	return err;
}

void threadtable__free(struct threadtable *tt)
{
	if (!tt)
		return;
	free(tt->pids);
	free(tt->samples);
	free(tt->dead);
	free(tt->seeded);
	free(tt);
}

int threadtable__parse_stat(const char *line, char *state, char *comm,
			    size_t comm_len)
{
	const char *open = strchr(line, '(');
	const char *close = strrchr(line, ')');
	size_t len;

	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	*state = close[2];
	len = (size_t)(close - open - 1);
	if (comm_len) {
		if (len >= comm_len)
			len = comm_len - 1;
		memcpy(comm, open + 1, len);
		comm[len] = '\0';
	}
	return 0;
}

/* The state letter and name of one thread; -errno when it is gone. */
static int read_task(pid_t pid, const char *tid, char *state, char *comm,
		     size_t comm_len)
{
	char path[320], line[512];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	n = linereader__small(path, line, sizeof(line));
	if (n < 0)
		return n;
	return threadtable__parse_stat(line, state, comm, comm_len);
}

static bool tid_listed(const uint32_t *tids, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/*
 * The CPU time and run-queue wait /proc/PID/task/TID/schedstat shows
 * (what the programs read at each switch-out); zeros if it cannot.
 */
static void read_schedstat(pid_t pid, const char *tid, struct sp_thread *t)
{
	struct schedstat st;

	if (schedstat__read(pid, (pid_t)atoi(tid), &st))
		return;
	t->out_exec_ns = st.run_ns;
	t->out_run_delay_ns = st.wait_ns;
}

/* One thread /proc lists: into the table unless it is there. */
static int threadtable__seed(struct threadtable *tt, pid_t pid, uint32_t tid,
			     char state, const char *comm,
			     const char *tid_text, uint64_t now_ns)
{
	struct sp_thread t = {
		.born_ns = now_ns,
		.since_ns = now_ns,
		.state = state == 'R' ? SP_THREAD_RUNNING : SP_THREAD_SLEEP,
	};
	int err;

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.out_state = t.state;
	read_schedstat(pid, tid_text, &t);
	if (bpf_map_update_elem(tt->fd, &tid, &t, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	err = array__grow(&tt->seeded, &tt->seeded_cap, tt->n_seeded + 1,
			  sizeof(*tt->seeded));
	if (err)
		return err;
	tt->seeded[tt->n_seeded++] = tid;
	return 0;
}

/*
 * Takes out what this seeded for a thread that is gone, if no program has
 * touched the entry since (seq 0): its exit came before the tracepoints.
 */
static void threadtable__unseed(struct threadtable *tt, const uint32_t *alive,
				size_t n_alive)
{
	size_t kept = 0;

	for (size_t i = 0; i < tt->n_seeded; i++) {
		uint32_t tid = tt->seeded[i];
		struct sp_thread t;

		if (!tid_listed(alive, n_alive, tid) &&
		    !bpf_map_lookup_elem(tt->fd, &tid, &t) && t.seq == 0) {
			bpf_map_delete_elem(tt->fd, &tid);
			continue;
		}
		tt->seeded[kept++] = tid;
	}
	tt->n_seeded = kept;
}

/* Seeds the threads of one process; their TIDs join alive. */
static int threadtable__sync_pid(struct threadtable *tt, pid_t pid,
				 uint64_t now_ns, uint32_t **alive,
				 size_t *n_alive, size_t *cap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char state, comm[STATES_COMM_LEN];
		char *end;
		unsigned long tid = strtoul(d->d_name, &end, 10);

		if (*end || !tid || read_task(pid, d->d_name, &state, comm,
					      sizeof(comm)))
			continue;	/* not a thread, or gone already */
		if (state == 'Z' || state == 'X' || state == 'x')
			continue;	/* exited: its time is not counted */
		err = array__grow(alive, cap, *n_alive + 1, sizeof(**alive));
		if (!err)
			err = threadtable__seed(tt, pid, (uint32_t)tid, state,
						comm, d->d_name, now_ns);
		if (err)
			break;
		(*alive)[(*n_alive)++] = (uint32_t)tid;
	}
	closedir(dir);
	return err;
}

int threadtable__sync(struct threadtable *tt, uint64_t now_ns)
{
	uint32_t *alive = NULL;
	size_t n_alive = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; !err && i < tt->n_pids; i++) {
		err = threadtable__sync_pid(tt, tt->pids[i], now_ns, &alive,
					    &n_alive, &cap);
		/* One of several gone already: the others still count. */
		if ((err == -ENOENT || err == -ESRCH) && tt->n_pids > 1)
			err = 0;
	}
	if (!err)
		threadtable__unseed(tt, alive, n_alive);
	free(alive);
	if (err == -E2BIG || err == -ENOMEM)
		pr_warn("the threads map is full: some threads are not counted");
	return err == -E2BIG ? 0 : err;
}

/* One consistent copy of the entry of tid; -EAGAIN if it kept changing. */
static int threadtable__copy(struct threadtable *tt, uint32_t tid,
			     struct sp_thread *out)
{
	struct sp_thread again;

	for (int i = 0; i < READ_TRIES; i++) {
		if (bpf_map_lookup_elem(tt->fd, &tid, out) ||
		    bpf_map_lookup_elem(tt->fd, &tid, &again))
			return -errno;
		if (!(out->seq & 1) && out->seq == again.seq)
			return 0;
	}
	return -EAGAIN;
}

int threadtable__read(struct threadtable *tt,
		      const struct thread_sample **samples, size_t *n,
		      uint64_t *now_ns)
{
	uint32_t key, next, *prev = NULL;
	int err;

	tt->count = 0;
	tt->n_dead = 0;
	while (!bpf_map_get_next_key(tt->fd, prev, &next)) {
		struct thread_sample *s;

		key = next;
		prev = &key;
		err = array__grow(&tt->samples, &tt->cap, tt->count + 1,
				  sizeof(*tt->samples));
		if (err)
			return err;
		s = &tt->samples[tt->count];
		s->tid = key;
		if (threadtable__copy(tt, key, &s->t))
			continue;	/* gone, or read next time */
		tt->count++;
		if (s->t.state != SP_THREAD_DEAD)
			continue;
		err = array__grow(&tt->dead, &tt->dead_cap, tt->n_dead + 1,
				  sizeof(*tt->dead));
		if (err)
			return err;
		tt->dead[tt->n_dead++] = key;
	}
	*now_ns = clock__monotonic_ns();
	for (size_t i = 0; i < tt->n_dead; i++) {
		struct sp_thread t;

		/* Unless a new thread took the TID since. */
		if (!bpf_map_lookup_elem(tt->fd, &tt->dead[i], &t) &&
		    t.state == SP_THREAD_DEAD)
			bpf_map_delete_elem(tt->fd, &tt->dead[i]);
	}
	*samples = tt->samples;
	*n = tt->count;
	return 0;
}
