// SPDX-License-Identifier: GPL-2.0
/*
 * Each call runs in a short-lived thread of its own while the caller
 * waits with a deadline; a call that misses it is abandoned (the thread
 * frees what it got when, if ever, the kernel answers) and the caller
 * gets -ETIMEDOUT.  The file is first looked up with O_PATH, which opens
 * nothing: fstat says what it is, fstatfs where it lives, and only a
 * regular file on a local file system is opened for reading, through
 * /proc/self/fd/N of that very lookup (no second path walk to race).
 * Under /proc/PID/root the walk is openat2's RESOLVE_IN_ROOT from the
 * target's root, so a link planted by a container resolves in the
 * container, never in syncprof's root.
 *
 * Most calls need no thread: a lookup from the dentry cache alone
 * (openat2's RESOLVE_CACHED), the attributes as cached (statx's
 * AT_STATX_DONT_SYNC), on a file system backed by a device (ext4, xfs:
 * never FUSE or NFS), cannot wait on anyone; only the rest (a first
 * lookup, tmpfs, overlayfs, FUSE, NFS) goes to a thread.
 *
 * Rejected: O_NONBLOCK alone.  It makes a FIFO's open return, but a
 * device is still opened (a tape rewinds, a driver acts), and a lookup
 * on a FUSE or hung network file system blocks in the kernel, where
 * SIGINT only asks the file system to give up.  A thread for every call:
 * on the 2-vCPU guest under load it cost 180-350 us a call, against
 * 20-60 us for a plain open; the cached path is six system calls.  One
 * long-lived worker thread: a stuck worker has to be replaced anyway,
 * and the hand-over costs the same two wake-ups.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "targetfile.h"

#define DEADLINE_MS	  1000	/* a local file answers in microseconds */
#define DEADLINE_STALL_MS 100	/* once one did not answer at all */
#define READ_MAX_MS	  20000	/* a read that goes on, however slowly */
#define READ_CHUNK	  (256 * 1024)
#define WORKER_STACK	  (64 * 1024)
#define SAID_MAX	  32	/* files named; then one line for the rest */

enum job { JOB_OPEN, JOB_STAT, JOB_READ };

struct call {
	atomic_int refs;	/* the caller's and the worker's */
	sem_t done;
	atomic_size_t progress;	/* bytes read so far */
	enum job job;
	unsigned int flags;
	size_t max;
	bool has_prev;
	struct targetfile_stamp prev;
	char path[PATH_MAX];
	/* Results, read by the caller only after done. */
	int err;
	int fd;
	char why[80];		/* why it was refused, for the message */
	struct targetfile_content content;
};

/* Shared by every caller and thread: what was said, whether one stalled. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char **said;
static size_t n_said, cap_said;
static atomic_bool stalled;

static void call_put(struct call *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->content.data);
	sem_destroy(&c->done);
	free(c);
}

static int openat2_path(int dir, const char *path, int nofollow,
			uint64_t resolve)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | nofollow,
		.resolve = resolve,
	};
	int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));

	/* Before Linux 5.6 (no openat2) or 5.12 (no RESOLVE_CACHED). */
	if (fd < 0 && (errno == ENOSYS || errno == EINVAL)) {
		if (resolve & RESOLVE_CACHED) {
			errno = EAGAIN;
			return -1;
		}
		fd = openat(dir, path, O_PATH | O_CLOEXEC | nofollow);
	}
	return fd;
}

/*
 * An O_PATH descriptor of path: nothing opened yet, -1 and errno.
 * cached: from the dentry cache alone, never waiting on a file system
 * (EAGAIN when it would have to).
 */
static int lookup(const char *path, unsigned int flags, bool cached)
{
	int nofollow = flags & TARGETFILE_LINKS ? 0 : O_NOFOLLOW;
	uint64_t resolve = cached ? RESOLVE_CACHED : 0;
	int pid, used = 0;

	if (sscanf(path, "/proc/%d/root/%n", &pid, &used) == 1 && used > 0) {
		char root[64];
		int dir, fd, err;

		snprintf(root, sizeof(root), "/proc/%d/root", pid);
		dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return -1;
		fd = openat2_path(dir, path + used, nofollow, resolve |
				  RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		err = errno;
		close(dir);
		errno = err;
		return fd;
	}
	/*
	 * /proc/PID/exe, map_files, /proc/self/fd: the kernel's own links
	 * to a file it holds; procfs never waits on another file system.
	 */
	if (!strncmp(path, "/proc/", 6))
		return open(path, O_PATH | O_CLOEXEC);
	return openat2_path(AT_FDCWD, path, nofollow, resolve);
}

static const char *file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFDIR: return "a directory";
	default: return "not a file";
	}
}

