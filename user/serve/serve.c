// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP by libmicrohttpd, on three threads of the server's own, apart
 * from the loop that reads the probes:
 *
 * - the HTTP thread drives MHD (its epoll fd, in MHD's external mode)
 *   and keeps the bounds below; every MHD call is made on it;
 * - the worker (metrics_worker.c) owns /metrics' counters: it adds each
 *   read's named change (feed.h) the loop publishes, and renders a scrape;
 * - the profile worker (profile_worker.c) encodes and gzips the profiles.
 *
 * The loop only hands over data.  A scrape asks it for a fresh read
 * (serve__fd, serve__wants) and waits for it at most
 * METRICS_WORKER_READ_WAIT_MS: a busy loop makes the answer older (by
 * at most the loop's own period of reads, reports.c), never later.  A
 * profile's rows are named on the loop, in slices (profile.h: the
 * symbolizer is the loop's, and libdwfl is not thread-safe), and handed
 * back by serve__answer as a job of copies, which the profile worker
 * encodes; meanwhile the HTTP thread and the worker go on serving the
 * others.
 *
 * A request of only empty lines gets no 400: MHD 0.9.75 skips any number
 * of them before a request line, so the header bound shuts it.
 *
 * Rejected: MHD's handler in the loop (a scrape of a large host held the
 * probes' reader for seconds, and a loop busy with events left every
 * client unanswered: no timeout was kept meanwhile); locks around the
 * counters (a render would hold the loop's next read); a thread per
 * connection (a slow client would cost a thread).
 *
 * Bounds (each a constant below, stated in docs/fleet.md):
 * - a request must arrive whole within CONNS_HEADER_S of its
 *   connection's start (or of the answer before it): else the
 *   connection is shut down, whatever it trickles (conns.c);
 * - SERVE_MAX_CONNECTIONS in all; connections without a whole request
 *   take at most CONNS_MAX_PARTIAL of them (the oldest is shut down for
 *   a newcomer), so a scraper always finds one;
 * - a client address has at most SERVE_MAX_PER_CLIENT requests in
 *   progress, SERVE_MAX_WINDOWS_PER_CLIENT of them ?seconds=N windows,
 *   and SERVE_MAX_WINDOWS in all: beyond, 503 at once;
 * - a window whose client closed ends at once: a waiting request's
 *   socket is watched for EPOLLRDHUP (MHD watches a suspended one no
 *   more), so a client that shuts its sending side is taken as gone;
 * - SERVE_REQUEST_BYTES per request (larger headers: 431),
 *   SERVE_IDLE_S without progress while answering closes it;
 * - the query is parsed strictly (request.c): 400 at once; only GET, HEAD.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "array.h"
#include "clock.h"
#include "conns.h"
#include "listen.h"
#include "log.h"
#include "metrics_worker.h"
#include "profile_worker.h"
#include "serve.h"

#define SERVE_MAX_CONNECTIONS		128
#define SERVE_MAX_PER_CLIENT		8
#define SERVE_MAX_WINDOWS		16
#define SERVE_MAX_WINDOWS_PER_CLIENT	4
#define SERVE_IDLE_S			10
#define SERVE_REQUEST_BYTES		(16 * 1024)
#define NS				1000000000ull

/* epoll tags: MHD's fd, the wake-up, or a suspended request's socket. */
#define TAG_MHD		1ull
#define TAG_WAKE	2ull
#define TAG_REQUEST	(1ull << 32)

enum serve_phase {
	PHASE_NEW,		/* the request line read */
	PHASE_LOOP,		/* waits for the loop: a profile, a start */
	PHASE_WORKER,		/* waits for the worker: /metrics */
	PHASE_WINDOW,		/* ?seconds=N: waits for its end */
	PHASE_READY,		/* the answer is in: resumed */
};

/* One request, from its request line to its end. */
struct serve_request {
	struct serve *s;
	struct MHD_Connection *conn;
	struct conn *c;		/* NULL: untracked */
	unsigned long id;
	char *target;		/* as sent, undecoded */
	struct request_target t;
	enum serve_phase phase;
	bool suspended, gone, has_body, started;
	uint64_t deadline_ns;	/* the end of its window */
	struct profile_start *start;
	unsigned int status;
	char *data;
	size_t len;
	const char *type;
};

/* An answer from the loop, to the HTTP thread: an error or a start. */
struct serve_done {
	unsigned long id;
	int err;
	struct profile_start *start;
};

struct serve {
	struct serve_config cfg;
	struct MHD_Daemon *mhd;
	struct metrics_worker *worker;
	struct profile_worker *profiles;
	int epoll_fd;		/* the HTTP thread's */
	int wake_fd;		/* eventfd: answers for the HTTP thread */
	int loop_fd;		/* eventfd: wants for the loop */
	pthread_t thread;
	bool started;

	/* The HTTP thread's alone. */
	struct conns *conns;
	struct serve_request **reqs;
	size_t n_reqs, reqs_cap;
	unsigned long next_id;
	bool closing;		/* stopping: no request goes on */

	pthread_mutex_t lock;	/* the rest */
	bool stopping;
	bool read_wanted;
	struct serve_want *wants;
	size_t n_wants, wants_cap;
	struct serve_done *done;
	size_t n_done, done_cap;
	unsigned long *left;	/* wants whose client left, not answered */
	size_t n_left, left_cap;
};

static void serve__kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("--serve: eventfd: %s", strerror(errno));
}

static void serve__drain(int fd)
{
	uint64_t n;

	while (read(fd, &n, sizeof(n)) > 0)
		;
}

/* ---- the loop's side --------------------------------------------------- */

int serve__fd(const struct serve *s)
{
	return s->loop_fd;
}

int serve__wants(struct serve *s, bool *read, struct serve_want **wants,
		 size_t *n)
{
	serve__drain(s->loop_fd);
	pthread_mutex_lock(&s->lock);
	*read = s->read_wanted;
	s->read_wanted = false;
	*wants = s->wants;
	*n = s->n_wants;
	s->wants = NULL;
	s->n_wants = s->wants_cap = 0;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* id out of the wants whose client left (lock held). */
static void serve__unleave(struct serve *s, unsigned long id)
{
	for (size_t i = 0; i < s->n_left; i++)
		if (s->left[i] == id)
			s->left[i--] = s->left[--s->n_left];
}

bool serve__wanted(struct serve *s, unsigned long id)
{
	bool wanted = true;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_left && wanted; i++)
		wanted = s->left[i] != id;
	pthread_mutex_unlock(&s->lock);
	return wanted;
}

void serve__again(struct serve *s)
{
	serve__kick(s->loop_fd);
}

void serve__publish(struct serve *s, struct feed *feed)
{
	metrics_worker__feed(s->worker, feed);
}

void serve__answer(struct serve *s, unsigned long id, int err,
		   struct profile_job *job, struct profile_start *start)
{
	int grown;

	pthread_mutex_lock(&s->lock);
	serve__unleave(s, id);
	pthread_mutex_unlock(&s->lock);
	if (!err && job) {
		err = profile_worker__add(s->profiles, id, job);
		if (!err)
			return;
		profile__job_free(job);
	}
	pthread_mutex_lock(&s->lock);
	grown = array__grow(&s->done, &s->done_cap, s->n_done + 1,
			    sizeof(*s->done));
	if (!grown)
		s->done[s->n_done++] = (struct serve_done){
			.id = id, .err = err, .start = start,
		};
	pthread_mutex_unlock(&s->lock);
	if (grown) {
		/* The request ends in its window's bound, or its idle one. */
		profile__start_free(start);
		return;
	}
	serve__kick(s->wake_fd);
}

/* ---- connections ------------------------------------------------------- */

/* A request is over: out of the list, its connection idle, freed. */
static void serve__drop(struct serve *s, struct serve_request *req)
{
	for (size_t i = 0; i < s->n_reqs; i++)
		if (s->reqs[i] == req)
			s->reqs[i] = s->reqs[--s->n_reqs];
	if (req->c)
		conn__busy(req->c, false, clock__monotonic_ns());
	profile__start_free(req->start);
	free(req->data);
	free(req->target);
	free(req);
}

static void serve__connection(void *cls, struct MHD_Connection *conn,
			      void **socket_ctx,
			      enum MHD_ConnectionNotificationCode code)
{
	struct serve *s = cls;

	/*
	 * libmicrohttpd tells a request's end only once the handler has seen
	 * it: a request whose headers never completed (cut at EOF, say) ends
	 * with its connection, unannounced.
	 */
	if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		for (size_t i = s->n_reqs; i-- > 0;)
			if (s->reqs[i]->conn == conn)
				serve__drop(s, s->reqs[i]);
	conns__notify(s->conns, conn, socket_ctx, code);
}

/* Requests in progress from c's address: all of them, and windows. */
static void serve__client_load(struct serve *s, const struct conn *c,
			       size_t *busy, size_t *windows,
			       size_t *all_windows)
{
	*busy = *windows = *all_windows = 0;
	for (size_t i = 0; i < s->n_reqs; i++) {
		const struct serve_request *r = s->reqs[i];
		bool window = r->started && r->t.seconds &&
			      (r->t.page == REQUEST_BLOCK ||
			       r->t.page == REQUEST_MUTEX);

		*all_windows += window;
		if (!conn__same_client(r->c, c))
			continue;
		*busy += r->started;
		*windows += window;
	}
}

/* ---- requests ---------------------------------------------------------- */

static struct serve_request *serve__find(struct serve *s, unsigned long id)
{
	for (size_t i = 0; i < s->n_reqs; i++)
		if (s->reqs[i]->id == id)
			return s->reqs[i];
	return NULL;
}

static void serve__suspend(struct serve_request *req, enum serve_phase phase)
{
	struct serve *s = req->s;
	struct epoll_event ev = {
		.events = EPOLLRDHUP,
		.data.u64 = TAG_REQUEST | req->id,
	};

	req->phase = phase;
	if (req->suspended)
		return;
	req->suspended = true;
	MHD_suspend_connection(req->conn);
	/* A peer that closes ends it: a suspended socket is MHD's no more. */
	if (req->c && epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, conn__fd(req->c), &ev))
		pr_debug("--serve: cannot watch a request: %s", strerror(errno));
}

