// SPDX-License-Identifier: GPL-2.0
/*
 * How fast call sites are named: 10,000 distinct call sites, each on its
 * own source line in its own function (generated: sites.h), symbolized
 * cold (DWARF lookups) and warm (the cache), in this very process.
 * Then lock objects by member path: the first name asked of a module
 * indexes its variables (this program, ld.so, libc with its debug file
 * when installed); a second one of the module, and a cached one.  Then
 * each call site's lock argument by its pointer's type (each site passes
 * &q->lock, q a struct bench_heap *: "(struct bench_heap *)->lock"),
 * cold (its call-site record, the variables in scope) and cached.
 *
 *   bench_symbolizer [--json]
 */
#include <pthread.h>
#include <stddef.h>
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

struct bench_heap {
	long id;
	pthread_mutex_t lock;
};

__attribute__((noinline)) void hook(pthread_mutex_t *lock);
__attribute__((noinline)) void hook(pthread_mutex_t *lock)
{
	(void)lock;
	sites[n_recorded++] = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

#include "sites.h"	/* site_0 .. site_9999 and call_all_sites() */

struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
} bench_queue;

/* The objects named, in order: a variable's name and an offset in it. */
static const struct {
	const char *var;
	size_t offset;
} objects[] = {
	{ "bench_queue", offsetof(__typeof__(bench_queue), not_empty) },
	{ "bench_queue", offsetof(__typeof__(bench_queue), not_full) },
	{ "_rtld_global", 0 },
	{ "main_arena", 0 },
	{ "main_arena", 8 },
};
#define N_OBJECTS (sizeof(objects) / sizeof(objects[0]))

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
	double t0, t_new, t_cold, t_warm, t_objects[N_OBJECTS], t_cached = 0;
	double t_args, t_args_cached;
	const char *names[N_OBJECTS];
	struct bench_heap heap;
	int typed = 0;

	call_all_sites(&heap);
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
	for (size_t i = 0; i < N_OBJECTS; i++) {
		uint64_t start, size;

		names[i] = NULL;
		t_objects[i] = 0;
		if (symbolizer__find_object(sym, objects[i].var, &start, &size))
			continue;
		t0 = now_s();
		names[i] = symbolizer__object(sym, start + objects[i].offset);
		t_objects[i] = now_s() - t0;
		t0 = now_s();
		symbolizer__object(sym, start + objects[i].offset);
		t_cached = now_s() - t0;
	}
	t0 = now_s();
	for (int i = 0; i < N_SITES; i++) {
		const char *name = symbolizer__argument_lock(sym, sites[i], false);

		typed += name && !strcmp(name, "(struct bench_heap *)->lock");
	}
	t_args = now_s() - t0;
	t0 = now_s();
	for (int i = 0; i < N_SITES; i++)
		symbolizer__argument_lock(sym, sites[i], false);
	t_args_cached = now_s() - t0;
	if (json) {
		printf("{\"bench\": \"symbolizer\", \"sites\": %d, \"resolved\": %d, "
		       "\"open_s\": %.6f, \"cold_s\": %.6f, \"warm_s\": %.6f, "
		       "\"objects\": [", N_SITES, resolved, t_new, t_cold, t_warm);
		for (size_t i = 0; i < N_OBJECTS; i++)
			printf("%s{\"name\": \"%s\", \"first_s\": %.6f}", i ? ", " : "",
			       names[i] ? names[i] : "", t_objects[i]);
		printf("], \"object_cached_s\": %.9f, \"typed\": %d, "
		       "\"args_cold_s\": %.6f, \"args_cached_s\": %.6f}\n",
		       t_cached, typed, t_args, t_args_cached);
	} else {
		printf("symbolizer: %d distinct call sites, %d with function and line\n"
		       "  open (modules, DWARF)   %8.1f ms\n"
		       "  cold lookups            %8.1f ms  (%.1f us each)\n"
		       "  cached lookups          %8.3f ms  (%.0f ns each)\n",
		       N_SITES, resolved, t_new * 1e3, t_cold * 1e3,
		       t_cold * 1e6 / N_SITES, t_warm * 1e3, t_warm * 1e9 / N_SITES);
		printf("objects by member path (the first of a module indexes its variables):\n");
		for (size_t i = 0; i < N_OBJECTS; i++)
			printf("  %-34s %8.3f ms\n", names[i] ? names[i] : "(not found)",
			       t_objects[i] * 1e3);
		printf("  cached                             %8.0f ns\n", t_cached * 1e9);
		printf("heap locks by the call site's pointer type: %d of %d named\n"
		       "  cold                    %8.1f ms  (%.1f us each)\n"
		       "  cached                  %8.3f ms  (%.0f ns each)\n",
		       typed, N_SITES, t_args * 1e3, t_args * 1e6 / N_SITES,
		       t_args_cached * 1e3, t_args_cached * 1e9 / N_SITES);
	}
	symbolizer__free(sym);
	return resolved == N_SITES && typed == N_SITES ? 0 : 1;
}
