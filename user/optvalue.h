/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SYNCPROF_OPTVALUE_H
#define SYNCPROF_OPTVALUE_H

/*
 * Each: 0, or -EINVAL with the message on stderr naming the option
 * (name: "--interval") and what it expects.
 */

/* A positive number of seconds, at most a year. */
int optvalue__seconds(const char *name, const char *arg, double *out);
/* A decimal integer from min to max, no sign. */
int optvalue__uint(const char *name, const char *arg, unsigned long min,
		   unsigned long max, unsigned long *out);
/* One of choices[0..n): its index; the error lists them all. */
int optvalue__choice(const char *name, const char *arg,
		     const char *const *choices, int n, int *out);

#endif