/*
 * What the looked-up file is; 0 for a regular file syncprof may read.
 * cached: without asking any file system (a FUSE or NFS server's
 * attributes as last cached), and -EAGAIN for a file system that is not
 * on a device (tmpfs, overlayfs, but also FUSE and NFS): only a call
 * with a deadline may ask it.
 */
static int check(struct call *c, int pfd, bool cached, struct stat *st)
{
	struct statx stx;
	struct statfs fs;

	if (statx(pfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW |
		  (cached ? AT_STATX_DONT_SYNC : 0), STATX_BASIC_STATS, &stx))
		return -errno;
	*st = (struct stat){
		.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor),
		.st_ino = stx.stx_ino,
		.st_mode = stx.stx_mode,
		.st_uid = stx.stx_uid,
		.st_size = (off_t)stx.stx_size,
		.st_mtim = { stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec },
	};
	if (S_ISLNK(st->st_mode)) {
		snprintf(c->why, sizeof(c->why), "a symbolic link, not followed");
		return -ELOOP;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(c->why, sizeof(c->why), "%s, not a regular file",
			 file_type(st->st_mode));
		return -ENODEV;
	}
	if (cached && !stx.stx_dev_major)
		return -EAGAIN;
	if (!cached && !fstatfs(pfd, &fs) && fs.f_type == FUSE_SUPER_MAGIC) {
		snprintf(c->why, sizeof(c->why), "on a FUSE file system, whose "
			 "server could stall syncprof");
		return -EREMOTE;
	}
	return 0;
}

static int reopen(int pfd)
{
	char self[64];
	int fd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static bool same_stamp(const struct targetfile_stamp *a,
		       const struct targetfile_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* At most c->max bytes of fd, NUL-terminated. */
static int read_bounded(struct call *c, int fd, off_t size)
{
	size_t cap = size > 0 && (size_t)size < c->max ? (size_t)size : c->max;
	size_t len = 0;
	char *data, more;

	cap = cap < 4096 && c->max >= 4096 ? 4096 : cap;
	data = malloc(cap + 1);
	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap && cap < c->max) {
			size_t grown = cap > c->max / 2 ? c->max : cap * 2;
			char *bigger = realloc(data, grown + 1);

			if (!bigger) {
				free(data);
				return -ENOMEM;
			}
			data = bigger;
			cap = grown;
		}
		if (len == cap)
			break;
		n = read(fd, data + len, cap - len < READ_CHUNK ? cap - len
							       : READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(data);
			return err;
		}
		if (!n)
			break;
		len += (size_t)n;
		atomic_store(&c->progress, len);
	}
	data[len] = '\0';
	c->content.data = data;
	c->content.len = len;
	c->content.truncated = len == c->max && read(fd, &more, 1) == 1;
	return 0;
}

/* cached: only what needs no file system's answer, else -EAGAIN. */
static int call_do(struct call *c, bool cached)
{
	struct stat st = { 0 };
	int pfd = lookup(c->path, c->flags, cached);
	int err, fd = -1;

	if (pfd < 0)
		return -errno;
	err = check(c, pfd, cached, &st);
	if (!err) {
		c->content.stamp = (struct targetfile_stamp){
			.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
			.mtime = st.st_mtim, .uid = st.st_uid,
		};
		if (c->job == JOB_STAT || (c->job == JOB_READ && c->has_prev &&
					   same_stamp(&c->prev, &c->content.stamp))) {
			close(pfd);
			return 0;
		}
		fd = reopen(pfd);
		err = fd < 0 ? fd : 0;
	}
	close(pfd);
	if (!err && c->job == JOB_READ) {
		err = read_bounded(c, fd, st.st_size);
		close(fd);
	} else if (!err) {
		c->fd = fd;
	}
	return err;
}

static void *call_thread(void *arg)
{
	struct call *c = arg;

	c->err = call_do(c, false);
	sem_post(&c->done);
	call_put(c);
	return NULL;
}

