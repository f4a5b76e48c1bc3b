// SPDX-License-Identifier: GPL-2.0
/*
 * A target that loads and unloads a library over and over, for the test
 * that a profiler's memory stays flat under dlopen/dlclose churn.  Each
 * cycle dlopens --lib, calls its shared_lock_work(1) (one acquisition of
 * the library's own lock, from the library's code) and dlcloses it; every
 * --every cycles the main thread also takes churn_lock while a helper
 * holds it, letting go only once main blocks in the kernel: one
 * contended acquisition, exactly.
 *
 * With --copies DIR each cycle loads a distinct file instead: --lib is
 * copied to a new file in DIR, which is dlopened, called, dlclosed and
 * unlinked, so every cycle maps a new (device, inode) that is deleted
 * once unloaded, the way a plugin host or a JIT that writes its code to
 * files churns libraries.
 *
 *   dlchurn --lib PATH [--copies DIR] [--warmup N] [--cycles N]
 *           [--every N] [--pause-ms N] [--truth PATH] [--wait-signal]
 *
 * --pause-ms sleeps N ms after each cycle: a bounded rate, for a churn
 * that runs for an hour beside syncprof (make soak).
 *
 * With --wait-signal: "ready PID", waits for SIGUSR1; --warmup cycles,
 * then "warm PID" and waits for SIGUSR1 again; --cycles cycles, writes
 * the truth, "done PID" and waits for a last SIGUSR1 before it exits.
 * Truth: {"object": churn_lock, "contended": N, "library_calls": N,
 * "cycles": N}.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/targetkit.h"

static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int holding;
static pid_t waiter_tid;

/* Holds churn_lock until the main thread blocks on it. */
static void *holder(void *arg)
{
	pthread_mutex_lock(&churn_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	wait_blocked_in_futex_within(waiter_tid, &churn_lock,
				     sizeof(churn_lock));
	pthread_mutex_unlock(&churn_lock);
	return NULL;
}

/* The next SIGUSR1 (wait_for_go blocked it), with nothing printed. */
static void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

static int contend(void)
{
	pthread_t t;

	__atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
	if (pthread_create(&t, NULL, holder, NULL))
		return -1;
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sleep_us(50);
	pthread_mutex_lock(&churn_lock); /* CALLSITE:churn_lock */
	pthread_mutex_unlock(&churn_lock);
	pthread_join(t, NULL);
	return 0;
}

/* A copy of lib named DIR/churn-N.so in path; 0 or -1. */
static int copy_lib(const char *lib, const char *dir, int n, char *path,
		    size_t size)
{
	int in, out, ret = -1;
	struct stat st;
	off_t off = 0;

	snprintf(path, size, "%s/churn-%d.so", dir, n);
	in = open(lib, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st)) {
		perror(lib);
		goto out;
	}
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		perror(path);
		goto out;
	}
	while (off < st.st_size)
		if (sendfile(out, in, &off, st.st_size - off) <= 0)
			break;
	ret = off == st.st_size ? 0 : -1;
	if (ret)
		perror(path);
	close(out);
out:
	if (in >= 0)
		close(in);
	return ret;
}

/* One dlopen, one call into the library, one dlclose; 0 or -1.  With
 * copies (a directory), of a fresh copy of lib, unlinked afterwards. */
static int cycle(const char *lib, const char *copies, int n, long *calls)
{
	char path[4096];
	void *handle;
	long (*work)(int);

	if (copies) {
		if (copy_lib(lib, copies, n, path, sizeof(path)))
			return -1;
		lib = path;
	}
	handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		goto fail;
	}
	work = (long (*)(int))dlsym(handle, "shared_lock_work");
	if (!work) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		dlclose(handle);
		goto fail;
	}
	*calls += work(1);
	if (dlclose(handle)) {
		fprintf(stderr, "dlchurn: %s\n", dlerror());
		goto fail;
	}
	if (copies)
		unlink(path);
	return 0;
fail:
	if (copies)
		unlink(path);
	return -1;
}

static int run(const char *lib, const char *copies, int n, int every,
	       int pause_ms, int *done, long *calls, long *contended)
{
	struct timespec pause = { pause_ms / 1000, (pause_ms % 1000) * 1000000L };

	for (int i = 0; i < n; i++, (*done)++) {
		if (cycle(lib, copies, *done, calls))
			return -1;
		if (pause_ms)
			nanosleep(&pause, NULL);
		if (*done % every == 0) {
			if (contend())
				return -1;
			(*contended)++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "copies", required_argument, NULL, 'C' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "every", required_argument, NULL, 'e' },
		{ "pause-ms", required_argument, NULL, 'p' },
		{ "truth", required_argument, NULL, 'T' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	const char *lib = NULL, *copies = NULL, *truth = NULL;
	int opt, warmup = 300, cycles = 2400, every = 20, pause_ms = 0;
	int wait = 0, done = 0;
	long calls = 0, contended = 0;
	FILE *f;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': lib = optarg; break;
		case 'C': copies = optarg; break;
		case 'W': warmup = atoi(optarg); break;
		case 'c': cycles = atoi(optarg); break;
		case 'e': every = atoi(optarg); break;
		case 'p': pause_ms = atoi(optarg); break;
		case 'T': truth = optarg; break;
		case 'w': wait = 1; break;
		default: return 2;
		}
	}
	if (!lib || warmup < 0 || cycles < 0 || every < 1 || pause_ms < 0) {
		fprintf(stderr, "usage: dlchurn --lib PATH [--copies DIR] "
			"[--warmup N] [--cycles N] [--every N] [--pause-ms N] "
			"[--truth PATH] "
			"[--wait-signal]\n");
		return 2;
	}
	waiter_tid = (pid_t)syscall(SYS_gettid);
	if (wait)
		wait_for_go();
	if (run(lib, copies, warmup, every, pause_ms, &done, &calls, &contended))
		return 1;
	if (wait) {
		printf("warm %d\n", (int)getpid());
		fflush(stdout);
		wait_usr1();
	}
	if (run(lib, copies, cycles, every, pause_ms, &done, &calls, &contended))
		return 1;
	f = truth ? fopen(truth, "w") : NULL;
	if (f) {
		fprintf(f, "{\"object\": \"%p\", \"contended\": %ld, "
			"\"library_calls\": %ld, \"cycles\": %d}\n",
			(void *)&churn_lock, contended, calls, done);
		fclose(f);
	}
	if (wait)
		wait_for_end();
	return 0;
}
