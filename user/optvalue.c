// SPDX-License-Identifier: GPL-2.0
/*
 * The values of the command line's options: a number of seconds, an
 * integer in a range, one of a list of names.  Each bad value is said on
 * stderr with what was expected, as every option says it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "optvalue.h"

int optvalue__seconds(const char *name, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v <= 0 ||
	    v > 365.0 * 24 * 3600) {
		pr_err("invalid %s '%s': expected a positive number of seconds",
		       name, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int optvalue__uint(const char *name, const char *arg, unsigned long min,
		   unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (*arg == '-' || *arg == '+')
		goto invalid;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		goto invalid;
	*out = v;
	return 0;
invalid:
	pr_err("invalid %s '%s': expected an integer from %lu to %lu",
	       name, arg, min, max);
	return -EINVAL;
}

int optvalue__choice(const char *name, const char *arg,
		     const char *const *choices, int n, int *out)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(arg, choices[i])) {
			*out = i;
			return 0;
		}
	}
	char list[256] = "";
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, len < sizeof(list) ?
					sizeof(list) - len : 0, "%s%s",
					i ? (i == n - 1 ? " or " : ", ") : "",
					choices[i]);
	pr_err("invalid %s '%s': choose %s", name, arg, list);
	return -EINVAL;
}
