// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listen.h"
#include "log.h"

int listen__parse(const char *arg, struct sockaddr_storage *addr,
		  socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char host[256];
	const char *port = arg, *at = NULL, *rb, *colon;
	size_t hl = 0;
	unsigned long n;
	char *end;
	int rc;

	if (arg[0] == '[') {
		rb = strchr(arg, ']');
		if (!rb || rb[1] != ':') {
			pr_err("--serve '%s': expected [IPV6]:PORT", arg);
			return -EINVAL;
		}
		at = arg + 1;
		hl = (size_t)(rb - at);
		port = rb + 2;
	} else if ((colon = strchr(arg, ':'))) {
		if (strchr(colon + 1, ':')) {
			pr_err("--serve '%s': an IPv6 address goes in "
			       "brackets: [::1]:PORT", arg);
			return -EINVAL;
		}
		at = arg;
		hl = (size_t)(colon - arg);
		port = colon + 1;
	}
	if (hl >= sizeof(host)) {
		pr_err("--serve '%s': the host name is too long", arg);
		return -EINVAL;
	}
	strcpy(host, LISTEN_DEFAULT_HOST);
	if (hl) {
		memcpy(host, at, hl);
		host[hl] = '\0';
	}
	errno = 0;
	n = strtoul(port, &end, 10);
	if (!*port || *end || errno || n > 65535 || port[0] == '-' ||
	    port[0] == '+') {
		pr_err("--serve '%s': the port must be a number from 0 (any "
		       "free port) to 65535", port);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc || !res) {
		pr_err("--serve: cannot resolve '%s': %s", host,
		       rc ? gai_strerror(rc) : "no address");
		return -ENOENT;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

bool listen__loopback(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)addr;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)addr;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
			in6->sin6_addr.s6_addr[12] == 127);
	}
	return false;
}

void listen__text(const struct sockaddr *addr, unsigned int port, char *buf,
		  size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (addr->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)
				     addr)->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, port);
		return;
	}
	if (addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)
				    addr)->sin_addr, host, sizeof(host));
	snprintf(buf, len, "%s:%u", host, port);
}

unsigned int listen__port(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)
			      addr)->sin6_port);
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)
			      addr)->sin_port);
	return 0;
}
