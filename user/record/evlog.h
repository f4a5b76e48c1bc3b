/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording's own log of waits (syncprof.events): a 16-byte header
 * ("SPWAITS", version, record size), then struct sp_wait_event records
 * exactly as the kernel handed them over, in arrival order (each
 * thread's waits in time order).  The uftrace and Chrome files and
 * --replay are all made from it.
 */
#ifndef SYNCPROF_EVLOG_H
#define SYNCPROF_EVLOG_H

#include <stdint.h>

#include "syncprof.h"

#define EVLOG_NAME	"syncprof.events"
#define EVLOG_VERSION	1

struct evlog_writer;
struct evlog_reader;

/* Starts a log on fd (truncated; the writer owns it from then on). */
int evlog__writer_new(int fd, struct evlog_writer **out);
/* Buffers one event; writes when the buffer is full.  0 or -errno. */
int evlog__append(struct evlog_writer *w, const struct sp_wait_event *e);
int evlog__flush(struct evlog_writer *w);
uint64_t evlog__count(const struct evlog_writer *w);
/*
 * Flushes and frees; with fd_out, the fd stays open (*fd_out) for a
 * reader, else it is closed.  Returns the first error of any write.
 */
int evlog__writer_free(struct evlog_writer *w, int *fd_out);

/* Reads a log from fd (not closed by the reader). -EINVAL: not a log. */
int evlog__reader_new(int fd, struct evlog_reader **out);
/* 1 and *e: the next event; 0: the end; -errno.  A torn last record ends it. */
int evlog__read(struct evlog_reader *r, struct sp_wait_event *e);
/* After evlog__read returned 0: bytes of a last record cut short. */
size_t evlog__torn(const struct evlog_reader *r);
/* Back to the first event. */
void evlog__rewind(struct evlog_reader *r);
void evlog__reader_free(struct evlog_reader *r);

#endif
