/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small recording for the record/ modules' unit tests: a names file
 * with three spans (a symbol, a debug-less site, a common source root to
 * strip), a temporary directory, and an event log written into it.
 */
#ifndef SYNCPROF_RECFIXTURE_H
#define SYNCPROF_RECFIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evlog.h"

/*
 * Spans in their sorted order (object, call site, type):
 *   0  mutex   queue_lock @ server.c:118       (0xaaaa, 0x1000)
 *   1  futex   0xbbbb @ libc.so.6+0x2000        (0xbbbb, 0x2000)
 *   2  condvar 0xbbbb @ lib/queue.c:42          (0xbbbb, 0x3000)
 */
static const char recfixture_names[] =
	"syncprof-names\t1\n"
	"site\t1000\t/src/app/bin/server\t1000\thandle\t20\t/src/app/server.c\t118\n"
	"site\t2000\t/usr/lib/libc.so.6\t2000\t-\t0\t-\t0\n"
	"site\t3000\t/src/app/bin/server\t3000\tworker\t10\t/src/app/lib/queue.c\t42\n"
	"object\taaaa\tqueue_lock\n"
	"object\tbbbb\t-\n"
	"span\t0\taaaa\t1000\t0\n"
	"span\t2\tbbbb\t3000\t0\n"
	"span\t7\tbbbb\t2000\t0\n";

static inline struct sp_key recfixture_key(int span, uint32_t tid)
{
	static const struct sp_key keys[] = {
		{ .object = 0xaaaa, .callsite = 0x1000, .type = SP_TYPE_MUTEX },
		{ .object = 0xbbbb, .callsite = 0x2000, .type = SP_TYPE_FUTEX },
		{ .object = 0xbbbb, .callsite = 0x3000, .type = SP_TYPE_CONDVAR },
	};
	struct sp_key k = keys[span];

	k.tid = tid;
	return k;
}

/* A fresh directory; free() the result after recfixture_rmdir. */
static inline char *recfixture_dir(void)
{
	char *dir = strdup("/tmp/syncprof-unit-XXXXXX");

	if (!dir || !mkdtemp(dir))
		abort();
	return dir;
}

static inline void recfixture_rmdir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		abort();
}

static inline void recfixture_write(const char *dir, const char *name,
				    const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

/* The whole of a file, NUL-terminated; *len: its size. */
static inline char *recfixture_read(const char *dir, const char *name,
				    size_t *len)
{
	char path[512], *buf;
	long size;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
		abort();
	fclose(f);
	if (len)
		*len = (size_t)size;
	return buf;
}

/* Writes events into DIR/syncprof.events; returns an fd open on it. */
static inline int recfixture_log(const char *dir,
				 const struct sp_wait_event *events, size_t n)
{
	struct evlog_writer *w;
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, EVLOG_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || evlog__writer_new(fd, &w))
		abort();
	for (size_t i = 0; i < n; i++)
		if (evlog__append(w, &events[i]))
			abort();
	if (evlog__writer_free(w, &fd))
		abort();
	return fd;
}

#endif
