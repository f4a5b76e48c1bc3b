/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SYNCPROF_OPTVALUE_H
#define SYNCPROF_OPTVALUE_H

#include <stdint.h>

/*
 * Each: 0, or -EINVAL with the message on stderr naming the option
 * (name: "--interval") and what it expects.
 */

/* What every DURATION option says when its value is not one. */
#define OPTVALUE_DURATION_RULE "a number of seconds, or a number and a " \
	"unit: ns, us, ms, s, m or h (e.g. 2, 1.5s, 500ms, 10us, 2m)"
/* The longest --duration or --interval: a year. */
#define OPTVALUE_LONGEST_S (365.0 * 24 * 3600)

/*
 * A DURATION, in ns: a number and a unit, ns, us, ms, s, m or h; a
 * number alone is seconds.  0 or -EINVAL (nothing printed).
 */
int optvalue__duration_ns(const char *arg, uint64_t *out_ns);
/* A DURATION (--min-wait), in ns. */
int optvalue__duration(const char *name, const char *arg, uint64_t *out_ns);
/* A DURATION above 0 and at most a year, in seconds (--duration). */
int optvalue__seconds(const char *name, const char *arg, double *out);
/* A decimal integer from min to max, no sign. */
int optvalue__uint(const char *name, const char *arg, unsigned long min,
		   unsigned long max, unsigned long *out);
/* One of choices[0..n): its index; the error lists them all. */
int optvalue__choice(const char *name, const char *arg,
		     const char *const *choices, int n, int *out);

#endif
