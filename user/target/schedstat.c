// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "schedstat.h"
#include "linereader.h"

int schedstat__read(pid_t pid, pid_t tid, struct schedstat *out)
{
	unsigned long long run, wait, slices = 0;
	char path[64], line[128];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	n = linereader__small(path, line, sizeof(line));
	if (n < 0)
		return n;
	if (sscanf(line, "%llu %llu %llu", &run, &wait, &slices) < 2)
		return -EINVAL;
	*out = (struct schedstat){ .run_ns = run, .wait_ns = wait,
				   .slices = slices };
	return 0;
}