static void serve__resume(struct serve_request *req)
{
	if (!req->suspended)
		return;
	req->suspended = false;
	if (req->c)
		epoll_ctl(req->s->epoll_fd, EPOLL_CTL_DEL, conn__fd(req->c),
			  NULL);
	MHD_resume_connection(req->conn);
}

static void serve__set_answer(struct serve_request *req, unsigned int status,
			      const char *type, char *data, size_t len)
{
	free(req->data);
	req->status = status;
	req->type = type;
	req->data = data;
	req->len = len;
	req->phase = PHASE_READY;
	serve__resume(req);
}

static void serve__text_answer(struct serve_request *req, unsigned int status,
			       const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	serve__set_answer(req, status, "text/plain; charset=utf-8",
			  n < 0 ? NULL : text, n < 0 ? 0 : (size_t)n);
}

/* Asks the loop for a profile: now, a window's start, or its end. */
static int serve__want(struct serve_request *req, bool open)
{
	struct serve *s = req->s;
	int err;

	pthread_mutex_lock(&s->lock);
	err = array__grow(&s->wants, &s->wants_cap, s->n_wants + 1,
			  sizeof(*s->wants));
	if (!err) {
		s->wants[s->n_wants++] = (struct serve_want){
			.id = req->id,
			.mutex = req->t.page == REQUEST_MUTEX,
			.open = open,
			.start = req->start,
		};
		req->start = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	serve__kick(s->loop_fd);
	serve__suspend(req, PHASE_LOOP);
	return 0;
}

/* A fresh read for a scrape. */
static void serve__want_read(struct serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->read_wanted = true;
	pthread_mutex_unlock(&s->lock);
	serve__kick(s->loop_fd);
}

/* The loop's answers, and the worker's renders, to their requests. */
static void serve__take_done(struct serve *s)
{
	struct serve_done *done;
	size_t n;
	struct outbox_page page;
	struct outbox_page profile;

	while (profile_worker__take(s->profiles, &profile)) {
		struct serve_request *req = serve__find(s, profile.id);

		/* Answered: a leave told after the loop's answer is stale. */
		pthread_mutex_lock(&s->lock);
		serve__unleave(s, profile.id);
		pthread_mutex_unlock(&s->lock);

		if (!req || req->gone) {
			free(profile.data);
		} else if (profile.err) {
			pr_warn("--serve: cannot make the profile: %s",
				strerror(-profile.err));
			serve__text_answer(req, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "cannot make the profile: %s\n",
					   strerror(-profile.err));
		} else {
			serve__set_answer(req, MHD_HTTP_OK,
					  "application/octet-stream",
					  profile.data, profile.len);
		}
	}
	while (metrics_worker__take(s->worker, &page)) {
		struct serve_request *req = serve__find(s, page.id);

		if (!req) {
			free(page.data);
			continue;
		}
		if (page.err)
			serve__text_answer(req, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "cannot make the metrics: %s\n",
					   strerror(-page.err));
		else
			serve__set_answer(req, MHD_HTTP_OK,
					  "text/plain; version=0.0.4; charset=utf-8",
					  page.data, page.len);
	}
	pthread_mutex_lock(&s->lock);
	done = s->done;
	n = s->n_done;
	s->done = NULL;
	s->n_done = s->done_cap = 0;
	for (size_t i = 0; i < n; i++)
		serve__unleave(s, done[i].id);
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n; i++) {
		struct serve_done *d = &done[i];
		struct serve_request *req = serve__find(s, d->id);

		if (!req || req->gone) {
			profile__start_free(d->start);
		} else if (d->err) {
			pr_warn("--serve: cannot make the profile: %s",
				strerror(-d->err));
			serve__text_answer(req, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "cannot make the profile: %s\n",
					   strerror(-d->err));
			profile__start_free(d->start);
		} else if (d->start) {
			req->start = d->start;
			req->deadline_ns = clock__monotonic_ns() +
					   (uint64_t)req->t.seconds * NS;
			req->phase = PHASE_WINDOW;
			pr_info("--serve: %s: the next %u s from now",
				request__path(req->t.page), req->t.seconds);
		}
	}
	free(done);
}

