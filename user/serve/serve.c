// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP by libmicrohttpd, in the loop that reads the probes: MHD's epoll
 * fd and a timerfd sit in one epoll fd the loop polls, MHD_run serves
 * what is ready, nothing blocks.  A scrape reads the probes itself
 * (serve_config.read), so it sees the waits up to the moment it came, and
 * it is served by the same code as a report: report__build, the
 * symbolizer's names, pprof.c's encoder.  ?seconds=N takes a copy of the
 * totals, suspends the connection (MHD_suspend_connection) and resumes
 * it when the timer says N seconds have passed; the answer is the
 * difference.
 *
 * Rejected: MHD's own thread (the symbolizer, the stacks and the
 * snapshots are the loop's; a second thread would need locks around
 * every one of them, or a copy of everything per scrape); a thread per
 * connection (a slow client would cost a thread, and a scrape cannot go
 * faster than the loop's read anyway).
 *
 * Bounds: 32 connections (8 per client address), 16 KiB per request
 * (larger headers get 431 from MHD), 10 s without progress closes a
 * connection, ?seconds at most 3600; only GET and HEAD.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "array.h"
#include "listen.h"
#include "locktype.h"
#include "log.h"
#include "metricnames.h"
#include "metrics.h"
#include "names.h"
#include "pprof.h"
#include "report.h"
#include "serve.h"
#include "text.h"

#define SERVE_MAX_CONNECTIONS	32
#define SERVE_MAX_PER_CLIENT	8
#define SERVE_REQUEST_BYTES	(16 * 1024)
#define SERVE_IDLE_S		10
#define SERVE_MAX_SECONDS	3600
/* MHD's own timeouts are checked at least this often. */
#define SERVE_TICK_NS		1000000000ull

enum serve_page {
	PAGE_INDEX,
	PAGE_METRICS,
	PAGE_BLOCK,
	PAGE_MUTEX,
	PAGE_NONE,
};

/* One request, from its first call of the handler to its end. */
struct serve_request {
	struct serve *s;
	struct MHD_Connection *conn;
	bool has_body;		/* a GET with a body: refused */
	bool waiting;		/* ?seconds=N: suspended until deadline_ns */
	bool due;		/* the N seconds have passed: answer */
	uint64_t deadline_ns;
	uint64_t start_ns;
	struct snapshot *start;	/* the totals when it came, by process */
	struct why *start_why;	/* --why's, then */
};

struct serve {
	struct serve_config cfg;
	struct MHD_Daemon *mhd;
	int epoll_fd;
	int timer_fd;
	struct metrics *metrics;
	struct serve_request **waiting;	/* ?seconds=N, suspended */
	size_t n_waiting, waiting_cap;
	bool stopping;		/* serve__free: close, do not answer */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- rows, named as the reports name them ------------------------------ */

static const struct report_settings serve_settings = {
	.coalesce = false,	/* a label per object */
	.per_process = true,	/* labels process and pid */
	.sort = SORT_TOTAL,
	.top = 0,
};

/* pprof's "process" label. */
static const char *serve__process_name(const void *ctx, pid_t pid)
{
	const struct serve_view *v = ctx;

	for (size_t i = 0; i < v->n_processes; i++)
		if (v->processes[i].pid == pid)
			return v->processes[i].comm;
	return NULL;
}

int serve__add_delta(struct serve *s, const struct snapshot *delta,
		     const struct procset_entry *procs, size_t n_procs)
{
	if (!s)
		return 0;
	return metricnames__add(s->metrics, s->cfg.symbolizer, delta, procs,
				n_procs, s->cfg.coalesce);
}

/* ---- pages ------------------------------------------------------------- */

/* A page in memory: open_memstream's buffer. */
struct serve_page_buf {
	char *data;
	size_t len;
	FILE *f;
};

static int page__open(struct serve_page_buf *p)
{
	*p = (struct serve_page_buf){ 0 };
	p->f = open_memstream(&p->data, &p->len);
	return p->f ? 0 : -ENOMEM;
}

/* Closes the stream; 0 with the data the caller's to free, or -errno. */
static int page__close(struct serve_page_buf *p, int err)
{
	if (fclose(p->f) && !err)
		err = -ENOMEM;
	if (err) {
		free(p->data);
		p->data = NULL;
	}
	return err;
}

static void serve__health(const struct serve_view *v, double *cpu,
			  uint64_t *rss)
{
	struct rusage ru;
	unsigned long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	*cpu = 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	*rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int serve__metrics_page(struct serve *s, const struct serve_view *v,
			       FILE *out)
{
	static const char *const causes[] = {
		"map_full", "no_storage", "nested", "skipped", "ring",
	};
	const uint64_t drops[] = {
		v->drops.map_full, v->drops.no_storage, v->drops.nested,
		v->drops.skipped, v->drops.ring,
	};
	struct metrics_health h = {
		.drop_causes = causes,
		.drops = drops,
		.n_drops = sizeof(drops) / sizeof(drops[0]),
		.processes_followed = v->followed,
	};

	serve__health(v, &h.cpu_seconds, &h.resident_bytes);
	return metrics__write(s->metrics, &h, out);
}

/* A copy of snap keyed as a profile groups it: no thread, no holder. */
static void serve__no_thread(void *ctx, struct sp_key *key)
{
	key->tid = 0;
	key->owner_tid = 0;
}

static int serve__by_process(const struct snapshot *snap,
			     struct snapshot **out)
{
	int err = snapshot__merge(snap, NULL, out);

	if (!err)
		snapshot__rekey(*out, serve__no_thread, NULL);
	return err;
}

/*
 * A profile of snap (totals), or of its change since since (NULL: since
 * the start), as go tool pprof reads it; why (NULL: none): --why's
 * charges over the same window, which split each row's samples by root.
 */
static int serve__profile_page(struct serve *s, const struct serve_view *v,
			       const struct snapshot *snap,
			       const struct snapshot *since,
			       const struct why *why,
			       uint64_t start_ns, FILE *out)
{
	struct snapshot *now = NULL, *delta = NULL;
	const struct snapshot *view = snap;
	struct report_rows rows = { 0 };
	struct row_names *names = NULL;
	int err = 0;

	if (since && snap) {
		err = serve__by_process(snap, &now);
		if (!err)
			err = snapshot__delta(now, since, &delta);
		view = delta;
	}
	if (!err && view)
		err = report__build(snapshot__entries(view),
				    snapshot__count(view), &serve_settings,
				    &rows);
	if (!err)
		err = names__rows(s->cfg.symbolizer, &rows, &names);
	if (!err) {
		const struct pprof_window window = {
			.pid = v->pid,
			.comm = v->comm,
			.scope = v->scope,
			.process_name = serve__process_name,
			.process_ctx = v,
			.mode = v->mode,
			.start_ns = start_ns,
			.end_ns = v->now_ns,
			.symbolized = true,
			/* The rows' grouping: a row finds its charges by it. */
			.why = why,
			.why_rows_by = &serve_settings,
		};

		err = pprof__print(out, s->cfg.symbolizer, s->cfg.stacks,
				   &window, &rows, names);
	}
	free(names);
	report__free(&rows);
	snapshot__free(delta);
	snapshot__free(now);
	return err;
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>syncprof</title></head><body>\n"
	"<h1>syncprof</h1>\n<p>Where the threads of this host's processes "
	"wait on locks.</p>\n<ul>\n"
	"<li><a href=\"/metrics\">/metrics</a>: Prometheus text exposition "
	"(syncprof_lock_wait_seconds_total, syncprof_lock_waits_total, "
	"syncprof_lock_failed_total, syncprof_lock_wait_seconds)</li>\n"
	"<li><a href=\"/debug/pprof/block\">/debug/pprof/block</a>: the "
	"waiters' stacks, gzipped profile.proto; ?seconds=N for the next N "
	"seconds; with --why, each split by where its chains of waits end "
	"(labels root, root_state)</li>\n"
	"<li><a href=\"/debug/pprof/mutex\">/debug/pprof/mutex</a>: the "
	"releasers' stacks (who made them wait), the same protocol</li>\n"
	"</ul>\n</body></html>\n";

/* ---- HTTP -------------------------------------------------------------- */

static enum MHD_Result serve__reply(struct MHD_Connection *conn,
				    unsigned int status, const char *type,
				    char *data, size_t len, bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, data, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		if (owned)
			free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!strcmp(type, "application/octet-stream"))
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve__text(struct MHD_Connection *conn,
				   unsigned int status, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return serve__reply(conn, status, "text/plain; charset=utf-8", text,
			    (size_t)n, true);
}

static enum serve_page serve__page(const char *url)
{
	if (!strcmp(url, "/"))
		return PAGE_INDEX;
	if (!strcmp(url, "/metrics"))
		return PAGE_METRICS;
	if (!strcmp(url, "/debug/pprof/block"))
		return PAGE_BLOCK;
	if (!strcmp(url, "/debug/pprof/mutex"))
		return PAGE_MUTEX;
	return PAGE_NONE;
}

/* ?seconds=N: 0 when absent, N, or -EINVAL. */
static long serve__seconds(struct MHD_Connection *conn)
{
	const char *arg = MHD_lookup_connection_value(conn,
			MHD_GET_ARGUMENT_KIND, "seconds");
	unsigned long n;
	char *end;

	if (!arg)
		return 0;
	errno = 0;
	n = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || arg[0] == '+' || !n ||
	    n > SERVE_MAX_SECONDS)
		return -EINVAL;
	return (long)n;
}

/* Arms the timer for the first deadline, or MHD's next tick. */
static void serve__arm(struct serve *s)
{
	uint64_t now = monotonic_ns(), next = now + SERVE_TICK_NS;
	struct itimerspec its = { 0 };
	MHD_UNSIGNED_LONG_LONG ms;

	/* MHD's next job: a timeout to check, work left (0: at once). */
	if (MHD_get_timeout(s->mhd, &ms) == MHD_YES &&
	    ms * 1000000ull < SERVE_TICK_NS)
		next = now + (ms ? ms * 1000000ull : 1);

	for (size_t i = 0; i < s->n_waiting; i++)
		if (!s->waiting[i]->due && s->waiting[i]->deadline_ns < next)
			next = s->waiting[i]->deadline_ns;
	its.it_value.tv_sec = (time_t)(next / 1000000000ull);
	its.it_value.tv_nsec = (long)(next % 1000000000ull);
	timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void serve__forget(struct serve *s, struct serve_request *req)
{
	for (size_t i = 0; i < s->n_waiting; i++) {
		if (s->waiting[i] == req) {
			s->waiting[i] = s->waiting[--s->n_waiting];
			return;
		}
	}
}

/* A profile: now, or the start of ?seconds=N (suspended until then). */
static enum MHD_Result serve__profile(struct serve *s,
				      struct serve_request *req,
				      enum serve_page page)
{
	struct serve_view v = { 0 };
	struct serve_page_buf buf;
	const struct snapshot *snap;
	const struct why *why;
	struct why *why_delta = NULL;
	long seconds = serve__seconds(req->conn);
	int err;

	if (seconds < 0)
		return serve__text(req->conn, MHD_HTTP_BAD_REQUEST,
				   "seconds: a whole number from 1 to %d\n",
				   SERVE_MAX_SECONDS);
	err = s->cfg.read(s->cfg.ctx, &v);
	if (err)
		goto fail;
	snap = page == PAGE_BLOCK ? v.waits : v.blame;
	/* --why splits the waiters' profile: its rows are the why map's. */
	why = page == PAGE_BLOCK ? v.why : NULL;
	if (seconds && !req->due) {
		err = array__grow(&s->waiting, &s->waiting_cap,
				  s->n_waiting + 1, sizeof(*s->waiting));
		if (!err && snap)
			err = serve__by_process(snap, &req->start);
		if (!err && why)
			err = why__delta(why, NULL, &req->start_why);
		if (err)
			goto fail;
		req->start_ns = v.now_ns;
		req->deadline_ns = monotonic_ns() + (uint64_t)seconds * 1000000000ull;
		req->waiting = true;
		s->waiting[s->n_waiting++] = req;
		MHD_suspend_connection(req->conn);
		serve__arm(s);
		pr_info("--serve: %s: the next %ld s from now",
			page == PAGE_BLOCK ? "/debug/pprof/block"
					   : "/debug/pprof/mutex", seconds);
		return MHD_YES;
	}
	if (why && req->due) {
		err = why__delta(why, req->start_why, &why_delta);
		if (err)
			goto fail;
		why = why_delta;
	}
	err = page__open(&buf);
	if (!err) {
		err = serve__profile_page(s, &v, snap,
					  req->due ? req->start : NULL, why,
					  req->due ? req->start_ns : v.start_ns,
					  buf.f);
		err = page__close(&buf, err);
	}
	why__free(why_delta);
	if (err)
		goto fail;
	return serve__reply(req->conn, MHD_HTTP_OK, "application/octet-stream",
			    buf.data, buf.len, true);
fail:
	pr_warn("--serve: cannot make the profile: %s", strerror(-err));
	return serve__text(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			   "cannot make the profile: %s\n", strerror(-err));
}

static enum MHD_Result serve__metrics(struct serve *s,
				      struct serve_request *req)
{
	struct serve_view v = { 0 };
	struct serve_page_buf buf;
	int err = s->cfg.read(s->cfg.ctx, &v);

	if (!err)
		err = page__open(&buf);
	if (!err)
		err = page__close(&buf, serve__metrics_page(s, &v, buf.f));
	if (err) {
		pr_warn("--serve: cannot make the metrics: %s", strerror(-err));
		return serve__text(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "cannot make the metrics: %s\n",
				   strerror(-err));
	}
	return serve__reply(req->conn, MHD_HTTP_OK,
			    "text/plain; version=0.0.4; charset=utf-8",
			    buf.data, buf.len, true);
}

static enum MHD_Result serve__handle(void *cls, struct MHD_Connection *conn,
				     const char *url, const char *method,
				     const char *version,
				     const char *upload_data,
				     size_t *upload_data_size, void **req_cls)
{
	struct serve *s = cls;
	struct serve_request *req = *req_cls;
	enum serve_page page;

	if (s->stopping)
		return MHD_NO;
	if (!req) {
		/* The headers are in: a request of ours from now on. */
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD))
			return serve__text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "only GET\n");
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->s = s;
		req->conn = conn;
		*req_cls = req;
		return MHD_YES;
	}
	if (*upload_data_size) {
		req->has_body = true;
		*upload_data_size = 0;	/* read and dropped */
		return MHD_YES;
	}
	if (req->has_body)
		return serve__text(conn, MHD_HTTP_BAD_REQUEST,
				   "a GET has no body\n");
	if (req->waiting && !req->due)
		return MHD_YES;	/* resumed early: not yet */
	page = serve__page(url);
	switch (page) {
	case PAGE_INDEX:
		return serve__reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
				    (char *)index_page, sizeof(index_page) - 1,
				    false);
	case PAGE_METRICS:
		return serve__metrics(s, req);
	case PAGE_BLOCK:
	case PAGE_MUTEX:
		return serve__profile(s, req, page);
	default:
		return serve__text(conn, MHD_HTTP_NOT_FOUND,
				   "not found; see / for the endpoints\n");
	}
}

