// SPDX-License-Identifier: GPL-2.0
/*
 * Written by the recorder's thread with one write() per megabyte: the
 * cheapest way to keep up with the ring (make bench: the writer's rate).
 * Read back with pread() in the same large blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evlog.h"

#define EVLOG_MAGIC	"SPWAITS"
#define EVLOG_BUF	(1u << 20)

struct evlog_header {
	char magic[8];
	uint32_t version;
	uint32_t record_size;
};

struct evlog_writer {
	int fd;
	int err;		/* the first write error */
	size_t used;
	uint64_t count;
	unsigned char buf[EVLOG_BUF];
};

struct evlog_reader {
	int fd;
	off_t offset;		/* file offset of buf[0] */
	size_t len, pos;
	unsigned char buf[EVLOG_BUF];
};

static int write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int evlog__writer_new(int fd, struct evlog_writer **out)
{
	struct evlog_header h = {
		.magic = EVLOG_MAGIC,
		.version = EVLOG_VERSION,
		.record_size = sizeof(struct sp_wait_event),
	};
	struct evlog_writer *w;
	int err;

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		return -errno;
	err = write_all(fd, &h, sizeof(h));
	if (err)
		return err;
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->err = 0;
	w->used = 0;
	w->count = 0;
	*out = w;
	return 0;
}

int evlog__flush(struct evlog_writer *w)
{
	int err;

	if (!w->used)
		return w->err;
	err = write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (err && !w->err)
		w->err = err;
	return w->err;
}

int evlog__append(struct evlog_writer *w, const struct sp_wait_event *e)
{
	if (w->used + sizeof(*e) > sizeof(w->buf)) {
		int err = evlog__flush(w);

		if (err)
			return err;
	}
	memcpy(w->buf + w->used, e, sizeof(*e));
	w->used += sizeof(*e);
	w->count++;
	return 0;
}

uint64_t evlog__count(const struct evlog_writer *w)
{
	return w->count;
}

int evlog__writer_free(struct evlog_writer *w, int *fd_out)
{
	int err;

	if (!w)
		return 0;
	err = evlog__flush(w);
	if (fd_out)
		*fd_out = w->fd;
	else if (close(w->fd) && !err)
		err = -errno;
	free(w);
	return err;
}

int evlog__reader_new(int fd, struct evlog_reader **out)
{
	struct evlog_header h;
	struct evlog_reader *r;
	ssize_t n = pread(fd, &h, sizeof(h), 0);

	if (n < 0)
		return -errno;
	if (n != sizeof(h) || memcmp(h.magic, EVLOG_MAGIC, sizeof(h.magic)) ||
	    h.version != EVLOG_VERSION ||
	    h.record_size != sizeof(struct sp_wait_event))
		return -EINVAL;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	evlog__rewind(r);
	*out = r;
	return 0;
}

void evlog__rewind(struct evlog_reader *r)
{
	r->offset = sizeof(struct evlog_header);
	r->len = r->pos = 0;
}

int evlog__read(struct evlog_reader *r, struct sp_wait_event *e)
{
	if (r->len - r->pos < sizeof(*e)) {
		size_t keep = r->len - r->pos;
		ssize_t n;

		memmove(r->buf, r->buf + r->pos, keep);
		r->offset += (off_t)r->pos;
		r->pos = 0;
		r->len = keep;
		do {
			n = pread(r->fd, r->buf + keep, sizeof(r->buf) - keep,
				  r->offset + (off_t)keep);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		r->len += (size_t)n;
		if (r->len < sizeof(*e))
			return 0;
	}
	memcpy(e, r->buf + r->pos, sizeof(*e));
	r->pos += sizeof(*e);
	return 1;
}

size_t evlog__torn(const struct evlog_reader *r)
{
	return r->len - r->pos;
}

void evlog__reader_free(struct evlog_reader *r)
{
	free(r);
}