/* Windows that ended go to the loop; the earliest end still to come. */
static uint64_t serve__windows(struct serve *s, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < s->n_reqs; i++) {
		struct serve_request *req = s->reqs[i];

		if (req->phase != PHASE_WINDOW)
			continue;
		if (req->deadline_ns > now) {
			if (req->deadline_ns < next)
				next = req->deadline_ns;
			continue;
		}
		if (serve__want(req, false))
			serve__text_answer(req, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "out of memory\n");
	}
	return next;
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
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
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

/* The request line is in: a request of ours from now on. */
static void *serve__begin(void *cls, const char *uri,
			  struct MHD_Connection *conn)
{
	struct serve *s = cls;
	struct serve_request *req = calloc(1, sizeof(*req));
	const union MHD_ConnectionInfo *info;

	if (!req)
		return NULL;
	req->target = strdup(uri);
	if (!req->target || array__grow(&s->reqs, &s->reqs_cap, s->n_reqs + 1,
					sizeof(*s->reqs))) {
		free(req->target);
		free(req);
		return NULL;
	}
	req->s = s;
	req->conn = conn;
	/* Ids fit the epoll tag's low 32 bits; 0 is none. */
	s->next_id = (s->next_id + 1) & 0xffffffffu;
	req->id = s->next_id ? s->next_id : ++s->next_id;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	req->c = info ? info->socket_context : NULL;
	s->reqs[s->n_reqs++] = req;
	return req;
}

