// SPDX-License-Identifier: GPL-2.0
/*
 * The processes' events from the kernel (the module_events ring: forks,
 * exits, execs, libraries loaded, the anchor thread's exit), queued for
 * the session and flagged for following.c, and whether a thread runs.
 * Below following.c and fullprobes.c: both read it, it calls neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "clock.h"
#include "probesimpl.h"
#include "syncprof.skel.h"

/* Whether thread tid of the target runs (exists, and is not a zombie). */
bool probes__thread_alive_in(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' &&
	       close_paren[2] != 'X';
}

bool probes__thread_alive(const struct probes *p, pid_t tid)
{
	return probes__thread_alive_in(p->tgid, tid);
}

static bool probes__has_pid(const struct probes *p, pid_t pid)
{
	for (size_t i = 0; i < p->n_pids; i++)
		if (p->pids[i] == pid)
			return true;
	return false;
}

int probes__note_pid(struct probes *p, pid_t pid)
{
	if (probes__has_pid(p, pid))
		return 0;
	if (array__grow(&p->pids, &p->cap_pids, p->n_pids + 1,
			sizeof(*p->pids)))
		return -ENOMEM;
	p->pids[p->n_pids++] = pid;
	return 0;
}

const struct probes_proc_event *probes__proc_events(const struct probes *p,
						    size_t *n)
{
	*n = p->n_taken;
	return p->taken;
}

void probes__note_gone(struct probes *p, pid_t pid, pid_t tid)
{
	if (array__grow(&p->gone[0], &p->cap_gone[0], p->n_gone[0] + 1,
			sizeof(*p->gone[0])))
		return;	/* found by /proc at a read after a lost event */
	p->gone[0][p->n_gone[0]++] = (struct probes_gone){
		.pid = (__u32)pid, .tid = (__u32)tid };
}

static void probes__queue_proc_event(struct probes *p,
				     const struct sp_module_event_rec *ev)
{
	if (array__grow(&p->proc_events, &p->cap_proc_events,
			p->n_proc_events + 1, sizeof(*p->proc_events)))
		return;	/* the exit is seen by /proc, the fork at the next sync */
	p->proc_events[p->n_proc_events] = (struct probes_proc_event){
		.type = ev->type, .pid = (pid_t)ev->tgid,
		.parent = (pid_t)(ev->parent & ~SP_FORK_READ_NOW),
	};
	memcpy(p->proc_events[p->n_proc_events].comm, ev->comm,
	       sizeof(ev->comm));
	p->proc_events[p->n_proc_events++].comm[sizeof(ev->comm) - 1] = '\0';
	if (ev->type == SP_MODULE_EVENT_FORK)
		probes__note_pid(p, (pid_t)ev->tgid);
	p->events_seen |= PROBES_EVENT_PROCESSES;
	/* Not in the kernel's unread processes: read as if it had waited. */
	if (ev->type == SP_MODULE_EVENT_FORK && (ev->parent & SP_FORK_READ_NOW)) {
		struct sp_module_event_rec now = *ev;

		now.type = SP_MODULE_EVENT_WAIT;
		now.parent = 0;
		probes__queue_proc_event(p, &now);
	}
}

static int probes__on_event(void *ctx, void *data, size_t size)
{
	struct probes *p = ctx;
	struct sp_module_event_rec ev = { 0 };
	__u32 type;

	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	type = ev.type;
	if (type == SP_MODULE_EVENT_THREAD_EXIT) {
		probes__note_gone(p, (pid_t)ev.tgid, (pid_t)ev.parent);
		return 0;
	}
	if (type != SP_MODULE_EVENT_ANCHOR_EXIT)
		probes__queue_proc_event(p, &ev);
	if (type == SP_MODULE_EVENT_FORK || type == SP_MODULE_EVENT_EXIT ||
	    type == SP_MODULE_EVENT_WAIT)
		return 0;
	if (type == SP_MODULE_EVENT_ANCHOR_EXIT) {
		p->events_seen |= PROBES_EVENT_THREAD_EXIT;
		p->anchor_exit_ns = clock__monotonic_ns();
	} else {
		/* A library loaded or unloaded, or an exec. */
		p->events_seen |= PROBES_EVENT_MODULES;
	}
	return 0;
}

int probes__open_events(struct probes *p)
{
	if (p->events)
		return 0;
	p->events = ring_buffer__new(bpf_map__fd(p->skel->maps.module_events),
				     probes__on_event, p, NULL);
	return p->events ? 0 : -errno;
}

int probes__events_fd(struct probes *p)
{
	return p->events ? ring_buffer__epoll_fd(p->events) : -1;
}

unsigned int probes__consume_events(struct probes *p)
{
	unsigned int seen;

	if (!p->events)
		return 0;
	ring_buffer__consume(p->events);
	/* The queue becomes what the caller reads until the next consume. */
	{
		struct probes_proc_event *t = p->taken;
		size_t cap = p->cap_taken;

		p->taken = p->proc_events;
		p->cap_taken = p->cap_proc_events;
		p->n_taken = p->n_proc_events;
		p->proc_events = t;
		p->cap_proc_events = cap;
		p->n_proc_events = 0;
	}
	seen = p->events_seen;
	p->events_seen = 0;
	return seen;
}
