/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syncprof's own priority while it attaches (attachprio.c).
 */
#ifndef SYNCPROF_ATTACHPRIO_H
#define SYNCPROF_ATTACHPRIO_H

#include <stdbool.h>

/* What attachprio__raise found, for attachprio__restore. */
struct attachprio {
	int nice;		/* the nice syncprof was started with */
	bool raised;
	int group_nice;		/* its session's autogroup's, when it leads it */
	bool group_raised;
};

/* Raises the calling thread's priority for the attach (a no-op when the
   nice asked for is not higher than the one syncprof runs at, or when
   raised already).  *ap starts zeroed. */
void attachprio__raise(struct attachprio *ap);

/* Every thread of syncprof back at the nice it was started with, and
   its session's autogroup too; once (a second call does nothing). */
void attachprio__restore(struct attachprio *ap);

#endif
