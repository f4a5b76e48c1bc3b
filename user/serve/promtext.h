/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lines of Prometheus' text exposition format that every writer of
 * /metrics shares: a family's HELP and TYPE, and a family of one
 * unlabelled sample.
 */
#ifndef SYNCPROF_PROMTEXT_H
#define SYNCPROF_PROMTEXT_H

#include <stdint.h>
#include <stdio.h>

void promtext__family(FILE *out, const char *name, const char *type,
		      const char *help);
void promtext__one(FILE *out, const char *name, const char *type,
		   const char *help, uint64_t value);
/* Seconds, or another real, to the microsecond. */
void promtext__one_real(FILE *out, const char *name, const char *type,
			const char *help, double value);

#endif
