// SPDX-License-Identifier: GPL-2.0
/*
 * Chosen: a temporary name made with O_EXCL | O_NOFOLLOW next to the
 * file and renameat() over its name (what install(1) and editors' safe
 * saves do): the one way that neither writes through a link planted at
 * the name nor truncates a file someone else holds open.  The fresh name
 * comes from getrandom(), retried on EEXIST.
 * Rejected: O_TMPFILE + linkat (linkat cannot replace a name, so it still
 * needs the rename, and /proc/self/fd linking needs /proc); open with
 * O_NOFOLLOW at the name (a hard link or a file someone else made there
 * is still written into); refusing every existing file (-o report.json
 * run twice must keep working).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"

#define OUTFILE_TRIES	64
#define OUTFILE_BUF	(64u << 10)

struct outdir {
	int fd;
	char *path;
	bool quiet;	/* its owner says its write errors */
};

struct outfile {
	int dirfd;		/* the file's directory; -1 for a stream */
	bool own_dirfd;
	int fd;
	FILE *stream;
	char *path;		/* as the user named it */
	char *base;		/* its name in dirfd */
	char tmp[32];		/* its temporary name while not in place */
	bool placed;		/* at its name (tmp is no more) */
	bool committed;		/* a version was put in place */
	bool dirty;		/* written since */
	enum outfile_kind kind;
	int err;		/* the first error of any write */
	bool reported;
	const bool *quiet;	/* its directory's: errors said by its owner */
};

static bool outfile__trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Records the first error; prints it once, with the name. */
static int outfile__fail(struct outfile *f, int err)
{
	if (!f->err)
		f->err = err;
	if (!f->reported && !(f->quiet && *f->quiet)) {
		pr_err("cannot write %s: %s", f->path, strerror(-f->err));
		f->reported = true;
	}
	return f->err;
}

