// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostprocs.h"
#include "linereader.h"

#define PF_KTHREAD 0x00200000u

/*
 * Whether pid is a process to follow: not a kernel thread (flags, the
 * 9th field of its stat), not a zombie.
 */
static bool hostprocs__wanted(const char *proc, pid_t pid)
{
	char path[PATH_MAX], line[1024], *at;
	unsigned long flags = 0;
	char state = 0;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, (int)pid);
	if (linereader__small(path, line, sizeof(line)) < 0)
		return false;	/* gone */
	/* The name may hold spaces and parentheses: after the last ')'. */
	at = strrchr(line, ')');
	if (!at || sscanf(at + 1, " %c %*d %*d %*d %*d %*d %lu", &state,
			  &flags) != 2)
		return false;
	return !(flags & PF_KTHREAD) && state != 'Z' && state != 'X';
}

/* Whether its mappings can be read (a ptrace access check, at open). */
static bool hostprocs__readable(const char *proc, pid_t pid)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc, (int)pid);
	f = fopen(path, "re");
	if (f)
		fclose(f);
	return f != NULL;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int hostprocs__list(const char *proc, pid_t self, pid_t *out, size_t max,
		    size_t *n, size_t *unreadable)
{
	DIR *dir = opendir(proc);
	struct dirent *d;
	bool more = false;

	*n = *unreadable = 0;
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long pid;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || (pid_t)pid == self ||
		    !hostprocs__wanted(proc, (pid_t)pid))
			continue;
		if (!hostprocs__readable(proc, (pid_t)pid)) {
			(*unreadable)++;
			continue;
		}
		if (*n == max) {
			more = true;
			break;
		}
		out[(*n)++] = (pid_t)pid;
	}
	closedir(dir);
	qsort(out, *n, sizeof(*out), pid_cmp);
	return more ? -E2BIG : 0;
}
