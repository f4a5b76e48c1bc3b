// SPDX-License-Identifier: GPL-2.0
/*
 * --lock-order's cycles named for the report: each lock by its symbol,
 * each site by function and line, in the target's terms (with several
 * processes, addresses go through the process space first).
 */
#include <errno.h>
#include <stdlib.h>

#include "orderview.h"
#include "procspace.h"

static uint64_t canonical(const struct orderview_names *n, uint32_t pid,
			  uint64_t addr)
{
	return n->space ? procspace__canonical(n->space, (pid_t)pid, addr)
			: addr;
}

bool orderview__named(void *ctx, uint32_t pid, uint64_t addr)
{
	const struct orderview_names *n = ctx;

	return n->symbolizer &&
	       symbolizer__object(n->symbolizer, canonical(n, pid, addr));
}

static void name_lock(const struct orderview_names *n, uint32_t pid,
		      const struct lockorder_lock *in,
		      struct format_order_lock *out)
{
	*out = (struct format_order_lock){
		.object = in->object,
		.site = in->site,
		.stack_id = in->stack_id,
		.type = in->type,
	};
	if (!n->symbolizer)
		return;
	out->object_symbol = symbolizer__object(n->symbolizer,
						canonical(n, pid, in->object));
	if (symbolizer__callsite(n->symbolizer, canonical(n, pid, in->site),
				 &out->site_info))
		out->site_info = (struct symbol_info){ 0 };
}

int orderview__build(const struct lockorder *lo,
		     const struct orderview_names *names,
		     struct format_lock_order *out)
{
	size_t n = lockorder__cycles(lo);

	*out = (struct format_lock_order){ 0 };
	if (!n)
		return 0;
	out->cycles = calloc(n, sizeof(*out->cycles));
	if (!out->cycles)
		return -ENOMEM;
	out->n_cycles = n;
	for (size_t i = 0; i < n; i++) {
		struct format_order_cycle *c = &out->cycles[i];

		c->n = lockorder__cycle_len(lo, i);
		c->edges = calloc(c->n, sizeof(*c->edges));
		if (!c->edges) {
			orderview__free(out);
			return -ENOMEM;
		}
		for (size_t k = 0; k < c->n; k++) {
			const struct lockorder_edge *e =
				lockorder__cycle_edge(lo, i, k);
			struct format_order_edge *f = &c->edges[k];

			name_lock(names, e->pid, &e->held, &f->held);
			name_lock(names, e->pid, &e->acquired, &f->acquired);
			f->count = e->count;
			f->pid = (pid_t)e->pid;
			f->tid = (pid_t)e->tid;
		}
	}
	return 0;
}

void orderview__free(struct format_lock_order *view)
{
	if (!view)
		return;
	for (size_t i = 0; i < view->n_cycles; i++)
		free(view->cycles[i].edges);
	free(view->cycles);
	*view = (struct format_lock_order){ 0 };
}
