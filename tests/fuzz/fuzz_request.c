// SPDX-License-Identifier: GPL-2.0
/*
 * request: bytes a client may send to --serve, read as syncprof reads
 * them: libmicrohttpd parses the request, its URI log callback hands the
 * undecoded target to request__parse (serve.c's path), and the handler
 * answers as serve.c does for a parse's outcome.  A request libmicrohttpd
 * drops before the handler (too many arguments for the connection's
 * memory) is never announced complete: as in serve.c, it ends when its
 * connection closes, or it leaks.  The input arrives over
 * a socketpair the daemon takes with MHD_add_connection, then the
 * client's side is shut for writing, so every input ends.  Beyond memory
 * safety: whatever comes back is HTTP/1.x with a known status; a 200 is
 * given only to a target the parser took whole, and a target it took has
 * plain digits from 1 to REQUEST_MAX_SECONDS after its "seconds=".
 */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "request.h"

/* The target as the URI log callback saw it, and the parse of it. */
struct seen {
	struct MHD_Connection *conn;
	char *target;
	int err;
	struct request_target t;
	struct seen *next;
};

/* Requests begun and not yet over, as serve.c lists them. */
static struct seen *open_requests;

static void seen__drop(struct seen *seen)
{
	for (struct seen **at = &open_requests; *at; at = &(*at)->next)
		if (*at == seen) {
			*at = seen->next;
			break;
		}
	free(seen->target);
	free(seen);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct seen *seen = calloc(1, sizeof(*seen));
	const char *why;

	if (!seen)
		abort();
	seen->target = strdup(uri);
	if (!seen->target)
		abort();
	seen->conn = conn;
	seen->next = open_requests;
	open_requests = seen;
	seen->err = request__parse(uri, strlen(uri), &seen->t, &why);
	if (seen->err && (!why || !*why))
		abort();
	if (!seen->err && seen->t.seconds) {
		const char *at = strstr(uri, "seconds=");
		unsigned long n;
		char *end;

		if (!at || seen->t.seconds > REQUEST_MAX_SECONDS)
			abort();
		/* The last "seconds=" may be inside another key: find a digit run. */
		for (n = 0; at; at = strstr(at + 1, "seconds=")) {
			n = strtoul(at + 8, &end, 10);
			if (n == seen->t.seconds && (!*end || *end == '&'))
				break;
		}
		if (!at)
			abort();
	}
	return seen;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status)
{
	static char body[] = "x\n";
	struct MHD_Response *r = MHD_create_response_from_buffer(
		2, body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret = MHD_queue_response(conn, status, r);

	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct seen *seen = *req_cls;

	if (!seen)
		return MHD_NO;
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED);
	if (seen->err)
		return reply(conn, MHD_HTTP_BAD_REQUEST);
	return reply(conn, seen->t.page == REQUEST_NONE ? MHD_HTTP_NOT_FOUND
							: MHD_HTTP_OK);
}

static void done(void *cls, struct MHD_Connection *conn, void **req_cls,
		 enum MHD_RequestTerminationCode why)
{
	struct seen *seen = *req_cls;

	if (seen)
		seen__drop(seen);
	*req_cls = NULL;
}

/* A request cut before its headers ended is over with its connection. */
static void closed(void *cls, struct MHD_Connection *conn, void **socket_ctx,
		   enum MHD_ConnectionNotificationCode code)
{
	if (code != MHD_CONNECTION_NOTIFY_CLOSED)
		return;
	for (struct seen *seen = open_requests, *next; seen; seen = next) {
		next = seen->next;
		if (seen->conn == conn)
			seen__drop(seen);
	}
}

/* Every status line in the reply is HTTP/1.x with a status syncprof sends. */
static void check_reply(const char *r, size_t len)
{
	static const char *const known[] = {
		" 200 ", " 400 ", " 404 ", " 405 ", " 413 ", " 414 ", " 431 ",
		" 500 ", " 501 ", " 505 ",
	};
	bool ok = false;

	if (!len)
		return;
	if (len < 13 || strncmp(r, "HTTP/1.", 7))
		abort();
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		ok |= !strncmp(r + 8, known[i], 5);
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct MHD_Daemon *d;
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(0x7f000001) };
	char reply_buf[1 << 16];
	size_t got = 0;
	int sv[2];

	if (size > 32 * 1024)
		return 0;
	if (!d)
		d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL,
				     handle, NULL,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				     (size_t)(16 * 1024),
				     MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
				     MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_NOTIFY_CONNECTION, closed, NULL,
				     MHD_OPTION_END);
	if (!d || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	if (size && write(sv[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[0], SHUT_WR);
	if (MHD_add_connection(d, sv[1], (struct sockaddr *)&peer,
			       sizeof(peer)) != MHD_YES) {
		close(sv[0]);
		return 0;
	}
	/* Until the daemon closes its side: every input ends (EOF after it). */
	for (int round = 0; round < 10000; round++) {
		ssize_t n;

		MHD_run(d);
		n = recv(sv[0], reply_buf + got, sizeof(reply_buf) - 1 - got,
			 MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0) {
			got += (size_t)n;
			if (got == sizeof(reply_buf) - 1)
				break;
		} else if (errno != EAGAIN) {
			break;
		}
	}
	reply_buf[got] = '\0';
	check_reply(reply_buf, got);
	close(sv[0]);
	/* Its side closes when the daemon drops the connection. */
	MHD_run(d);
	return 0;
}
