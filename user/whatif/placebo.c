// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's placebo.  The delay that lengthens a lock's holds is a spin
 * on a CPU (whatif.bpf.c): on a machine others keep busy, that CPU is
 * taken from every runnable thread, the ones that make progress
 * included, so a lock no progress needs reads a small slope of its own
 * (a decoy lock, slept under by threads that make nothing, read slopes
 * of 0.005 to 1.1 against the windows without delay beside load averages
 * of 14 to 37: gains of 0% to 29% for holds 25% shorter).  The placebo
 * spends the same CPU without any lock: in windows of its own, beside
 * each delayed window, a child of syncprof releases a mutex of its own,
 * which no one else takes, at the rate that spends what the delayed
 * window of that fraction spent, and the experiment's program spins at
 * each release for the delay's length (experiment.c, whatif.bpf.c); the
 * delayed window is compared with its placebo rather than with the
 * windows without delay, so the CPU's part cancels and the lock's own
 * part is left.
 *
 * Rejected: the same spin in the target's own threads after the release
 * (a return probe on the unlocks).  It costs the CPU in the same
 * threads, but it also lengthens those threads' own path: where the
 * holders make the progress and their loop is not slack (two workers,
 * a lock held half the time), the placebo slows them as much as the
 * delay does, and the lock's part read half of what it is.  A child
 * lengthens no thread's path of the target; it takes the CPU as one more
 * runnable task at the target's nice, which is what the spin in a
 * thread that was asleep (the decoy's) is too.  Where the spinning
 * thread is the bottleneck's holder, its spin takes no CPU from itself
 * and the placebo's does: the lock's part then reads a little low (by
 * the placebo's own slope, a few hundredths beside load averages of 30).
 *
 * The spin is the delay's own program, in the kernel: a first placebo
 * spun in user space on the child's CPU clock took less from the
 * target than the delay did (the target's threads woke and preempted
 * it; nothing preempts a probe's spin), and a decoy still read slopes
 * of 0.1 against it where the references read 0.9.  The child reads its
 * period from a page shared with syncprof, polled each millisecond when
 * idle, and sleeps to each release's time; woken late, it makes the
 * releases due meanwhile, so that it spends the CPU asked on a busy
 * machine too.  It is killed when the experiment ends, and by the
 * kernel when syncprof dies (PR_SET_PDEATHSIG), SIGKILL included; it
 * closes every descriptor it inherits first, so the experiment's links
 * (the delay) go with syncprof's (the child holding them kept the
 * target's unlocks slow for a second after a SIGKILL).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "placebo.h"

#define IDLE_POLL_NS	1000000ull
/* The releases a late child makes up for, at most this far back. */
#define CATCH_UP_NS	10000000ull

struct placebo_page {
	atomic_uint_fast64_t period_ns;
};

/* The child's own lock: at one address in it and in syncprof. */
static pthread_mutex_t placebo_lock = PTHREAD_MUTEX_INITIALIZER;

struct placebo {
	struct placebo_page *page;
	pid_t child;
};

static void sleep_until(uint64_t when)
{
	struct timespec ts = { .tv_sec = (time_t)(when / 1000000000ull),
			       .tv_nsec = (long)(when % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void __attribute__((noreturn)) child_loop(struct placebo_page *pg,
						  pid_t parent)
{
	uint64_t next = clock__monotonic_ns();

	for (;;) {
		uint64_t period = atomic_load(&pg->period_ns);
		uint64_t now;

		if (getppid() != parent)
			_exit(0);
		now = clock__monotonic_ns();
		if (!period) {
			next = now + IDLE_POLL_NS;
			sleep_until(next);
			continue;
		}
		/* Late (woken late on a busy machine): the releases due since
		   are made now, up to CATCH_UP_NS of them, so that the CPU
		   spent is the one asked for. */
		if (next + CATCH_UP_NS < now)
			next = now - CATCH_UP_NS;
		while (next <= now) {
			pthread_mutex_lock(&placebo_lock);
			pthread_mutex_unlock(&placebo_lock);	/* the spin */
			next += period;
		}
		sleep_until(next);
	}
}

int placebo__start(pid_t like, struct placebo **out)
{
	struct placebo *p = calloc(1, sizeof(*p));
	pid_t parent = getpid();
	int nice_like;

	if (!p)
		return -ENOMEM;
	errno = 0;
	nice_like = getpriority(PRIO_PROCESS, (id_t)like);
	if (errno)
		nice_like = 0;
	p->page = mmap(NULL, sizeof(*p->page), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->page == MAP_FAILED) {
		int err = -errno;

		free(p);
		return err;
	}
	p->child = fork();
	if (p->child < 0) {
		int err = -errno;

		munmap(p->page, sizeof(*p->page));
		free(p);
		return err;
	}
	if (p->child == 0) {
		/* None of syncprof's descriptors: its BPF links must die
		   with it, not wait for the child. */
		close_range(3, ~0u, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		/* At the target's nice: it competes as the target's spin. */
		setpriority(PRIO_PROCESS, 0, nice_like);
		child_loop(p->page, parent);
	}
	*out = p;
	return 0;
}

void placebo__set(struct placebo *p, uint64_t period_ns)
{
	if (p)
		atomic_store(&p->page->period_ns, period_ns);
}

pid_t placebo__pid(const struct placebo *p)
{
	return p ? p->child : 0;
}

uint64_t placebo__lock(void)
{
	return (uint64_t)(uintptr_t)&placebo_lock;
}

void placebo__stop(struct placebo *p)
{
	if (!p)
		return;
	if (p->child > 0) {
		kill(p->child, SIGKILL);
		waitpid(p->child, NULL, 0);
	}
	munmap(p->page, sizeof(*p->page));
	free(p);
}
