// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching is CPU-bound (the verifier in syncprof's bpf() calls, the
 * unwind tables, libc's model) and short: 0.2-0.4 s of CPU.  On a busy
 * machine it gets a fair share among every runnable task, so its wall
 * time grew with the load (2.7 s contended, 5.3 s full beside 10 busy
 * loops at load 15 here, docs/performance.md).  syncprof attaches at
 * nice ATTACH_NICE and goes back to the nice it was started with once
 * attached: what it takes from the others is bounded by the attach's
 * CPU, and it runs at the user's priority from then on.
 *
 * Linux's nice is per thread: the calling thread is raised (threads and
 * children made during the attach inherit it: the calibration's child
 * runs less preempted), and every thread of syncprof is put back.
 * Rejected: a real-time class (a bug in the attach would hang a CPU),
 * and leaving the nice raised (the loop's reads would then outrank the
 * target's own work).
 *
 * With sched_autogroup on (most desktop kernels), each session is a
 * scheduling group and nice weighs only within one: beside busy work of
 * other sessions, syncprof at nice -15 waited for a CPU 70-90% of its
 * attach (load 30-40 here, tests/bench/attachload.py).  When syncprof
 * leads its session (setsid, a systemd service), the session's group is
 * its own: its autogroup nice is raised too, and put back (there, a
 * contended attach took 0.4-0.7 s instead of 1.4-2 s at load 42).
 * Rejected: setsid() from inside (a terminal's Ctrl-C and a caller's
 * process-group kill would miss syncprof), and raising a session's
 * group that syncprof shares (the others would be raised with it).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attachprio.h"
#include "log.h"

#define ATTACH_NICE	(-15)

#define AUTOGROUP_PATH	"/proc/self/autogroup"
#define AUTOGROUP_ON	"/proc/sys/kernel/sched_autogroup_enabled"

/* The autogroup's nice of syncprof's session ("/autogroup-N nice K"). */
static int autogroup_nice(int *nice)
{
	FILE *f = fopen(AUTOGROUP_PATH, "re");
	int n = 0;

	if (!f)
		return -errno;
	n = fscanf(f, "%*s nice %d", nice);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}

static int autogroup_set(int nice)
{
	FILE *f = fopen(AUTOGROUP_PATH, "we");
	int err = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%d", nice) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Leading its session, with autogroups on: the session's group raised. */
static void attachprio__raise_group(struct attachprio *ap)
{
	FILE *f;
	int on = 0, nice;

	if (getsid(0) != getpid())
		return;
	f = fopen(AUTOGROUP_ON, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	if (!on || autogroup_nice(&nice) || nice <= ATTACH_NICE)
		return;
	if (autogroup_set(ATTACH_NICE)) {
		pr_debug("its session's autogroup stays at nice %d", nice);
		return;
	}
	ap->group_nice = nice;
	ap->group_raised = true;
	pr_info("its session's scheduling group (autogroup) at nice %d too "
		"(started at %d)", ATTACH_NICE, nice);
}

void attachprio__raise(struct attachprio *ap)
{
	int nice;

	if (ap->raised)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (nice == -1 && errno)
		return;
	ap->nice = nice;
	if (nice <= ATTACH_NICE)
		return;
	if (setpriority(PRIO_PROCESS, 0, ATTACH_NICE)) {
		pr_debug("attaching at nice %d: cannot (%s)", nice,
			 strerror(errno));
		return;
	}
	ap->raised = true;
	pr_info("attaching at nice %d (started at %d)", ATTACH_NICE, nice);
	attachprio__raise_group(ap);
}

void attachprio__restore(struct attachprio *ap)
{
	struct dirent *d;
	DIR *dir;
	int err = ap->group_raised ? autogroup_set(ap->group_nice) : 0;

	if (err)
		pr_warn("syncprof's session stays at autogroup nice %d: %s",
			ATTACH_NICE, strerror(-err));
	ap->group_raised = false;
	if (!ap->raised)
		return;
	ap->raised = false;
	dir = opendir("/proc/self/task");
	if (!dir) {
		setpriority(PRIO_PROCESS, 0, ap->nice);
		return;
	}
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid > 0 && setpriority(PRIO_PROCESS, (id_t)tid, ap->nice))
			pr_warn("thread %d of syncprof stays at nice %d: %s",
				tid, ATTACH_NICE, strerror(errno));
	}
	closedir(dir);
}
