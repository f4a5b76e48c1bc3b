// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the stack tests: a holder keeps one mutex --hold-us while
 * a waiter, told, takes it through the code path the scenario picks, so
 * every measured acquisition blocks exactly once, and the waiter's own
 * clock_gettime(CLOCK_MONOTONIC) around each path is the ground truth
 * per path.
 *
 *   stacks SCENARIO [--iters N] [--hold-us N] [--depth N] [--truth FILE]
 *          [--wait-signal]
 *
 * Each acquisition goes (libraries: tests/targets/lib/stacklibs.h):
 *   paths   path_a and path_b in turn -> stackwrap_lock, a wrapper in a
 *           library without frame pointers
 *   deep    deep_down() --depth levels (default 30) -> path_deep ->
 *           stackwrap_lock
 *   fp      path_fp -> stackfp_outer -> stackfp_inner, a library with
 *           frame pointers and no unwind tables
 *   dlopen  path_dl -> stackdl_lock, in a library dlopen'ed after the
 *           start (then 300 ms for the profiler to read it)
 *   jit     path_jit, called from a few instructions written into
 *           anonymous executable memory (what a JIT does); with
 *           --perf-map, named "jit_stub" in /tmp/perf-PID.map as a JIT
 *           names its code (perf's convention)
 *   exec    --iters acquisitions through path_pre, then the process
 *           execs itself as "paths" (which waits 300 ms for the profiler
 *           to read the new image, then runs), the truth written by the
 *           new image with path_pre's figures carried over; --settle-ms
 *           N instead of 300 (0: waits before the profiler can have read
 *           the new image)
 * Truth: {"scenario", "pid", "object", "paths": {NAME: {"count",
 * "wait_ns"}}}.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/stacklibs.h"
#include "lib/targetkit.h"

static struct {
	int iters;
	int hold_us;
	int depth;
	int settle_ms;
	bool after_exec;
	uint64_t pre_count, pre_wait_ns;
} cfg = { .iters = 20, .hold_us = 3000, .depth = 30, .settle_ms = 300 };

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;		/* iteration the holder holds for */
static atomic_int done;		/* iteration the waiter finished */
static const char *scenario;
static int (*dl_lock)(pthread_mutex_t *m);
static volatile int sink;

enum path { P_A, P_B, P_DEEP, P_FP, P_DL, P_PRE, P_JIT, P__COUNT };

static struct {
	const char *name;
	uint64_t count, wait_ns;
} paths[P__COUNT] = {
	[P_A] = { "path_a" }, [P_B] = { "path_b" }, [P_DEEP] = { "path_deep" },
	[P_FP] = { "path_fp" }, [P_DL] = { "path_dl" }, [P_PRE] = { "path_pre" },
	[P_JIT] = { "path_jit" },
};

static void (*jit_code)(void);	/* calls path_jit */

static void wait_until(atomic_int *flag, int value)
{
	while (atomic_load(flag) != value)
		sleep_us(50);
}

static void measured(enum path p, uint64_t t0)
{
	paths[p].wait_ns += now_ns() - t0;
	paths[p].count++;
	pthread_mutex_unlock(&stack_lock);
}

/* Each path in a function of its own, its call marked for the tests. */
__attribute__((noipa)) static void path_a(void)
{
	uint64_t t0 = now_ns();

	stackwrap_lock(&stack_lock); /* CALLSITE:path_a */
	measured(P_A, t0);
}

__attribute__((noipa)) static void path_b(void)
{
	uint64_t t0 = now_ns();

	stackwrap_lock(&stack_lock); /* CALLSITE:path_b */
	measured(P_B, t0);
}

__attribute__((noipa)) static void path_deep(void)
{
	uint64_t t0 = now_ns();

	stackwrap_lock(&stack_lock); /* CALLSITE:path_deep */
	measured(P_DEEP, t0);
}

/* One frame per level: the store after the call keeps it a call. */
__attribute__((noipa)) static void deep_down(int n)
{
	if (n > 0)
		deep_down(n - 1); /* CALLSITE:deep_down */
	else
		path_deep();
	sink += n;
}

__attribute__((noipa)) static void path_fp(void)
{
	uint64_t t0 = now_ns();

	stackfp_outer(&stack_lock); /* CALLSITE:path_fp */
	measured(P_FP, t0);
}

__attribute__((noipa)) static void path_dl(void)
{
	uint64_t t0 = now_ns();

	dl_lock(&stack_lock); /* CALLSITE:path_dl */
	measured(P_DL, t0);
}

__attribute__((noipa)) static void path_pre(void)
{
	uint64_t t0 = now_ns();

	stackwrap_lock(&stack_lock); /* CALLSITE:path_pre */
	measured(P_PRE, t0);
}

__attribute__((noipa)) static void path_jit(void)
{
	uint64_t t0 = now_ns();

	stackwrap_lock(&stack_lock); /* CALLSITE:path_jit */
	measured(P_JIT, t0);
}

/*
 * push %rbp; mov %rsp,%rbp; movabs $path_jit,%rax; call *%rax;
 * pop %rbp; ret -- in memory no file backs.
 */
static int make_jit(void)
{
	static const unsigned char head[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	static const unsigned char tail[] = { 0xff, 0xd0, 0x5d, 0xc3 };
	void (*target)(void) = path_jit;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		return -1;
	memcpy(code, head, sizeof(head));
	memcpy(code + sizeof(head), &target, sizeof(target));
	memcpy(code + sizeof(head) + sizeof(target), tail, sizeof(tail));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return -1;
	jit_code = (void (*)(void))code;
	return 0;
}

/* The JIT code's name, as a JIT writes it: "START SIZE NAME" in hex. */
static int write_perf_map(void)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx 40 jit_stub\n", (unsigned long)(uintptr_t)jit_code);
	return fclose(f);
}

static atomic_int waiter_tid;

static void *holder(void *arg)
{
	while (!atomic_load(&waiter_tid))
		sleep_us(50);
	for (int i = 1; i <= cfg.iters; i++) {
		pthread_mutex_lock(&stack_lock);
		atomic_store(&held, i);
		/* Every acquisition blocks, however loaded the machine. */
		wait_blocked_in_futex(atomic_load(&waiter_tid));
		sleep_us(cfg.hold_us);
		pthread_mutex_unlock(&stack_lock);
		wait_until(&done, i);
	}
	return arg;
}

static void *waiter(void *arg)
{
	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	for (int i = 1; i <= cfg.iters; i++) {
		wait_until(&held, i);
		if (!strcmp(scenario, "paths"))
			(i % 2 ? path_a : path_b)();
		else if (!strcmp(scenario, "deep"))
			deep_down(cfg.depth);
		else if (!strcmp(scenario, "fp"))
			path_fp();
		else if (!strcmp(scenario, "dlopen"))
			path_dl();
		else if (!strcmp(scenario, "jit"))
			jit_code();
		else
			path_pre();
		atomic_store(&done, i);
	}
	return arg;
}

static void run_threads(void)
{
	pthread_t threads[2];

	atomic_store(&held, 0);
	atomic_store(&done, 0);
	atomic_store(&waiter_tid, 0);
	pthread_create(&threads[0], NULL, holder, NULL);
	pthread_create(&threads[1], NULL, waiter, NULL);
	pthread_join(threads[0], NULL);
	pthread_join(threads[1], NULL);
}

/* The file next to this program. */
static void sibling(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/%s", dirname(self), name);
}

static int load_dl(void)
{
	char path[PATH_MAX];
	void *handle;

	sibling("libstackdl.so", path, sizeof(path));
	handle = dlopen(path, RTLD_NOW);
	dl_lock = handle ? (int (*)(pthread_mutex_t *))dlsym(handle,
							    "stackdl_lock")
			 : NULL;
	if (!dl_lock) {
		fprintf(stderr, "stacks: %s\n", dlerror());
		return -1;
	}
	sleep_us(300000);	/* the profiler reads the new library */
	return 0;
}

/* The same program again, as "paths", carrying path_pre's figures. */
static void exec_paths(const char *truth_path)
{
	char iters[16], hold[16], settle[16], pre_count[32], pre_wait[32];
	char *argv[16];
	int n = 0;

	snprintf(iters, sizeof(iters), "%d", cfg.iters);
	snprintf(hold, sizeof(hold), "%d", cfg.hold_us);
	snprintf(settle, sizeof(settle), "%d", cfg.settle_ms);
	snprintf(pre_count, sizeof(pre_count), "%llu",
		 (unsigned long long)paths[P_PRE].count);
	snprintf(pre_wait, sizeof(pre_wait), "%llu",
		 (unsigned long long)paths[P_PRE].wait_ns);
	argv[n++] = "stacks";
	argv[n++] = "paths";
	argv[n++] = "--iters";
	argv[n++] = iters;
	argv[n++] = "--hold-us";
	argv[n++] = hold;
	argv[n++] = "--settle-ms";
	argv[n++] = settle;
	argv[n++] = "--after-exec";
	argv[n++] = pre_count;
	argv[n++] = pre_wait;
	if (truth_path) {
		argv[n++] = "--truth";
		argv[n++] = (char *)truth_path;
	}
	argv[n] = NULL;
	fflush(NULL);
	execv("/proc/self/exe", argv);
	perror("stacks: exec");
	exit(1);
}

static void write_truth(const char *path)
{
	FILE *f = path ? fopen(path, "w") : NULL;
	bool first = true;

	if (!f)
		return;
	fprintf(f, "{\"scenario\": \"%s\", \"pid\": %d, \"object\": \"%p\", "
		"\"depth\": %d, \"after_exec\": %s, \"paths\": {", scenario,
		(int)getpid(), (void *)&stack_lock, cfg.depth,
		cfg.after_exec ? "true" : "false");
	for (int p = 0; p < P__COUNT; p++) {
		if (!paths[p].count)
			continue;
		fprintf(f, "%s\"%s\": {\"count\": %llu, \"wait_ns\": %llu}",
			first ? "" : ", ", paths[p].name,
			(unsigned long long)paths[p].count,
			(unsigned long long)paths[p].wait_ns);
		first = false;
	}
	fprintf(f, "}}\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "depth", required_argument, NULL, 'D' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "after-exec", required_argument, NULL, 'x' },
		{ "perf-map", no_argument, NULL, 'p' },
		{ "settle-ms", required_argument, NULL, 's' },
		{ 0 },
	};
	const char *truth_path = NULL;
	bool go_signal = false, perf_map = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': cfg.iters = atoi(optarg); break;
		case 'h': cfg.hold_us = atoi(optarg); break;
		case 'D': cfg.depth = atoi(optarg); break;
		case 'T': truth_path = optarg; break;
		case 'w': go_signal = true; break;
		case 'p': perf_map = true; break;
		case 's': cfg.settle_ms = atoi(optarg); break;
		case 'x':
			/* --after-exec PRE_COUNT PRE_WAIT_NS */
			cfg.after_exec = true;
			cfg.pre_count = strtoull(optarg, NULL, 10);
			if (optind < argc)
				cfg.pre_wait_ns = strtoull(argv[optind++], NULL, 10);
			break;
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: stacks paths|deep|fp|dlopen|jit|exec [--iters N] "
			"[--hold-us N] [--depth N] [--truth FILE] [--wait-signal] [--perf-map] "
			"[--settle-ms N]\n");
		return 2;
	}
	scenario = argv[optind];
	if (go_signal)
		wait_for_go();
	if (cfg.after_exec) {
		paths[P_PRE].count = cfg.pre_count;
		paths[P_PRE].wait_ns = cfg.pre_wait_ns;
		sleep_us(cfg.settle_ms * 1000);	/* the profiler reads the new image */
	}
	if (!strcmp(scenario, "dlopen") && load_dl())
		return 1;
	if (!strcmp(scenario, "jit") && (make_jit() ||
					 (perf_map && write_perf_map()))) {
		perror("stacks: jit");
		return 1;
	}
	if (strcmp(scenario, "paths") && strcmp(scenario, "deep") &&
	    strcmp(scenario, "fp") && strcmp(scenario, "dlopen") &&
	    strcmp(scenario, "jit") && strcmp(scenario, "exec")) {
		fprintf(stderr, "stacks: unknown scenario '%s'\n", scenario);
		return 2;
	}
	run_threads();
	if (!strcmp(scenario, "exec"))
		exec_paths(truth_path);
	write_truth(truth_path);
	return 0;
}
