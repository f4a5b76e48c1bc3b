/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thread states of a report, printed: the table's "Thread states"
 * section, JSON's "threads" array, the CSV lines of --states-csv, and the
 * live screen's bar.
 */
#ifndef SYNCPROF_STATEFORMAT_H
#define SYNCPROF_STATEFORMAT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "threadstates.h"

/* The section under the lock table. */
void stateformat__table(FILE *out, const struct states_report *rep);
/*
 * Sets a JSON report's keys "threads" (an array) and "sched_missed";
 * both null when rep is NULL (no --states).  The first failure stays in
 * *err.
 */
void stateformat__json(json_t *report, const struct states_report *rep,
		       int *err);
/* --states-csv: the header, once per file. */
void stateformat__csv_header(FILE *out);
/* --states-csv: one line per row of the report numbered sequence. */
void stateformat__csv(FILE *out, unsigned int sequence, pid_t pid,
		      const struct states_report *rep);
/*
 * What a row's shares are of: the window, times the threads of a group
 * (their states add up to it when they all lived through the window).
 */
uint64_t stateformat__capacity(const struct states_row *row, uint64_t window_ns);
/* A row's name as shown: the sanitized comm, "name ×N" for a group. */
void stateformat__name(const struct states_row *row, char *buf, size_t len);
/*
 * A bar of `width` cells for a window of window_ns (times a group's
 * threads): how many cells each state gets (largest remainders, so they
 * add up to the row's alive share of the bar, rounded); the rest of the
 * bar is the time it did not live.
 */
void stateformat__bar(const struct states_row *row, uint64_t window_ns,
		      int width, int cells[STATES__COUNT]);

#endif