/* The headers are in: parse, bound, and start on the answer. */
static enum MHD_Result serve__start(struct serve *s, struct serve_request *req,
				    const char *method, bool *answered)
{
	const char *why = NULL;
	size_t busy, windows, all_windows;

	*answered = true;

	req->started = true;
	if (req->c)
		conn__busy(req->c, true, 0);
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return serve__text(req->conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET\n");
	if (request__parse(req->target, strlen(req->target), &req->t, &why))
		return serve__text(req->conn, MHD_HTTP_BAD_REQUEST, "%s\n", why);
	serve__client_load(s, req->c, &busy, &windows, &all_windows);
	if (busy > SERVE_MAX_PER_CLIENT)
		return serve__text(req->conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "at most %d requests at once from an "
				   "address\n", SERVE_MAX_PER_CLIENT);
	if (req->t.seconds && (req->t.page == REQUEST_BLOCK ||
			       req->t.page == REQUEST_MUTEX) &&
	    (windows > SERVE_MAX_WINDOWS_PER_CLIENT ||
	     all_windows > SERVE_MAX_WINDOWS))
		return serve__text(req->conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "at most %d ?seconds=N windows at once "
				   "from an address, %d in all\n",
				   SERVE_MAX_WINDOWS_PER_CLIENT,
				   SERVE_MAX_WINDOWS);
	*answered = false;
	return MHD_YES;
}

static enum MHD_Result serve__handle(void *cls, struct MHD_Connection *conn,
				     const char *url, const char *method,
				     const char *version,
				     const char *upload_data,
				     size_t *upload_data_size, void **req_cls)
{
	struct serve *s = cls;
	struct serve_request *req = *req_cls;
	int err = 0;

	if (!req || req->gone || s->closing)
		return MHD_NO;
	if (!req->started) {
		bool answered = false;
		enum MHD_Result ret = serve__start(s, req, method, &answered);

		/* Answered at once (an error), or on to the body, if any. */
		return answered ? ret : MHD_YES;
	}
	if (*upload_data_size) {
		req->has_body = true;
		*upload_data_size = 0;	/* read and dropped */
		return MHD_YES;
	}
	if (req->has_body)
		return serve__text(conn, MHD_HTTP_BAD_REQUEST,
				   "a GET has no body\n");
	switch (req->phase) {
	case PHASE_READY: {
		char *data = req->data;

		req->data = NULL;
		if (!data)
			return MHD_NO;
		return serve__reply(conn, req->status, req->type, data,
				    req->len, true);
	}
	case PHASE_NEW:
		break;
	default:
		return MHD_YES;	/* resumed early: not yet */
	}
	switch (req->t.page) {
	case REQUEST_INDEX:
		return serve__reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
				    (char *)index_page, sizeof(index_page) - 1,
				    false);
	case REQUEST_METRICS: {
		bool read;

		err = metrics_worker__want(s->worker, req->id, &read);
		if (err)
			return serve__text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "%s\n", strerror(-err));
		if (read)
			serve__want_read(s);
		serve__suspend(req, PHASE_WORKER);
		return MHD_YES;
	}
	case REQUEST_MUTEX:
		if (s->cfg.no_mutex)
			return serve__text(conn, MHD_HTTP_NOT_IMPLEMENTED,
					   "%s\n", s->cfg.no_mutex);
		/* fallthrough */
	case REQUEST_BLOCK:
		err = serve__want(req, req->t.seconds != 0);
		if (err)
			return serve__text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "%s\n", strerror(-err));
		return MHD_YES;
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

	if (req)
		serve__drop(cls, req);
	*req_cls = NULL;
}

