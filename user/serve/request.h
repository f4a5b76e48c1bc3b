/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's request target, as the client sent it (before any decoding):
 * which page, and ?seconds=N.  Strict: the path is one of the pages,
 * spelled exactly; seconds is given at most once, in plain digits (no
 * sign, space, percent-escape or '+'), from 1 to REQUEST_MAX_SECONDS.
 * Other arguments are left alone (a scraper may add its own).
 */
#ifndef SYNCPROF_REQUEST_H
#define SYNCPROF_REQUEST_H

#include <stddef.h>

#define REQUEST_MAX_SECONDS	3600

enum request_page {
	REQUEST_INDEX,
	REQUEST_METRICS,
	REQUEST_BLOCK,		/* /debug/pprof/block */
	REQUEST_MUTEX,		/* /debug/pprof/mutex */
	REQUEST_NONE,		/* no such page: 404 */
};

struct request_target {
	enum request_page page;
	unsigned int seconds;	/* 0: none given */
};

/*
 * Parses target (len bytes, not necessarily NUL-terminated): 0, or
 * -EINVAL when the query is refused (a 400; why: a sentence for the
 * client).  An unknown path is not an error: page REQUEST_NONE.
 */
int request__parse(const char *target, size_t len, struct request_target *out,
		   const char **why);
/* The page's path, for messages. */
const char *request__path(enum request_page page);

#endif