static ssize_t outfile__cookie_write(void *cookie, const char *buf, size_t len)
{
	struct outfile *f = cookie;
	size_t done = 0;

	f->dirty = true;
	while (done < len) {
		ssize_t n = write(f->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!f->err)
				f->err = n < 0 ? -errno : -EIO;
			/* stdio keeps the error; close and flush report it. */
			errno = -f->err;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int outfile__stream_new(struct outfile *f)
{
	cookie_io_functions_t io = { .write = outfile__cookie_write };

	f->stream = fopencookie(f, "w", io);
	if (!f->stream)
		return -errno;
	setvbuf(f->stream, NULL, _IOFBF, OUTFILE_BUF);
	return 0;
}

/* A fresh name in f->dirfd, made with O_EXCL: f->tmp, f->fd. */
static int outfile__make_tmp(struct outfile *f)
{
	for (int i = 0; i < OUTFILE_TRIES; i++) {
		uint64_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint64_t)getpid() * 2654435761u + (uint64_t)i;
		snprintf(f->tmp, sizeof(f->tmp), ".syncprof-%016llx",
			 (unsigned long long)r);
		f->fd = openat(f->dirfd, f->tmp, O_RDWR | O_CREAT | O_EXCL |
			       O_NOFOLLOW | O_CLOEXEC, 0666);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int outfile__place(struct outfile *f)
{
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->base))
		return -errno;
	f->placed = true;
	return 0;
}

/* path's directory, opened; f->base its last name. */
static int outfile__split(struct outfile *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *parent;

	if (slash && !slash[1])
		return -EISDIR;
	f->base = strdup(slash ? slash + 1 : path);
	if (!f->base)
		return -ENOMEM;
	if (!slash) {
		f->dirfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		parent = slash == path ? strdup("/")
				       : strndup(path, (size_t)(slash - path));
		if (!parent)
			return -ENOMEM;
		f->dirfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(parent);
	}
	if (f->dirfd < 0)
		return -errno;
	f->own_dirfd = true;
	return 0;
}

static bool is_stream(mode_t mode)
{
	return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISSOCK(mode);
}

/*
 * What is at the name now: 0 (nothing, or a regular file or a link: to
 * be replaced), 1 (a stream to write to as it is) or -errno (refused).
 */
static int outfile__existing(struct outfile *f)
{
	struct stat lst, st;

	if (fstatat(f->dirfd, f->base, &lst, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(lst.st_mode)) {
		/* A dangling link, or one to a file: replaced, not followed. */
		if (fstatat(f->dirfd, f->base, &st, 0))
			return 0;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!is_stream(st.st_mode))
			return 0;
		return outfile__trusted_owner(lst.st_uid) ? 1 : -EPERM;
	}
	if (S_ISDIR(lst.st_mode))
		return -EISDIR;
	if (S_ISBLK(lst.st_mode))
		return -ENOTSUP;
	if (is_stream(lst.st_mode))
		return outfile__trusted_owner(lst.st_uid) ? 1 : -EPERM;
	return 0;
}

static int outfile__open_stream(struct outfile *f)
{
	struct stat st;

	f->fd = openat(f->dirfd, f->base, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	if (fstat(f->fd, &st))
		return -errno;
	if (!is_stream(st.st_mode))
		return -EPERM;	/* swapped since it was looked at */
	f->placed = true;
	return 0;
}

/* A file of ours again: no link, no other owner, no second name. */
static int outfile__reopen(struct outfile *f)
{
	struct stat st;

	f->placed = true;
	f->fd = openat(f->dirfd, f->base, O_WRONLY | O_APPEND | O_NOFOLLOW |
		       O_NOCTTY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	if (fstat(f->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
		return -EPERM;
	return 0;
}

static const char *refusal(int err)
{
	switch (err) {
	case -EPERM:
		return "it belongs to another user and is not a regular file; "
		       "syncprof does not write through it";
	case -ENOTSUP:
		return "it is a block device";
	default:
		return strerror(-err);
	}
}

int outfile__open(struct outdir *dir, const char *path,
		  enum outfile_kind kind, struct outfile **out)
{
	struct outfile *f = calloc(1, sizeof(*f));
	int err, existing = 0;

	if (!f)
		return -ENOMEM;
	f->fd = -1;
	f->dirfd = -1;
	f->kind = kind;
	if (dir) {
		if (asprintf(&f->path, "%s/%s", dir->path, path) < 0)
			f->path = NULL;
		f->base = strdup(path);
		f->dirfd = dir->fd;
		f->quiet = &dir->quiet;
		err = f->path && f->base ? 0 : -ENOMEM;
	} else {
		f->path = strdup(path);
		err = f->path ? outfile__split(f, path) : -ENOMEM;
		if (!err && (kind == OUTFILE_NEW || kind == OUTFILE_APPEND))
			err = -EINVAL;
	}
	if (!err && !dir)
		existing = outfile__existing(f);
	if (!err && existing < 0)
		err = existing;
	if (!err && existing == 1) {
		err = outfile__open_stream(f);
	} else if (!err && kind == OUTFILE_NEW) {
		f->fd = openat(f->dirfd, f->base, O_RDWR | O_CREAT | O_EXCL |
			       O_NOFOLLOW | O_CLOEXEC, 0666);
		err = f->fd < 0 ? -errno : 0;
		f->placed = true;
	} else if (!err && kind == OUTFILE_APPEND) {
		err = outfile__reopen(f);
	} else if (!err) {
		err = outfile__make_tmp(f);
		if (!err && kind == OUTFILE_GROWING)
			err = outfile__place(f);
	}
	if (!err)
		err = outfile__stream_new(f);
	if (err) {
		if (f->path && !(dir && dir->quiet))
			pr_err("cannot write %s: %s", f->path, refusal(err));
		outfile__discard(f);
		return err;
	}
	*out = f;
	return 0;
}

FILE *outfile__stream(struct outfile *f)
{
	return f->stream;
}

int outfile__fd(struct outfile *f)
{
	return f->fd;
}

const char *outfile__path(const struct outfile *f)
{
	return f->path;
}

int outfile__flush(struct outfile *f)
{
	if (fflush(f->stream) && !f->err)
		f->err = -errno;
	return f->err ? outfile__fail(f, f->err) : 0;
}

int outfile__commit(struct outfile *f)
{
	int err = outfile__flush(f);

	if (err || f->kind != OUTFILE_WHOLE || f->placed || !f->stream)
		return err;
	if (close(f->fd))
		return outfile__fail(f, -errno);
	f->fd = -1;
	err = outfile__place(f);
	if (!err)
		err = outfile__make_tmp(f);
	if (err)
		return outfile__fail(f, err);
	f->placed = false;
	f->committed = true;
	f->dirty = false;
	return 0;
}

static void outfile__free(struct outfile *f)
{
	if (f->own_dirfd && f->dirfd >= 0)
		close(f->dirfd);
	free(f->path);
	free(f->base);
	free(f);
}

int outfile__close(struct outfile *f)
{
	int err;

	if (!f)
		return 0;
	err = outfile__flush(f);
	fclose(f->stream);
	f->stream = NULL;
	if (close(f->fd) && !err)
		err = outfile__fail(f, -errno);
	f->fd = -1;
	/* Nothing since the last version: that one stays. */
	if (!err && !f->placed && f->committed && !f->dirty) {
		outfile__discard(f);
		return 0;
	}
	if (!err && !f->placed && (err = outfile__place(f)))
		outfile__fail(f, err);
	if (err) {
		outfile__discard(f);
		return err;
	}
	outfile__free(f);
	return 0;
}

void outfile__discard(struct outfile *f)
{
	if (!f)
		return;
	if (f->stream)
		fclose(f->stream);
	if (f->fd >= 0)
		close(f->fd);
	if (!f->placed && f->tmp[0])
		unlinkat(f->dirfd, f->tmp, 0);
	outfile__free(f);
}

/* --- a recording's directory ------------------------------------------ */

static int outdir__empty(int fd)
{
	int dup_fd = dup(fd);
	struct dirent *d;
	bool empty = true;
	DIR *dh;

	if (dup_fd < 0)
		return -errno;
	dh = fdopendir(dup_fd);
	if (!dh) {
		close(dup_fd);
		return -errno;
	}
	while (empty && (d = readdir(dh)))
		empty = !strcmp(d->d_name, ".") || !strcmp(d->d_name, "..");
	closedir(dh);
	return empty ? 0 : -ENOTEMPTY;
}

static int outdir__check(const char *path, int fd)
{
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid != geteuid()) {
		pr_err("%s belongs to user %u, not to syncprof's user (%u): "
		       "give a new directory, or an empty one of your own",
		       path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	err = outdir__empty(fd);
	if (err == -ENOTEMPTY)
		pr_err("%s is not empty: syncprof records into a new or "
		       "empty directory and deletes nothing there (remove an "
		       "older recording first)", path);
	else if (err)
		pr_err("cannot read %s: %s", path, strerror(-err));
	return err;
}

int outdir__make(const char *path, struct outdir **out)
{
	struct outdir *d = calloc(1, sizeof(*d));
	bool made;
	int err;

	if (!d)
		return -ENOMEM;
	d->fd = -1;
	d->path = strdup(path);
	if (!d->path) {
		free(d);
		return -ENOMEM;
	}
	made = !mkdir(path, 0755);
	if (!made && errno != EEXIST) {
		err = -errno;
		pr_err("cannot make %s: %s", path, strerror(-err));
		goto fail;
	}
	/* One made here must be the one opened, not a link put there since. */
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
		     (made ? O_NOFOLLOW : 0));
	if (d->fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s", path, strerror(-err));
		goto fail;
	}
	err = outdir__check(path, d->fd);
	if (err)
		goto fail;
	*out = d;
	return 0;
fail:
	outdir__free(d);
	return err;
}

int outdir__fd(const struct outdir *d)
{
	return d->fd;
}

const char *outdir__path(const struct outdir *d)
{
	return d->path;
}

void outdir__quiet(struct outdir *d)
{
	d->quiet = true;
}

void outdir__free(struct outdir *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	free(d);
}

int outfile__terminal_cols(FILE *stream)
{
	struct winsize ws;
	int fd = stream ? fileno(stream) : -1;

	if (fd < 0 || !isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}
