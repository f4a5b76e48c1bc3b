// SPDX-License-Identifier: GPL-2.0
/*
 * The followed processes, in the order they came.  Names are copied from
 * /proc/PID/comm when a process is added and after each exec: the report
 * names a process that exec'ed by its new program at once.
 *
 * An exit is normally the kernel's event.  A process can end without one
 * reaching syncprof: a zombie already when it was found, a child that
 * exited between the /proc walk and the kernel's filter taking it in.
 * Each process's start time (/proc/PID/stat; a forked child's at the
 * first sweep after its fork) is kept, and
 * procset__sweep finds those that are gone, zombies (whose threads all
 * ended) and PIDs that now belong to another process.  A PID reused by a
 * new followed process is a new entry; the old one stays, exited.
 *
 * A sweep reads the stat file of the processes whose exit might not be
 * told: found in /proc and not yet seen running since the kernel's
 * filter took them in.  A child the kernel told of (forked under its
 * watch), or one a sweep has seen running, is told when it exits: it is
 * read again only by a whole sweep, every few (procset__sweep's all),
 * for an exit event lost in a full ring.  Reading every followed
 * process's stat file each second was a thirtieth of --all's CPU on the
 * soak's load.
 *
 * Exited processes are kept for their names, the newest EXITED_KEEP of
 * them: under --all every process that ever ran stayed, and each add,
 * sweep and report looked through all of them (40,000 in an hour; the
 * add alone was the loop's largest cost).  The PIDs let go are handed
 * out once (procset__forgotten): their rows are folded into the rows
 * of exited processes (fold.c), whose names are gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "linereader.h"
#include "procset.h"

#define COMM_MAX 64
/* Exited processes kept for their names; a quarter more before a sweep. */
#define EXITED_KEEP 1024

struct entry {
	pid_t pid;
	pid_t parent;
	unsigned long long start;	/* clock ticks after boot; 0: unknown */
	bool told;		/* its exit will be told (see above) */
	char comm[COMM_MAX];
};

struct procset {
	struct entry *entries;
	size_t n, cap;
	struct procset_entry *list;	/* what procset__list hands out */
	size_t list_cap;
	bool *exited;
	size_t exited_cap;
	size_t n_exited;	/* entries marked exited */
	pid_t *forgotten;	/* let go, not yet handed out */
	size_t n_forgotten, forgotten_cap;
};

int procset__new(struct procset **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void procset__free(struct procset *set)
{
	if (!set)
		return;
	free(set->entries);
	free(set->list);
	free(set->exited);
	free(set->forgotten);
	free(set);
}

/* An entry marked exited, counted once. */
static void procset__mark_exited(struct procset *set, size_t i)
{
	if (set->exited[i])
		return;
	set->exited[i] = true;
	set->n_exited++;
}

/*
 * Beyond EXITED_KEEP + a quarter, the oldest exited go (in the order
 * they came), down to EXITED_KEEP: one pass for many removals.
 */
static void procset__trim(struct procset *set)
{
	size_t drop, out = 0;

	if (set->n_exited <= EXITED_KEEP + EXITED_KEEP / 4)
		return;
	drop = set->n_exited - EXITED_KEEP;
	for (size_t i = 0; i < set->n; i++) {
		if (drop && set->exited[i]) {
			drop--;
			set->n_exited--;
			if (!array__grow(&set->forgotten, &set->forgotten_cap,
					 set->n_forgotten + 1,
					 sizeof(*set->forgotten)))
				set->forgotten[set->n_forgotten++] =
					set->entries[i].pid;
			continue;
		}
		set->entries[out] = set->entries[i];
		set->exited[out++] = set->exited[i];
	}
	set->n = out;
}

size_t procset__forgotten(struct procset *set, pid_t **pids)
{
	size_t n = set->n_forgotten;

	*pids = set->forgotten;
	set->n_forgotten = 0;
	return n;
}

/* The newest entry of pid (an older one is a process that exited). */
static struct entry *procset__find(const struct procset *set, pid_t pid,
				   size_t *index)
{
	for (size_t i = set->n; i-- > 0;) {
		if (set->entries[i].pid == pid) {
			if (index)
				*index = i;
			return &set->entries[i];
		}
	}
	return NULL;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64], comm[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (linereader__small(path, comm, sizeof(comm)) >= 0) {
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(buf, len, "%s", comm);
	} else if (!buf[0]) {
		snprintf(buf, len, "?");
	}
}

/*
 * pid's start time and whether it still runs: a zombie leader runs on
 * while another of its threads does.  -ESRCH: gone.
 */
static int process_state(pid_t pid, unsigned long long *start, bool *running)
{
	char path[64], buf[1024], *close_paren, state;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (linereader__small(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	/* comm may hold spaces and parentheses: after the last ')'. */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d "
				   "%*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
				   "%*d %*d %*d %llu", &state, start) != 2)
		return -EINVAL;
	*running = state != 'Z' && state != 'X';
	if (*running)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && !*running && (d = readdir(dir))) {
		unsigned long long ignored;
		int tid = atoi(d->d_name);

		if (tid > 0 && tid != pid)
			process_state(tid, &ignored, running);
	}
	if (dir)
		closedir(dir);
	return 0;
}

