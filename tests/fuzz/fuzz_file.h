/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For harnesses whose module opens a file by name: the input is written
 * to one file in a private directory (on tmpfs when there is one), which
 * is rewritten for every input.  Nothing else is in that directory, so a
 * fuzzed .gnu_debuglink finds nothing next to it.
 */
#ifndef SYNCPROF_FUZZ_FILE_H
#define SYNCPROF_FUZZ_FILE_H

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[PATH_MAX];
static char fuzz_path[PATH_MAX];

static void fuzz_file_cleanup(void)
{
	unlink(fuzz_path);
	rmdir(fuzz_dir);
}

/* The input as a file; its absolute path, valid until the next call. */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
	int fd;

	if (!fuzz_dir[0]) {
		const char *tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/syncprof-fuzz-XXXXXX", tmp);
		if (!mkdtemp(fuzz_dir))
			abort();
		snprintf(fuzz_path, sizeof(fuzz_path), "%s/input", fuzz_dir);
		atexit(fuzz_file_cleanup);
	}
	fd = open(fuzz_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	close(fd);
	return fuzz_path;
}

/* The directory of fuzz_file(): a debuginfo path that holds nothing else. */
static inline const char *fuzz_file_dir(void)
{
	return fuzz_dir;
}

#endif