/* Said once per file: refusals only, not a file that is not there. */
static void say_skipped(const char *path, const char *why)
{
	bool known = false;

	pthread_mutex_lock(&said_lock);
	for (size_t i = 0; i < n_said && !known; i++)
		known = !strcmp(said[i], path);
	if (!known && n_said < SAID_MAX &&
	    !array__grow(&said, &cap_said, n_said + 1, sizeof(*said)) &&
	    (said[n_said] = strdup(path))) {
		pr_warn("skipped %s: %s", path, why);
		n_said++;
	} else if (!known && n_said == SAID_MAX) {
		pr_warn("more files the targets control were skipped; not "
			"listed");
		n_said++;
	}
	pthread_mutex_unlock(&said_lock);
}

/* Runs c in a thread of its own, up to the deadline; c's err. */
static int call_run(struct call *c)
{
	int ms = atomic_load(&stalled) ? DEADLINE_STALL_MS : DEADLINE_MS;
	pthread_attr_t attr;
	struct timespec at;
	sigset_t all;
	pthread_t thread;
	int err;

	atomic_store(&c->refs, 2);
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	pthread_attr_setsigmask_np(&attr, &all);
	err = pthread_create(&thread, &attr, call_thread, c);
	pthread_attr_destroy(&attr);
	if (err) {
		/* No thread to spare: in this one, unbounded but done. */
		atomic_store(&c->refs, 1);
		c->err = call_do(c, false);
		return c->err;
	}
	/* Each window must see an answer, or a read that moved on. */
	for (int waited = 0;; waited += ms) {
		size_t seen = atomic_load(&c->progress);

		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += ms / 1000;
		at.tv_nsec += (long)(ms % 1000) * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while ((err = sem_clockwait(&c->done, CLOCK_MONOTONIC, &at)) &&
		       errno == EINTR)
			;
		if (!err || atomic_load(&c->progress) == seen ||
		    waited + ms >= READ_MAX_MS)
			break;
	}
	if (err) {
		char why[64];

		/* c->why is the thread's until it ends. */
		atomic_store(&stalled, true);
		snprintf(why, sizeof(why), "no answer within %d ms", ms);
		say_skipped(c->path, why);
		return -ETIMEDOUT;
	}
	return c->err;
}

static struct call *call_new(enum job job, const char *path,
			     unsigned int flags)
{
	struct call *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (snprintf(c->path, sizeof(c->path), "%s", path) >=
	    (int)sizeof(c->path)) {
		free(c);
		errno = ENAMETOOLONG;
		return NULL;
	}
	c->job = job;
	c->flags = flags;
	c->fd = -1;
	atomic_init(&c->refs, 1);	/* the caller's */
	sem_init(&c->done, 0, 0);
	return c;
}

static int call(struct call *c)
{
	int err = call_do(c, true);

	if (err == -EAGAIN)
		err = call_run(c);

	if (err == -ELOOP || err == -ENODEV || err == -EREMOTE)
		say_skipped(c->path, c->why);
	return err;
}

int targetfile__open(const char *path, unsigned int flags, int *fd)
{
	struct call *c = call_new(JOB_OPEN, path, flags);
	int err;

	if (!c)
		return -errno;
	err = call(c);
	if (!err) {
		*fd = c->fd;
		c->fd = -1;
	}
	call_put(c);
	return err;
}

int targetfile__stat(const char *path, unsigned int flags,
		     struct targetfile_stamp *stamp)
{
	struct call *c = call_new(JOB_STAT, path, flags);
	int err;

	if (!c)
		return -errno;
	err = call(c);
	if (!err)
		*stamp = c->content.stamp;
	call_put(c);
	return err;
}

int targetfile__read(const char *path, unsigned int flags, size_t max,
		     const struct targetfile_stamp *prev,
		     struct targetfile_content *out)
{
	struct call *c = call_new(JOB_READ, path, flags);
	int err;

	*out = (struct targetfile_content){ 0 };
	if (!c)
		return -errno;
	c->max = max;
	c->has_prev = prev != NULL;
	if (prev)
		c->prev = *prev;
	err = call(c);
	if (!err) {
		*out = c->content;
		c->content.data = NULL;
	}
	call_put(c);
	return err;
}
