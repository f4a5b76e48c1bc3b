// SPDX-License-Identifier: GPL-2.0
/*
 * Chosen: the main thread reads the log back from the disk each second
 * (the writer's thread writes it at least every 100 ms, recorder.c) and
 * does the naming and uftrace's files there, as the export at the end
 * did; the end is one more checkpoint.  What a SIGKILL loses is what had
 * not reached the disk: at most the last ~100 ms of waits for --replay,
 * the last second for uftrace, and a record torn in half (counted).
 * Rejected: naming on the writer's thread (the symbolizer is the main
 * thread's); a helper process that finishes a killed recording (killed
 * with it by a kill of the process group or the OOM killer's cgroup);
 * fsync (a process killed leaves its writes in the page cache; only a
 * crash of the machine loses them, and fsync each second costs the disk).
 */
#include <errno.h>
#include <stdlib.h>

#include "checkpoint.h"
#include "evlog.h"
#include "uftrace.h"

struct checkpoint {
	struct outdir *dir;
	struct evlog_reader *log;
	struct recnames *names;
	struct uftrace_writer *uftrace;
	size_t named;		/* spans named at the last resolve */
	uint64_t events;
	uint64_t lost;
};

int checkpoint__new(struct outdir *dir, int log_fd, uint64_t sid,
		    struct checkpoint **out)
{
	struct checkpoint *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->dir = dir;
	err = evlog__reader_new(log_fd, &c->log);
	if (!err)
		err = recnames__new(&c->names);
	if (!err)
		err = uftrace__writer_new(dir, sid, &c->uftrace);
	if (err) {
		checkpoint__free(c);
		return err;
	}
	*out = c;
	return 0;
}

/* What the log gained since the last checkpoint. */
static int checkpoint__read(struct checkpoint *c)
{
	struct sp_wait_event e;
	int got, err = 0;

	while (!err && (got = evlog__read(c->log, &e)) > 0) {
		c->lost += e.lost;
		if (!(e.flags & SP_EVENT_LOST_ONLY)) {
			c->events++;
			err = recnames__add(c->names, &e.key);
		}
		if (!err)
			err = uftrace__writer_add(c->uftrace, &e);
	}
	return err ? err : got;
}

static int checkpoint__save(struct checkpoint *c, const char *name,
			    const struct recmeta *meta)
{
	struct outfile *f;
	int err = outfile__open(c->dir, name, OUTFILE_WHOLE, &f);

	if (err)
		return err;
	if (meta)
		recmeta__write(meta, outfile__stream(f));
	else
		recnames__write(c->names, outfile__stream(f));
	return outfile__close(f);
}

int checkpoint__write(struct checkpoint *c, struct recmeta *meta,
		      struct symbolizer *sym)
{
	int err = checkpoint__read(c);

	/* While recording: what the log holds now, as the files show it. */
	if (meta->partial) {
		meta->events = c->events;
		meta->lost = c->lost;
	}
	if (!err && sym && recnames__count(c->names) != c->named) {
		err = recnames__resolve(c->names, sym);
		c->named = recnames__count(c->names);
	}
	if (!err)
		err = checkpoint__save(c, RECNAMES_NAME, NULL);
	if (!err)
		err = uftrace__writer_sync(c->uftrace, meta, c->names);
	if (!err)
		err = checkpoint__save(c, RECMETA_NAME, meta);
	return err;
}

uint64_t checkpoint__events(const struct checkpoint *c)
{
	return c->events;
}

uint64_t checkpoint__lost(const struct checkpoint *c)
{
	return c->lost;
}

struct recnames *checkpoint__names(struct checkpoint *c)
{
	return c->names;
}

void checkpoint__free(struct checkpoint *c)
{
	if (!c)
		return;
	uftrace__writer_free(c->uftrace);
	recnames__free(c->names);
	evlog__reader_free(c->log);
	free(c);
}
