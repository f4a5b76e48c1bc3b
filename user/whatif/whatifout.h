/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's predictions as the reports print them: the table's "What
 * if" section and JSON "what_if" (DESIGN.md's contract: object, site as
 * a FRAME, shorter_pct, predicted_gain_pct, low_pct, high_pct, progress).
 */
#ifndef SYNCPROF_WHATIFOUT_H
#define SYNCPROF_WHATIFOUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "whatif.h"

/* The queue's gain outside the slope's interval (its lock arithmetic). */
bool whatifout__disagree(const struct whatif_entry *e);
void whatifout__table(FILE *out, const struct whatif *w);
/* The "what_if" array; *err: 0 or the first failure. */
json_t *whatifout__json(const struct whatif *w, int *err);

#endif
