// SPDX-License-Identifier: GPL-2.0
/*
 * A condvar's futex word moved between glibc builds (__g_signals at 40 in
 * 2.36, 32 in 2.41 and in distributions that took the rewrite back into
 * 2.38-2.40), so it is measured, not assumed: a forked child waits 20 ms
 * on a condvar it owns, stopped by ptrace at each system call, and the
 * first FUTEX_WAIT_BITSET's address less the condvar's is the offset.
 * The child shares the parent's address space layout, so the condvar's
 * address is known to both.  ~25 ms at startup.
 *
 * Rejected: reading the glibc version (the backports break it); decoding
 * pthread_cond_wait's code for the address computation (brittle).
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "condprobe.h"
#include "elfimage.h"

#define CHILD_WAIT_NS 20000000
#define MAX_STOPS 4096

static pthread_cond_t probe_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t probe_mutex = PTHREAD_MUTEX_INITIALIZER;

static int build_id(const char *path, uint8_t *id, size_t len)
{
	struct elfimage *image;
	int n = elfimage__open(path, &image);

	if (n)
		return n;
	n = elfimage__build_id(image, id, len);
	elfimage__close(image);
	return n;
}

static int same_libc(const char *target_libc)
{
	uint8_t ours[64], theirs[64];
	int n_ours, n_theirs;
	Dl_info info;

	if (!dladdr((void *)pthread_cond_timedwait, &info) || !info.dli_fname)
		return -ENOTSUP;
	n_ours = build_id(info.dli_fname, ours, sizeof(ours));
	n_theirs = build_id(target_libc, theirs, sizeof(theirs));
	if (n_ours <= 0 || n_ours != n_theirs || memcmp(ours, theirs, (size_t)n_ours))
		return -ENOTSUP;
	return 0;
}

static __attribute__((noreturn)) void child_wait(void)
{
	struct timespec until;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(1);
	raise(SIGSTOP);
	pthread_mutex_lock(&probe_mutex);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += CHILD_WAIT_NS;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&probe_cond, &probe_mutex, &until);
	_exit(0);
}

/* Steps the stopped child from system call to system call. */
static int watch_child(pid_t child, uint32_t *offset)
{
	const uint64_t cond = (uint64_t)(uintptr_t)&probe_cond;
	bool entering = true;

	if (ptrace(PTRACE_SETOPTIONS, child, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)))
		return -errno;
	for (int i = 0; i < MAX_STOPS; i++) {
		struct user_regs_struct regs;
		int status;

		if (ptrace(PTRACE_SYSCALL, child, NULL, NULL))
			return -errno;
		if (waitpid(child, &status, 0) != child)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ETIME;
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80))
			continue;
		if (!entering) {
			entering = true;
			continue;
		}
		entering = false;
		if (ptrace(PTRACE_GETREGS, child, NULL, &regs))
			return -errno;
		if (regs.orig_rax != SYS_futex ||
		    (regs.rsi & FUTEX_CMD_MASK) != FUTEX_WAIT_BITSET)
			continue;
		if (regs.rdi < cond || regs.rdi + 4 > cond + sizeof(pthread_cond_t))
			return -ERANGE;
		*offset = (uint32_t)(regs.rdi - cond) & ~7u;
		return 0;
	}
	return -ETIME;
}

int condprobe__signal_offset(const char *target_libc, uint32_t *offset)
{
	int err = same_libc(target_libc), status;
	pid_t child;

	if (err)
		return err;
	child = fork();
	if (child < 0)
		return -errno;
	if (!child)
		child_wait();
	if (waitpid(child, &status, WSTOPPED) != child || !WIFSTOPPED(status)) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		return -ECHILD;
	}
	err = watch_child(child, offset);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return err;
}