static void serve__completed(void *cls, struct MHD_Connection *conn,
			     void **req_cls,
			     enum MHD_RequestTerminationCode why)
{
	struct serve_request *req = *req_cls;

	if (!req)
		return;
	serve__forget(req->s, req);
	snapshot__free(req->start);
	why__free(req->start_why);
	free(req);
	*req_cls = NULL;
}

static void serve__log(void *cls, const char *fmt, va_list ap)
{
	char text[512];

	vsnprintf(text, sizeof(text), fmt, ap);
	text[strcspn(text, "\n")] = '\0';
	pr_debug("--serve: %s", text);
}

int serve__dispatch(struct serve *s)
{
	uint64_t ticks, now = monotonic_ns();
	bool resumed = false;

	if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return -errno;
	for (size_t i = 0; i < s->n_waiting; i++) {
		struct serve_request *req = s->waiting[i];

		if (!req->due && req->deadline_ns <= now) {
			req->due = true;
			MHD_resume_connection(req->conn);
			resumed = true;
		}
	}
	/*
	 * MHD's epoll is edge-triggered: work it has left for later (a
	 * resumed connection, an answer to send) shows as a timeout of 0.
	 */
	for (int round = 0; round < 16; round++) {
		MHD_UNSIGNED_LONG_LONG ms;

		if (MHD_run(s->mhd) != MHD_YES)
			return -EIO;
		if (!resumed && (MHD_get_timeout(s->mhd, &ms) != MHD_YES || ms))
			break;
		resumed = false;
	}
	serve__arm(s);
	return 0;
}

