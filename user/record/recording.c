// SPDX-License-Identifier: GPL-2.0
/*
 * The waits go to syncprof.events while the target runs; everything else
 * is made from that log at the end, when the symbolizer has seen every
 * library: naming a wait as it arrives would put the symbolizer (and its
 * locks on the main thread's data) on the writer's path.  Without --record
 * (--chrome alone) the log is an unnamed temporary file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "clock.h"
#include "checkpoint.h"
#include "chrome.h"
#include "evlog.h"
#include "log.h"
#include "outfile.h"
#include "recnames.h"
#include "recorder.h"
#include "recording.h"

struct recording {
	struct outdir *dir;	/* --record's, or NULL */
	struct outfile *log;	/* its syncprof.events */
	struct checkpoint *kept;	/* --record: the files kept current */
	char *chrome;
	int lost_fd;
	pid_t pid;
	struct recorder *recorder;
	struct recmeta meta;
	int stop_fd;		/* DIR/syncprof.stop, room for the reason */
	int stopped;		/* the write error that stopped it, said */
};

/*
 * The log: DIR/syncprof.events, new in the directory syncprof made or
 * was given empty; or unnamed next to the Chrome file (or in /tmp).
 */
static int recording__open_log(struct recording *r,
			       const struct recording_config *cfg)
{
	char path[4096];
	const char *slash;
	int fd;

	if (r->dir) {
		int err = outfile__open(r->dir, EVLOG_NAME, OUTFILE_NEW,
					&r->log);

		/* The recorder's own descriptor: it closes it. */
		if (!err && (fd = dup(outfile__fd(r->log))) < 0)
			err = -errno;
		return err ? err : fd;
	}
	slash = strrchr(cfg->chrome, '/');
	if (slash)
		snprintf(path, sizeof(path), "%.*s", (int)(slash - cfg->chrome + 1),
			 cfg->chrome);
	else
		snprintf(path, sizeof(path), ".");
	fd = open(path, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		pr_err("cannot make a temporary file for the waits: %s",
		       strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* The target's executable, as the target names it; unknown is no error. */
static int recording__exe(pid_t pid, struct recmeta *m)
{
	char link[64], path[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return recmeta__set(&m->exe, path);
}

/* DIR/syncprof.stop (recmeta.h), its room taken now: a descriptor. */
static int recording__reserve_stop(struct recording *r)
{
	char zeros[RECMETA_STOP_SIZE] = { 0 };
	int fd = openat(outdir__fd(r->dir), RECMETA_STOP_NAME,
			O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);

	if (fd < 0)
		return -errno;
	if (write(fd, zeros, sizeof(zeros)) != (ssize_t)sizeof(zeros)) {
		int err = errno ? -errno : -ENOSPC;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * A write of the recording failed: said once, by what it means, and the
 * recording stops there (the profile goes on); its files keep what was
 * written, and syncprof.stop says why for --replay.
 */
static void recording__stop(struct recording *r, int err, const char *what)
{
	char reason[32];
	int n;

	if (r->stopped)
		return;
	r->stopped = err;
	if (r->recorder)
		recorder__stop(r->recorder);
	if (err == -ENOSPC || err == -EDQUOT)
		pr_err("the recording in %s stopped: its file system is full "
		       "(%s); it keeps the waits written until then, which "
		       "--replay %s reads", outdir__path(r->dir), strerror(-err),
		       outdir__path(r->dir));
	else
		pr_err("the recording in %s stopped: %s: %s; it keeps the "
		       "waits written until then", outdir__path(r->dir), what,
		       strerror(-err));
	n = snprintf(reason, sizeof(reason), "%d\n", -err);
	if (r->stop_fd >= 0 && pwrite(r->stop_fd, reason, (size_t)n, 0) != n)
		pr_debug("cannot write %s/%s", outdir__path(r->dir),
			 RECMETA_STOP_NAME);
}

int recording__start(const struct recording_config *cfg,
		     struct recording **out)
{
	struct recording *r = calloc(1, sizeof(*r));
	struct recmeta *m;
	int err, fd;

	if (!r)
		return -ENOMEM;
	m = &r->meta;
	r->stop_fd = -1;
	r->lost_fd = cfg->lost_fd;
	r->pid = cfg->pid;
	m->pid = cfg->pid;
	m->calibration_ns = cfg->calibration_ns;
	m->calibration_emulated_ns = cfg->calibration_emulated_ns;
	m->calibration_stepped_ns = cfg->calibration_stepped_ns;
	m->map_size = cfg->map_size;
	m->ring_size = cfg->ring_size;
	err = recmeta__set(&m->comm, cfg->comm);
	if (!err)
		err = recording__exe(cfg->pid, m);
	if (!err)
		err = recmeta__set(&m->mode, cfg->mode);
	if (!err)
		err = recmeta__set(&m->cmdline, cfg->cmdline);
	if (!err)
		err = recmeta__set(&r->chrome, cfg->chrome);
	if (err)
		goto fail;
	if (cfg->dir && (err = outdir__make(cfg->dir, &r->dir)))
		goto fail;
	if (r->dir) {
		r->stop_fd = recording__reserve_stop(r);
		if (r->stop_fd < 0) {
			err = r->stop_fd;
			pr_err("cannot write %s/%s: %s", cfg->dir,
			       RECMETA_STOP_NAME, strerror(-err));
			goto fail;
		}
	}
	fd = recording__open_log(r, cfg);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	const struct recorder_config rc = {
		.ring_fd = cfg->ring_fd,
		.log_fd = fd,
		.pid = cfg->pid,
	};
	err = recorder__start(&rc, &r->recorder);
	if (err) {
		pr_err("cannot start the writer: %s", strerror(-err));
		goto fail;
	}
	/* The header first: a recording cut short from now on reads. */
	if (r->dir) {
		err = checkpoint__new(r->dir, outfile__fd(r->log),
				      clock__monotonic_ns() ^ ((uint64_t)cfg->pid << 40),
				      &r->kept);
		if (!err)
			err = recording__checkpoint(r, NULL);
		if (!err && r->stopped)
			err = r->stopped;	/* said */
		if (err)
			goto fail;
	}
	*out = r;
	return 0;
fail:
	recording__free(r);
	return err;
}

void recording__attached(struct recording *r, uint64_t attach_ns)
{
	r->meta.attach_ns = attach_ns;
	recording__checkpoint(r, NULL);
}

/* The threads seen so far, as the meta file lists them. */
static int recording__threads_now(struct recording *r)
{
	struct recorder_thread *t;
	size_t n;
	int err = recorder__threads_copy(r->recorder, &t, &n);

	if (err)
		return err;
	r->meta.n_threads = 0;
	for (size_t i = 0; !err && i < n; i++)
		err = recmeta__add_thread(&r->meta, t[i].tid, t[i].comm);
	free(t);
	return err;
}

int recording__checkpoint(struct recording *r, struct symbolizer *sym)
{
	int err;

	if (!r->kept || r->stopped)
		return 0;
	r->meta.end_ns = clock__monotonic_ns();
	r->meta.partial = 1;
	err = recording__threads_now(r);
	if (err)
		return err;
	/* Write errors are the recording's end, said here; not the run's. */
	outdir__quiet(r->dir);
	err = checkpoint__write(r->kept, &r->meta, sym);
	if (err == -ENOMEM)
		return err;
	if (err)
		recording__stop(r, err, "cannot keep it current");
	return 0;
}

int recording__note_report(struct recording *r,
			   const struct recmeta_report *report)
{
	return recmeta__add_report(&r->meta, report);
}

/*
 * Waits lost with no later recorded wait of their thread to carry them:
 * the kernel still holds their count; each thread's goes at its end.
 * What no thread holds (the table was full) goes to the main thread.
 */
static int recording__remainder(struct recording *r, uint64_t ring_dropped,
				uint64_t end_ns)
{
	struct sp_wait_event e;
	__u32 tid, next, *prev = NULL;
	struct sp_lost lost;
	int err = 0;

	while (!err && !bpf_map_get_next_key(r->lost_fd, prev, &next)) {
		tid = next;
		prev = &tid;
		if (bpf_map_lookup_elem(r->lost_fd, &tid, &lost) || !lost.count)
			continue;
		memset(&e, 0, sizeof(e));
		e.key.tid = tid;
		e.flags = SP_EVENT_LOST_ONLY;
		e.lost = (__u32)lost.count;
		e.lost_ns = lost.first_ns;
		e.start_ns = e.end_ns = end_ns;
		err = recorder__append(r->recorder, &e);
	}
	if (!err && ring_dropped > recorder__lost(r->recorder)) {
		memset(&e, 0, sizeof(e));
		e.key.tid = (__u32)r->pid;
		e.flags = SP_EVENT_LOST_ONLY;
		e.lost = (__u32)(ring_dropped - recorder__lost(r->recorder));
		e.lost_ns = e.start_ns = e.end_ns = end_ns;
		err = recorder__append(r->recorder, &e);
	}
	return err;
}

static int recording__names(struct evlog_reader *log, struct symbolizer *sym,
			    struct recnames **out)
{
	struct sp_wait_event e;
	struct recnames *names;
	int got, err = recnames__new(&names);

	if (err)
		return err;
	while ((got = evlog__read(log, &e)) > 0) {
		if (e.flags & SP_EVENT_LOST_ONLY)
			continue;
		err = recnames__add(names, &e.key);
		if (err)
			break;
	}
	if (!err && got < 0)
		err = got;
	if (!err)
		err = recnames__resolve(names, sym);
	if (err) {
		recnames__free(names);
		return err;
	}
	*out = names;
	return 0;
}

static int recording__threads(struct recording *r)
{
	size_t n;
	const struct recorder_thread *t = recorder__threads(r->recorder, &n);

	r->meta.n_threads = 0;	/* a checkpoint's list, replaced */
	for (size_t i = 0; i < n; i++) {
		int err = recmeta__add_thread(&r->meta, t[i].tid, t[i].comm);

		if (err)
			return err;
	}
	return 0;
}

static int recording__write_chrome(struct recording *r, struct recnames *names,
				   struct evlog_reader *log)
{
	struct outfile *f;
	int err = outfile__open(NULL, r->chrome, OUTFILE_WHOLE, &f);

	if (err)
		return err;
	err = chrome__export(outfile__stream(f), &r->meta, names, log);
	if (err) {
		pr_err("cannot write %s: %s", r->chrome, strerror(-err));
		outfile__discard(f);
		return err;
	}
	return outfile__close(f);
}

int recording__finish(struct recording *r, struct symbolizer *sym,
		      uint64_t ring_dropped)
{
	struct evlog_reader *log = NULL;
	struct recnames *names = NULL;
	int fd = -1, err;

	if (r->stopped) {
		/* Said when it stopped: the files stay as they were then. */
		recorder__finish(r->recorder, &fd);
		recorder__free(r->recorder);
		r->recorder = NULL;
		if (fd >= 0)
			close(fd);
		return r->stopped;
	}
	r->meta.end_ns = clock__monotonic_ns();
	err = recorder__stop(r->recorder);
	if (!err)
		err = recording__remainder(r, ring_dropped, r->meta.end_ns);
	r->meta.events = recorder__events(r->recorder);
	r->meta.lost = recorder__lost(r->recorder);
	if (!err)
		err = recording__threads(r);
	if (!err)
		err = recorder__finish(r->recorder, &fd);
	else
		recorder__finish(r->recorder, &fd);
	recorder__free(r->recorder);
	r->recorder = NULL;
	if (err) {
		if (r->dir && err != -ENOMEM)
			recording__stop(r, err, "cannot write its waits");
		else if (r->log)
			pr_err("cannot write %s: %s", outfile__path(r->log),
			       strerror(-err));
		else
			pr_err("cannot record the waits: %s", strerror(-err));
		goto out;
	}
	if (r->kept) {
		/* The last checkpoint: the whole log, named. */
		r->meta.partial = 0;
		outdir__quiet(r->dir);
		err = checkpoint__write(r->kept, &r->meta, sym);
		if (err && err != -ENOMEM) {
			r->meta.partial = 1;
			recording__stop(r, err, "cannot write it");
			goto out;
		} else if (err) {
			pr_err("cannot write the recording in %s: %s",
			       outdir__path(r->dir), strerror(-err));
			goto out;
		}
	}
	err = evlog__reader_new(fd, &log);
	if (!err && !r->kept)
		err = recording__names(log, sym, &names);
	if (err) {
		pr_err("cannot name the recorded waits: %s", strerror(-err));
		goto out;
	}
	if (!err && r->chrome)
		err = recording__write_chrome(r, r->kept ?
					      checkpoint__names(r->kept) : names,
					      log);
	if (!err)
		pr_info("recorded %llu waits, %llu lost%s%s%s%s",
			(unsigned long long)r->meta.events,
			(unsigned long long)r->meta.lost,
			r->dir ? " in " : "", r->dir ? outdir__path(r->dir) : "",
			r->chrome ? " and " : "", r->chrome ? r->chrome : "");
out:
	recnames__free(names);
	evlog__reader_free(log);
	if (fd >= 0)
		close(fd);
	return err;
}

void recording__free(struct recording *r)
{
	if (!r)
		return;
	recorder__free(r->recorder);
	recmeta__clear(&r->meta);
	checkpoint__free(r->kept);
	outfile__discard(r->log);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	outdir__free(r->dir);
	free(r->chrome);
	free(r);
}
