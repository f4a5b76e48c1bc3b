// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "callgraph.h"
#include "format.h"

#define STACK_INDENT	"    "
#define FRAME_INDENT	"            "

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

static void callgraph__header(FILE *out, const struct report_row *row,
			      const struct rowstacks_stack *st)
{
	/* The share of the row's key: its wait, or its count when it
	   waited no time (only failures, say). */
	double pct = row->wait_ns ? share(st->wait_ns, row->wait_ns)
				  : share(st->count, row->count);

	fprintf(out, STACK_INDENT "--%.2f%%-- %" PRIu64 " wait%s (%.2f%%)  %.5f s",
		pct, st->count, st->count == 1 ? "" : "s",
		share(st->count, row->count), (double)st->wait_ns * 1e-9);
	if (st->max_ns)
		fprintf(out, "  max %.2f us", (double)st->max_ns * 1e-3);
	if (st->failed)
		fprintf(out, "  failed %" PRIu64, st->failed);
	if (!st->stack_id)
		fputs("  (no stack kept: the call site)", out);
	fputc('\n', out);
}

void callgraph__print(FILE *out, const struct report_row *row,
		      const struct rowstacks *rs, const char *root,
		      size_t root_len)
{
	char text[FORMAT_TEXT_MAX];

	for (size_t i = 0; i < rs->n_stacks; i++) {
		const struct rowstacks_stack *st = &rs->stacks[i];

		callgraph__header(out, row, st);
		for (size_t p = 0; p < st->n_pcs; p++) {
			const struct rowstacks_pc *pc = &st->pcs[p];

			for (size_t f = 0; f < pc->n_frames; f++) {
				format__frame_text(&pc->frames[f], pc->pc, root,
						   root_len, text, sizeof(text));
				fprintf(out, FRAME_INDENT "%s\n", text);
			}
		}
		if (st->end == STACKTAB_END_TRUNCATED)
			fputs(FRAME_INDENT "... (--stack-depth reached)\n", out);
		else if (st->end == STACKTAB_END_STOPPED)
			fputs(FRAME_INDENT "... (the unwinding stopped here)\n",
			      out);
	}
}