int serve__fd(const struct serve *s)
{
	return s->epoll_fd;
}

static int serve__watch(struct serve *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int serve__new(const struct serve_config *cfg, struct serve **out)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			     MHD_USE_ERROR_LOG;
	struct serve *s;
	char where[96];
	int err = listen__parse(cfg->listen, &addr, &addr_len);

	*out = NULL;
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->epoll_fd = s->timer_fd = -1;
	err = metrics__new(cfg->max_series, &s->metrics);
	if (err)
		goto fail;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, serve__handle, s,
		MHD_OPTION_EXTERNAL_LOGGER, serve__log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)SERVE_MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)SERVE_MAX_PER_CLIENT,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_REQUEST_BYTES,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SERVE_IDLE_S,
		MHD_OPTION_NOTIFY_COMPLETED, serve__completed, NULL,
		MHD_OPTION_END);
	if (!s->mhd) {
		err = -EADDRNOTAVAIL;
		listen__text((struct sockaddr *)&addr,
			     listen__port((struct sockaddr *)&addr), where,
			     sizeof(where));
		pr_err("--serve: cannot listen on %s (in use, or not an "
		       "address of this host)", where);
		goto fail;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_CLOEXEC | TFD_NONBLOCK);
	if (!info || s->epoll_fd < 0 || s->timer_fd < 0) {
		err = -EMFILE;
		goto fail;
	}
	err = serve__watch(s, info->epoll_fd);
	if (!err)
		err = serve__watch(s, s->timer_fd);
	if (err)
		goto fail;
	serve__arm(s);
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	listen__text((struct sockaddr *)&addr, info ? info->port : 0, where,
		     sizeof(where));
	log__notice("serving on http://%s/ (/metrics, /debug/pprof/block, "
		    "/debug/pprof/mutex)", where);
	if (!listen__loopback((struct sockaddr *)&addr))
		pr_warn("--serve %s: the endpoints have no authentication and "
			"show every followed program's names and stacks to "
			"whoever reaches this address; bind to 127.0.0.1 or "
			"put them behind a reverse proxy", cfg->listen);
	*out = s;
	return 0;
fail:
	serve__free(s);
	return err;
}

void serve__free(struct serve *s)
{
	if (!s)
		return;
	/* MHD stops only with no connection suspended: these are closed. */
	s->stopping = true;
	for (size_t i = 0; s->mhd && i < s->n_waiting; i++)
		if (!s->waiting[i]->due)
			MHD_resume_connection(s->waiting[i]->conn);
	if (s->mhd && s->n_waiting)
		MHD_run(s->mhd);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	metrics__free(s->metrics);
	free(s->waiting);
	free(s);
}
