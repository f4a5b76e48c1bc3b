// SPDX-License-Identifier: GPL-2.0
/*
 * How fast call sites are named: 10,000 distinct call sites, each on its
 * own source line in its own function (generated: sites.h), symbolized
 * cold (DWARF lookups) and warm (the cache), in this very process.
 *
 *   bench_symbolizer [--json]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer.h"

#define N_SITES 10000

static uintptr_t sites[N_SITES];
static int n_recorded;

__attribute__((noinline)) void hook(void);
__attribute__((noinline)) void hook(void)
{
	sites[n_recorded++] = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

#include "sites.h"	/* site_0 .. site_9999 and call_all_sites() */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int json = argc > 1 && !strcmp(argv[1], "--json");
	struct symbolizer *sym;
	struct symbol_info info;
	int resolved = 0;
	double t0, t_new, t_cold, t_warm;

	call_all_sites();
	if (n_recorded != N_SITES)
		return 1;
	t0 = now_s();
	if (symbolizer__new(getpid(), NULL, &sym))
		return 1;
	t_new = now_s() - t0;
	t0 = now_s();
	for (int i = 0; i < N_SITES; i++)
		resolved += !symbolizer__callsite(sym, sites[i], &info) &&
			    info.line && info.function;
	t_cold = now_s() - t0;
	t0 = now_s();
	for (int i = 0; i < N_SITES; i++)
		symbolizer__callsite(sym, sites[i], &info);
	t_warm = now_s() - t0;
	symbolizer__free(sym);
	if (json)
		printf("{\"bench\": \"symbolizer\", \"sites\": %d, \"resolved\": %d, "
		       "\"open_s\": %.6f, \"cold_s\": %.6f, \"warm_s\": %.6f}\n",
		       N_SITES, resolved, t_new, t_cold, t_warm);
	else
		printf("symbolizer: %d distinct call sites, %d with function and line\n"
		       "  open (modules, DWARF)   %8.1f ms\n"
		       "  cold lookups            %8.1f ms  (%.1f us each)\n"
		       "  cached lookups          %8.3f ms  (%.0f ns each)\n",
		       N_SITES, resolved, t_new * 1e3, t_cold * 1e3,
		       t_cold * 1e6 / N_SITES, t_warm * 1e3, t_warm * 1e9 / N_SITES);
	return resolved == N_SITES ? 0 : 1;
}
