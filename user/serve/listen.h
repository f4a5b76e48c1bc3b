/* SPDX-License-Identifier: GPL-2.0 */
/* --serve's [HOST:]PORT: the address to listen on, and whether it is local. */
#ifndef SYNCPROF_LISTEN_H
#define SYNCPROF_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>

/* When HOST is left out: loopback, as the endpoints are unauthenticated. */
#define LISTEN_DEFAULT_HOST "127.0.0.1"

/*
 * [HOST:]PORT into an address: HOST a name, an IPv4 address or [IPv6]
 * (brackets), PORT 0 (any free port) to 65535.  0, or -EINVAL after
 * saying why; -ENOENT when the name does not resolve.
 */
int listen__parse(const char *arg, struct sockaddr_storage *addr,
		  socklen_t *len);
/* Whether only this host can reach addr (127.0.0.0/8, ::1). */
bool listen__loopback(const struct sockaddr *addr);
/* The port of an IPv4 or IPv6 address. */
unsigned int listen__port(const struct sockaddr *addr);
/* "127.0.0.1:9100", "[::1]:9100". */
void listen__text(const struct sockaddr *addr, unsigned int port, char *buf,
		  size_t len);

#endif
