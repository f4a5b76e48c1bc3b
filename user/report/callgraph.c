// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "names.h"
#include "text.h"

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

/*
 * What a stack prints as: its frames' lines and how it ends.  Stacks that
 * differ only by return addresses within the same lines print the same,
 * and are printed once, summed.  NULL without memory.
 */
static char *callgraph__text(const struct rowstacks_stack *st,
			     const char *root, size_t root_len)
{
	char text[TEXT_MAX], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t p = 0; p < st->n_pcs; p++) {
		const struct rowstacks_pc *pc = &st->pcs[p];

		for (size_t i = 0; i < pc->n_frames; i++) {
			names__frame_text(&pc->frames[i], pc->pc, root,
					   root_len, text, sizeof(text));
			fprintf(f, FRAME_INDENT "%s\n", text);
		}
	}
	if (st->end == STACKTAB_END_TRUNCATED)
		fputs(FRAME_INDENT "... (--stack-depth reached)\n", f);
	else if (st->end == STACKTAB_END_STOPPED)
		fputs(FRAME_INDENT "... (the unwinding stopped here)\n", f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void callgraph__print(FILE *out, const struct report_row *row,
		      const struct rowstacks *rs, const char *root,
		      size_t root_len)
{
	char **texts = calloc(rs->n_stacks ? rs->n_stacks : 1, sizeof(*texts));
	bool *done = calloc(rs->n_stacks ? rs->n_stacks : 1, sizeof(*done));

	for (size_t i = 0; texts && i < rs->n_stacks; i++)
		texts[i] = callgraph__text(&rs->stacks[i], root, root_len);
	for (size_t i = 0; i < rs->n_stacks; i++) {
		struct rowstacks_stack sum = rs->stacks[i];
		const char *text = texts ? texts[i] : NULL;

		if (done && done[i])
			continue;
		/* The same lines further down: one stack on the screen. */
		for (size_t j = i + 1; text && done && j < rs->n_stacks; j++) {
			const struct rowstacks_stack *o = &rs->stacks[j];

			if (!texts[j] || strcmp(text, texts[j]) ||
			    !o->stack_id != !sum.stack_id)
				continue;
			done[j] = true;
			sum.count += o->count;
			sum.wait_ns += o->wait_ns;
			sum.failed += o->failed;
			sum.max_ns = sum.max_ns && o->max_ns ?
				     (o->max_ns > sum.max_ns ? o->max_ns : sum.max_ns) : 0;
		}
		callgraph__header(out, row, &sum);
		if (text) {
			fputs(text, out);
		} else {
			char *alone = callgraph__text(&sum, root, root_len);

			fputs(alone ? alone : FRAME_INDENT "?\n", out);
			free(alone);
		}
	}
	for (size_t i = 0; texts && i < rs->n_stacks; i++)
		free(texts[i]);
	free(texts);
	free(done);
}