static void serve__log(void *cls, const char *fmt, va_list ap)
{
	char text[512];

	vsnprintf(text, sizeof(text), fmt, ap);
	text[strcspn(text, "\n")] = '\0';
	pr_debug("--serve: %s", text);
}

/* ---- the HTTP thread --------------------------------------------------- */

/* A suspended request whose client closed: closed too. */
static void serve__gone(struct serve *s, unsigned long id)
{
	struct serve_request *req = serve__find(s, id);

	if (!req || req->gone)
		return;
	req->gone = true;
	if (req->phase == PHASE_WORKER)
		metrics_worker__cancel(s->worker, id);
	/* The loop may be naming its profile: told to drop it. */
	if (req->phase == PHASE_LOOP) {
		pthread_mutex_lock(&s->lock);
		if (!array__grow(&s->left, &s->left_cap, s->n_left + 1,
				 sizeof(*s->left)))
			s->left[s->n_left++] = id;
		pthread_mutex_unlock(&s->lock);
	}
	serve__resume(req);
}

static int serve__timeout_ms(struct serve *s, uint64_t now, uint64_t next)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(s->mhd, &ms) == MHD_YES &&
	    now + ms * 1000000ull < next)
		next = now + ms * 1000000ull;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static void *serve__main(void *arg)
{
	struct serve *s = arg;
	uint64_t next = UINT64_MAX;

	for (;;) {
		struct epoll_event ev[32];
		uint64_t now = clock__monotonic_ns();
		int n = epoll_wait(s->epoll_fd, ev, 32,
				   serve__timeout_ms(s, now, next));
		bool stopping;

		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == TAG_WAKE)
				serve__drain(s->wake_fd);
			else if (ev[i].data.u64 & TAG_REQUEST)
				serve__gone(s, (unsigned long)(ev[i].data.u64 &
							      (TAG_REQUEST - 1)));
		}
		pthread_mutex_lock(&s->lock);
		stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (stopping)
			break;
		serve__take_done(s);
		now = clock__monotonic_ns();
		next = conns__sweep(s->conns, now);
		now = serve__windows(s, now);	/* the next window's end */
		if (now < next)
			next = now;
		MHD_run(s->mhd);
	}
	/* MHD stops only with no connection suspended: these are closed. */
	s->closing = true;
	for (size_t i = 0; i < s->n_reqs; i++) {
		s->reqs[i]->gone = true;
		serve__resume(s->reqs[i]);
	}
	MHD_run(s->mhd);
	return NULL;
}

