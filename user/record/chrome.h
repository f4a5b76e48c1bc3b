/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording as Chrome trace-event JSON, which Perfetto's UI and
 * chrome://tracing open: one track per thread, named; one complete ("X")
 * event per wait, named with its label, its type as category, and type,
 * object, call site, owner and wait in args; an instant ("i") event where
 * waits were lost, with their count.
 */
#ifndef SYNCPROF_CHROME_H
#define SYNCPROF_CHROME_H

#include <stdio.h>

#include "evlog.h"
#include "recmeta.h"
#include "recnames.h"

int chrome__export(FILE *out, const struct recmeta *meta,
		   struct recnames *names, struct evlog_reader *events);

#endif
