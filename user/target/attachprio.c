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
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attachprio.h"
#include "log.h"

#define ATTACH_NICE	(-15)

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
}

void attachprio__restore(const struct attachprio *ap)
{
	struct dirent *d;
	DIR *dir;

	if (!ap->raised)
		return;
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
