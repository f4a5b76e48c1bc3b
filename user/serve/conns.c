// SPDX-License-Identifier: GPL-2.0
/*
 * The partial connections' bounds, kept by hand because libmicrohttpd's
 * own are not enough: its connection timeout is an idle one (a client
 * sending a byte a second keeps a slot for ever), and its per-address
 * limit refuses the scraper of an address whose other clients took the
 * slots (127.0.0.1 is the documented scrapers' one, and any local user
 * can bind any 127.0.0.0/8 address).  A connection is shut down with
 * shutdown(2) on MHD's socket: MHD sees its end and cleans up as for a
 * client that left.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "array.h"
#include "clock.h"
#include "conns.h"

#define NS	1000000000ull

struct conn {
	int fd;
	unsigned char addr[16];	/* the client's address, v4 or v6 */
	uint64_t since_ns;	/* its start, or its last answer's end */
	bool busy;		/* a request whole, being answered */
	bool cut;		/* shut down */
};

struct conns {
	struct conn **items;
	size_t n, cap;
};

int conns__new(struct conns **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void conns__free(struct conns *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		free(cs->items[i]);
	free(cs->items);
	free(cs);
}

static void conn__cut(struct conn *c)
{
	if (c->cut)
		return;
	c->cut = true;
	shutdown(c->fd, SHUT_RDWR);
}

static void conn__addr(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET)
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)
			->sin_addr, 4);
	else if (sa && sa->sa_family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)
			->sin6_addr, 16);
}

/* Room for a newcomer: the oldest partial connection goes. */
static void conns__make_room(struct conns *cs)
{
	struct conn *oldest = NULL;
	size_t partial = 0;

	for (size_t i = 0; i < cs->n; i++) {
		struct conn *o = cs->items[i];

		if (o->busy || o->cut)
			continue;
		partial++;
		if (!oldest || o->since_ns < oldest->since_ns)
			oldest = o;
	}
	if (oldest && partial >= CONNS_MAX_PARTIAL)
		conn__cut(oldest);
}

void conns__notify(struct conns *cs, struct MHD_Connection *mhd,
		   void **socket_ctx, enum MHD_ConnectionNotificationCode code)
{
	struct conn *c = *socket_ctx;
	const union MHD_ConnectionInfo *info;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		for (size_t i = 0; c && i < cs->n; i++)
			if (cs->items[i] == c)
				cs->items[i] = cs->items[--cs->n];
		free(c);
		*socket_ctx = NULL;
		return;
	}
	conns__make_room(cs);
	c = calloc(1, sizeof(*c));
	info = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!c || !info ||
	    array__grow(&cs->items, &cs->cap, cs->n + 1, sizeof(*cs->items))) {
		/* Untracked: MHD's idle timeout bounds it. */
		free(c);
		return;
	}
	c->fd = info->connect_fd;
	c->since_ns = clock__monotonic_ns();
	info = MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	conn__addr(info ? info->client_addr : NULL, c->addr);
	cs->items[cs->n++] = c;
	*socket_ctx = c;
}

uint64_t conns__sweep(struct conns *cs, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < cs->n; i++) {
		struct conn *c = cs->items[i];
		uint64_t due = c->since_ns + CONNS_HEADER_S * NS;

		if (c->busy || c->cut)
			continue;
		if (due <= now_ns)
			conn__cut(c);
		else if (due < next)
			next = due;
	}
	return next;
}

void conn__busy(struct conn *c, bool busy, uint64_t now_ns)
{
	c->busy = busy;
	if (!busy)
		c->since_ns = now_ns;
}

int conn__fd(const struct conn *c)
{
	return c->fd;
}

bool conn__same_client(const struct conn *a, const struct conn *b)
{
	return a && b && !memcmp(a->addr, b->addr, sizeof(a->addr));
}
