// SPDX-License-Identifier: GPL-2.0
/*
 * The raw request target, parsed by hand because the decoded one cannot
 * be judged: libmicrohttpd hands the access handler its arguments
 * percent-decoded and cut at the first NUL, so "?seconds=1%00" and
 * "?seconds=%31" would read as 1.  The target comes from MHD's URI log
 * callback, before any decoding.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "array.h"
#include "request.h"

static const char *const paths[] = {
	[REQUEST_INDEX] = "/",
	[REQUEST_METRICS] = "/metrics",
	[REQUEST_BLOCK] = "/debug/pprof/block",
	[REQUEST_MUTEX] = "/debug/pprof/mutex",
};

const char *request__path(enum request_page page)
{
	return (size_t)page < ARRAY_SIZE(paths) ? paths[page] : "?";
}

static enum request_page request__page(const char *path, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		if (strlen(paths[i]) == len && !memcmp(paths[i], path, len))
			return (enum request_page)i;
	return REQUEST_NONE;
}

/* Plain digits, 1 to REQUEST_MAX_SECONDS: 0 or -EINVAL. */
static int request__seconds(const char *v, size_t len, unsigned int *out)
{
	unsigned int n = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		n = n * 10 + (unsigned int)(v[i] - '0');
		if (n > REQUEST_MAX_SECONDS)
			return -EINVAL;
	}
	if (!n)
		return -EINVAL;
	*out = n;
	return 0;
}

int request__parse(const char *target, size_t len, struct request_target *out,
		   const char **why)
{
	const char *q = memchr(target, '?', len);
	size_t path_len = q ? (size_t)(q - target) : len;
	bool given = false;

	*out = (struct request_target){
		.page = request__page(target, path_len),
	};
	*why = NULL;
	if (!q)
		return 0;
	for (const char *at = q + 1, *end = target + len; at < end;) {
		const char *amp = memchr(at, '&', (size_t)(end - at));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(at, '=', (size_t)(stop - at));
		size_t key_len = (size_t)((eq ? eq : stop) - at);

		if (key_len == strlen("seconds") &&
		    !memcmp(at, "seconds", key_len)) {
			if (given) {
				*why = "seconds: given more than once";
				return -EINVAL;
			}
			given = true;
			if (!eq || request__seconds(eq + 1, (size_t)(stop - eq - 1),
						    &out->seconds)) {
				*why = "seconds: a whole number from 1 to 3600, "
				       "in plain digits";
				return -EINVAL;
			}
		}
		at = stop + 1;
	}
	return 0;
}
