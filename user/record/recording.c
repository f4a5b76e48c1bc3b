// SPDX-License-Identifier: GPL-2.0
/*
 * The waits go to syncprof.events while the target runs; everything else
 * is made from that log at the end, when the symbolizer has seen every
 * library: naming a wait as it arrives would put the symbolizer (and its
 * locks on the main thread's data) on the writer's path.  Without --record
 * (--chrome alone) the log is an unnamed temporary file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "chrome.h"
#include "evlog.h"
#include "log.h"
#include "recnames.h"
#include "recorder.h"
#include "recording.h"
#include "uftrace.h"

struct recording {
	char *dir;
	char *chrome;
	int lost_fd;
	pid_t pid;
	struct recorder *recorder;
	struct recmeta meta;
};

/* What a recording directory may hold: all of it is ours to replace. */
static const char *const recording_files[] = {
	"info", "task.txt", "sid-*.map", "*.sym", "[0-9]*.dat", "syncprof.*",
};

static bool recording__ours(const char *name)
{
	for (size_t i = 0; i < sizeof(recording_files) / sizeof(*recording_files); i++)
		if (!fnmatch(recording_files[i], name, 0))
			return true;
	return false;
}

/*
 * DIR made, or emptied when it holds an older recording; anything else
 * in it is left alone, and refused when it is not a recording.
 */
static int recording__prepare(const char *dir)
{
	char path[4096];
	struct dirent *d;
	bool older, other = false;
	DIR *dh;

	if (!mkdir(dir, 0755))
		return 0;
	if (errno != EEXIST) {
		pr_err("cannot make %s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, RECMETA_NAME);
	older = !access(path, F_OK);
	dh = opendir(dir);
	if (!dh) {
		pr_err("cannot read %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((d = readdir(dh)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			other |= !older || !recording__ours(d->d_name);
	if (other && !older) {
		closedir(dh);
		pr_err("%s is not empty and holds no syncprof recording; "
		       "give a new or empty directory", dir);
		return -EEXIST;
	}
	rewinddir(dh);
	while ((d = readdir(dh))) {
		if (!recording__ours(d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (unlink(path) && errno != ENOENT) {
			int err = -errno;

			pr_err("cannot replace %s: %s", path, strerror(-err));
			closedir(dh);
			return err;
		}
	}
	closedir(dh);
	return 0;
}

/* The log: DIR/syncprof.events, or unnamed next to the Chrome file. */
static int recording__open_log(const struct recording_config *cfg)
{
	char path[4096];
	const char *slash;
	int fd;

	if (cfg->dir) {
		snprintf(path, sizeof(path), "%s/%s", cfg->dir, EVLOG_NAME);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			pr_err("cannot write %s: %s", path, strerror(errno));
		return fd < 0 ? -errno : fd;
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

int recording__start(const struct recording_config *cfg,
		     struct recording **out)
{
	struct recording *r = calloc(1, sizeof(*r));
	struct recmeta *m;
	int err, fd;

	if (!r)
		return -ENOMEM;
	m = &r->meta;
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
		err = recmeta__set(&r->dir, cfg->dir);
	if (!err)
		err = recmeta__set(&r->chrome, cfg->chrome);
	if (err)
		goto fail;
	if (cfg->dir && (err = recording__prepare(cfg->dir)))
		goto fail;
	fd = recording__open_log(cfg);
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
	*out = r;
	return 0;
fail:
	recording__free(r);
	return err;
}

void recording__attached(struct recording *r, uint64_t attach_ns)
{
	r->meta.attach_ns = attach_ns;
}

int recording__note_report(struct recording *r,
			   const struct recmeta_report *report)
{
	return recmeta__add_report(&r->meta, report);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

	for (size_t i = 0; i < n; i++) {
		int err = recmeta__add_thread(&r->meta, t[i].tid, t[i].comm);

		if (err)
			return err;
	}
	return 0;
}

static int recording__write_dir(struct recording *r, struct recnames *names,
				struct evlog_reader *log)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/%s", r->dir, RECMETA_NAME);
	err = recmeta__save(&r->meta, path);
	if (!err) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, RECNAMES_NAME);
		err = recnames__save(names, path);
	}
	if (!err)
		err = uftrace__export(r->dir, &r->meta, names, log);
	if (err)
		pr_err("cannot write the recording in %s: %s", r->dir,
		       strerror(-err));
	return err;
}

static int recording__write_chrome(struct recording *r, struct recnames *names,
				   struct evlog_reader *log)
{
	FILE *f = fopen(r->chrome, "we");
	int err;

	if (!f) {
		err = -errno;
		pr_err("cannot write %s: %s", r->chrome, strerror(-err));
		return err;
	}
	err = chrome__export(f, &r->meta, names, log);
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		pr_err("cannot write %s: %s", r->chrome, strerror(-err));
	return err;
}

int recording__finish(struct recording *r, struct symbolizer *sym,
		      uint64_t ring_dropped)
{
	struct evlog_reader *log = NULL;
	struct recnames *names = NULL;
	int fd = -1, err;

	r->meta.end_ns = monotonic_ns();
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
		pr_err("cannot record the waits: %s", strerror(-err));
		goto out;
	}
	err = evlog__reader_new(fd, &log);
	if (!err)
		err = recording__names(log, sym, &names);
	if (err) {
		pr_err("cannot name the recorded waits: %s", strerror(-err));
		goto out;
	}
	if (r->dir)
		err = recording__write_dir(r, names, log);
	if (!err && r->chrome)
		err = recording__write_chrome(r, names, log);
	if (!err)
		pr_info("recorded %llu waits, %llu lost%s%s%s%s",
			(unsigned long long)r->meta.events,
			(unsigned long long)r->meta.lost,
			r->dir ? " in " : "", r->dir ? r->dir : "",
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
	free(r->dir);
	free(r->chrome);
	free(r);
}
