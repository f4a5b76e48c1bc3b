/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's TCP connections, as libmicrohttpd notifies them, and the
 * bounds kept on those without a whole request yet ("partial"): each is
 * shut down CONNS_HEADER_S after its start (or after the answer before
 * it), whatever it trickles, and at most CONNS_MAX_PARTIAL are held (the
 * oldest is shut down for a newcomer).  Shut down, not closed: MHD owns
 * the socket, reads its end and closes it.  One thread only (the HTTP
 * thread's).
 */
#ifndef SYNCPROF_CONNS_H
#define SYNCPROF_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <microhttpd.h>

#define CONNS_HEADER_S		3
#define CONNS_MAX_PARTIAL	96

struct conns;
struct conn;

int conns__new(struct conns **out);
void conns__free(struct conns *cs);
/* MHD's notify-connection callback's work: *socket_ctx is the conn. */
void conns__notify(struct conns *cs, struct MHD_Connection *mhd,
		   void **socket_ctx, enum MHD_ConnectionNotificationCode code);
/* Shuts the partial ones whose time is up; the next one's (UINT64_MAX: none). */
uint64_t conns__sweep(struct conns *cs, uint64_t now_ns);

/* A request whole (busy), or its answer done (busy no more, now_ns). */
void conn__busy(struct conn *c, bool busy, uint64_t now_ns);
int conn__fd(const struct conn *c);
/* Whether a and b come from one client address. */
bool conn__same_client(const struct conn *a, const struct conn *b);

#endif
