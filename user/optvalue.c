// SPDX-License-Identifier: GPL-2.0
/*
 * The values of the command line's options: a duration (one rule for
 * every DURATION option), an integer in a range, one of a list of names.  Each bad value is said on
 * stderr with what was expected, as every option says it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "optvalue.h"

/*
 * Every DURATION (--duration, --interval, --min-wait), one rule: a
 * number (decimals allowed) and a unit, ns, us, ms, s, m or h; a number
 * alone is seconds.
 */
int optvalue__duration_ns(const char *arg, uint64_t *out_ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "", 1e9 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },
		{ "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;

	errno = 0;
	if (!isdigit((unsigned char)*arg) && *arg != '.')
		return -EINVAL;
	v = strtod(arg, &end);
	if (errno || end == arg || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double ns = v * units[i].ns;

		if (strcmp(end, units[i].unit))
			continue;
		if (ns < 0 || ns > 1e18)
			return -EINVAL;
		*out_ns = (uint64_t)(ns + 0.5);
		return 0;
	}
	return -EINVAL;
}

int optvalue__duration(const char *name, const char *arg, uint64_t *out_ns)
{
	int err = optvalue__duration_ns(arg, out_ns);

	if (err)
		pr_err("invalid %s '%s': expected a duration: %s", name, arg,
		       OPTVALUE_DURATION_RULE);
	return err;
}

int optvalue__seconds(const char *name, const char *arg, double *out)
{
	uint64_t ns;

	if (optvalue__duration_ns(arg, &ns) || !ns ||
	    ns > OPTVALUE_LONGEST_S * 1e9) {
		pr_err("invalid %s '%s': expected a duration above 0 and at "
		       "most a year: %s", name, arg, OPTVALUE_DURATION_RULE);
		return -EINVAL;
	}
	*out = (double)ns / 1e9;
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
