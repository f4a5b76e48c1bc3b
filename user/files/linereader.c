// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "linereader.h"

struct linereader {
	FILE *stream;
	bool own;		/* opened here: closed here */
	char *line;
	size_t cap;
};

static int linereader__make(FILE *stream, bool own, struct linereader **out)
{
	struct linereader *r = calloc(1, sizeof(*r));

	if (!r) {
		if (own)
			fclose(stream);
		return -ENOMEM;
	}
	r->stream = stream;
	r->own = own;
	*out = r;
	return 0;
}

int linereader__open(const char *path, struct linereader **out)
{
	FILE *stream = fopen(path, "re");

	if (!stream)
		return -errno;
	return linereader__make(stream, true, out);
}

int linereader__stream(FILE *stream, struct linereader **out)
{
	return linereader__make(stream, false, out);
}

char *linereader__next(struct linereader *r, size_t *len)
{
	ssize_t n = getline(&r->line, &r->cap, r->stream);

	if (n < 0)
		return NULL;
	if (n && r->line[n - 1] == '\n')
		r->line[--n] = '\0';
	if (len)
		*len = (size_t)n;
	return r->line;
}

int linereader__close(struct linereader *r)
{
	int err;

	if (!r)
		return 0;
	err = ferror(r->stream) ? -EIO : 0;
	if (r->own)
		fclose(r->stream);
	free(r->line);
	free(r);
	return err;
}

int linereader__small(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd, err = 0;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (err)
		return err;
	if (!got)
		return -ENOENT;
	if (buf[got - 1] == '\n')
		got--;
	buf[got] = '\0';
	return (int)got;
}