bool procset__add(struct procset *set, pid_t pid, pid_t parent,
		  const char *comm)
{
	unsigned long long start = 0;
	bool running = false;
	struct entry *e;
	size_t i;

	if (procset__find(set, pid, &i) && !set->exited[i])
		return false;
	if (array__grow(&set->entries, &set->cap, set->n + 1,
			sizeof(*set->entries)) ||
	    array__grow(&set->exited, &set->exited_cap, set->n + 1,
			sizeof(*set->exited)))
		return false;
	e = &set->entries[set->n];
	*e = (struct entry){ .pid = pid, .parent = parent };
	/*
	 * Gone already, or a zombie: listed, never waited for.  A child the
	 * kernel just told of runs: its start time is read by the next
	 * sweep (most short processes end before, their exit told too).
	 */
	if (parent && comm && comm[0])
		running = e->told = true;
	else if (process_state(pid, &start, &running))
		start = 0;
	e->start = start;
	/* A child not yet exec'ed has its parent's name until then. */
	if (comm && comm[0])
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	else
		read_comm(pid, e->comm, sizeof(e->comm));
	set->exited[set->n++] = false;
	if (!running)
		procset__mark_exited(set, set->n - 1);
	procset__trim(set);
	return true;
}

size_t procset__sweep(struct procset *set, pid_t *gone, size_t max, bool all)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n && n < max; i++) {
		unsigned long long start = 0;
		bool running = false;

		if (set->exited[i] || (set->entries[i].told && !all))
			continue;
		if (process_state(set->entries[i].pid, &start, &running) ||
		    !running || (set->entries[i].start && start &&
				 start != set->entries[i].start)) {
			procset__mark_exited(set, i);
			gone[n++] = set->entries[i].pid;
		} else {
			set->entries[i].told = true;
			if (!set->entries[i].start)	/* added by an event */
				set->entries[i].start = start;
		}
	}
	procset__trim(set);
	return n;
}

bool procset__has(const struct procset *set, pid_t pid)
{
	return procset__find(set, pid, NULL) != NULL;
}

void procset__exec(struct procset *set, pid_t pid, const char *comm)
{
	struct entry *e = procset__find(set, pid, NULL);

	if (e && comm && comm[0])
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	else if (e)
		read_comm(pid, e->comm, sizeof(e->comm));
}

void procset__exited(struct procset *set, pid_t pid)
{
	size_t i;

	if (procset__find(set, pid, &i))
		procset__mark_exited(set, i);
	procset__trim(set);
}

size_t procset__alive(const struct procset *set)
{
	return set->n - set->n_exited;
}

const struct procset_entry *procset__list(const struct procset *set,
					   size_t *n)
{
	struct procset *s = (struct procset *)set;

	*n = 0;
	if (array__grow(&s->list, &s->list_cap, set->n + 1, sizeof(*s->list)))
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		s->list[i] = (struct procset_entry){
			.pid = set->entries[i].pid,
			.comm = set->entries[i].comm,
			.exited = set->exited[i],
		};
	*n = set->n;
	return s->list;
}

int procset__children(pid_t pid, pid_t **kids, size_t *n, size_t *cap)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		char file[300];
		long kid;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%s/children",
			 (int)pid, d->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;	/* the thread is gone */
		while (fscanf(f, "%ld", &kid) == 1) {
			if (array__grow(kids, cap, *n + 1, sizeof(**kids))) {
				err = -ENOMEM;
				break;
			}
			(*kids)[(*n)++] = (pid_t)kid;
		}
		fclose(f);
	}
	closedir(dir);
	return err;
}
