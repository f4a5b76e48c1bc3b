// SPDX-License-Identifier: GPL-2.0
/*
 * What opening a target's file costs: a plain open(2) against
 * targetfile__open (O_PATH lookup, fstat/fstatfs, O_NOFOLLOW |
 * O_NONBLOCK reopen; a thread only when the lookup is not cached), both
 * through /proc/self/root as syncprof opens a target's libraries; then
 * the ELF headers and build ID of libc read with pread (elfimage__open,
 * ELF_C_READ: what syncprof does now) against libelf's mapping
 * (ELF_C_READ_MMAP: what it did, until a truncated file killed it with
 * SIGBUS).  Each: the median of 7 rounds of 2,000 calls, per call.
 *
 *   bench_targetfile [--json]
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elfimage.h"
#include "targetfile.h"

#define CALLS 2000
#define ROUNDS 7

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const char *path;	/* libc through /proc/self/root */

static int plain_open(void)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int hardened_open(void)
{
	int fd;

	if (targetfile__open(path, 0, &fd))
		return -1;
	close(fd);
	return 0;
}

static int read_build_id(void)
{
	struct elfimage *image;
	uint8_t id[20];
	int n;

	if (elfimage__open(path, &image))
		return -1;
	n = elfimage__build_id(image, id, sizeof(id));
	elfimage__close(image);
	return n > 0 ? 0 : -1;
}

static int mapped_build_id(void)
{
	const void *id;
	int fd, n = -1;
	Elf *elf;

	if (targetfile__open(path, 0, &fd))
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		n = (int)dwelf_elf_gnu_build_id(elf, &id);
		elf_end(elf);
	}
	close(fd);
	return n > 0 ? 0 : -1;
}

/* ns per call, the median of ROUNDS rounds; < 0 when a call failed. */
static double per_call(int (*fn)(void))
{
	double t[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			if (fn())
				return -1;
		t[r] = (now_ns() - t0) / CALLS;
	}
	qsort(t, ROUNDS, sizeof(t[0]), cmp_double);
	return t[ROUNDS / 2];
}

static const char *libc_path(void)
{
	static char found[PATH_MAX + 32];
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(found, sizeof(found), "/proc/self/root%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	return found[0] ? found : NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "open", plain_open },
		{ "targetfile_open", hardened_open },
		{ "elf_pread_build_id", read_build_id },
		{ "elf_mmap_build_id", mapped_build_id },
	};
	int json = argc > 1 && !strcmp(argv[1], "--json");
	double ns[sizeof(cases) / sizeof(cases[0])];

	path = libc_path();
	if (!path || elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "bench_targetfile: no libc mapped\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ns[i] = per_call(cases[i].fn);
	if (json) {
		printf("{\"bench\": \"targetfile\", \"path\": \"%s\", \"calls\": %d, "
		       "\"rounds\": %d", path, CALLS, ROUNDS);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf(", \"%s_ns\": %.0f", cases[i].name, ns[i]);
		printf("}\n");
		return 0;
	}
	printf("opening a target's file (%s), per call, median of %d rounds "
	       "of %d:\n", path, ROUNDS, CALLS);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		printf("  %-20s %9.0f ns\n", cases[i].name, ns[i]);
	return 0;
}