static int serve__watch(struct serve *s, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int serve__listen(struct serve *s, const struct sockaddr *addr)
{
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			     MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	char where[96];

	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, serve__handle, s,
		MHD_OPTION_EXTERNAL_LOGGER, serve__log, NULL,
		MHD_OPTION_SOCK_ADDR, addr,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)SERVE_MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_REQUEST_BYTES,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SERVE_IDLE_S,
		MHD_OPTION_NOTIFY_CONNECTION, serve__connection, s,
		MHD_OPTION_URI_LOG_CALLBACK, serve__begin, s,
		MHD_OPTION_NOTIFY_COMPLETED, serve__completed, s,
		MHD_OPTION_END);
	if (!s->mhd) {
		listen__text(addr, listen__port(addr), where, sizeof(where));
		pr_err("--serve: cannot listen on %s (in use, or not an "
		       "address of this host)", where);
		return -EADDRNOTAVAIL;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info)
		return -EIO;
	return serve__watch(s, info->epoll_fd, TAG_MHD);
}

int serve__new(const struct serve_config *cfg, struct serve **out)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const union MHD_DaemonInfo *info;
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
	pthread_mutex_init(&s->lock, NULL);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->loop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->wake_fd < 0 || s->loop_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = conns__new(&s->conns);
	if (!err)
		err = serve__watch(s, s->wake_fd, TAG_WAKE);
	if (!err)
		err = serve__listen(s, (struct sockaddr *)&addr);
	if (!err)
		err = metrics_worker__new(cfg->max_series, s->wake_fd,
					  &s->worker);
	if (!err)
		err = profile_worker__new(s->wake_fd, &s->profiles);
	if (!err)
		err = -pthread_create(&s->thread, NULL, serve__main, s);
	if (err)
		goto fail;
	s->started = true;
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
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_mutex_unlock(&s->lock);
		serve__kick(s->wake_fd);
		pthread_join(s->thread, NULL);
	}
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	metrics_worker__free(s->worker);
	profile_worker__free(s->profiles);
	for (size_t i = 0; i < s->n_wants; i++)
		profile__start_free(s->wants[i].start);
	for (size_t i = 0; i < s->n_done; i++)
		profile__start_free(s->done[i].start);
	conns__free(s->conns);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->loop_fd >= 0)
		close(s->loop_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->wants);
	free(s->done);
	free(s->left);
	free(s->reqs);
	free(s);
}
