// SPDX-License-Identifier: GPL-2.0
/*
 * --what-if's target: workers that each make items, one at a time, with
 * one critical section of work_lock per item (--hold-us of work on a
 * CPU: a loop of so many iterations, timed by the thread's CPU clock at
 * the start, so that being preempted does not shorten it) and --work-us
 * of the same work outside it; item_done() is called per item
 * (the progress function).  It measures its own progress: every
 * --window-ms it prints "rate R" (items per second in that window), and
 * after it "slow F": the share of its unlock calls that took a quarter
 * of the critical section or more of the thread's CPU time (a delay
 * syncprof put there spins on the CPU; being preempted takes none).
 *
 * --ab FRAC runs the shorter version for real: windows alternate between
 * holds of --hold-us and of --hold-us x (1 - FRAC), printed "base R" and
 * "short R", so that a test can pair each short window with the base
 * windows beside it.  --control does the same with FRAC read from
 * "ab FRAC" lines on stdin (and "window MS"), and ends the target at
 * end-of-file.
 *
 * --hold-sleep-us S: the critical section also sleeps S us (before its
 * work), as a section that waits for I/O under its lock does; --ab
 * shortens the sleep by the same fraction as the work.  The timer slack
 * is set to 1 ns so that the sleep is what was asked.
 *
 * Every window's line ends with "cpu C": the CPUs the process used in
 * it (its CPU time over the window's, every thread of this process),
 * then "handoff H N": the mean handoff of the workers' lock in it, in
 * us, over its N handoffs (a release, timed just before the unlock
 * call, to the next lock call's return by a worker that called before
 * that release; a worker that came after found it free), then
 * "holdcpu S": the workers' CPU time inside work_lock (their thread
 * clocks, taken on its return and before the unlock) over the
 * process's CPU time in the window (one process: --procs counts the
 * parent's).
 *
 * --decoy-threads M: M threads that take decoy_lock and sleep
 * --decoy-hold-us under it, in a loop, making nothing: more wait than
 * work_lock, and no item needs it.
 *
 * --feeder-us F: a feeder thread makes each item's token under
 * feed_lock (F of work on a CPU) and posts it; a worker waits for a
 * token before each item.  Only the feeder holds feed_lock and it makes
 * no item, but every item waits for it: a lock the progress needs
 * through a wakeup.  At most FEED_AHEAD tokens wait.  --ab shortens
 * feed_lock's holds by the same fraction as work_lock's.
 *
 * --procs P: the workers run in P forked processes (--threads each),
 * the parent only counts and prints; their lock is then shared_lock, a
 * PTHREAD_PROCESS_SHARED mutex in a page mapped MAP_SHARED before the
 * fork (the same address in every process), and the counters and the
 * hold's length are in that page too.  The parent prints "lock 0xADDR"
 * and "pids P1 P2 ..." first.  Children die with the parent.
 */
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "lib/targetkit.h"

pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t decoy_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t feed_lock = PTHREAD_MUTEX_INITIALIZER;

#define FEED_AHEAD	16

/* What every process shares (MAP_SHARED: --procs forks after it). */
struct shared {
	atomic_ulong items, unlocks, slow_unlocks;
	atomic_uint hold_ns;		/* the critical section, now */
	atomic_uint sleep_ns;		/* its sleep, now */
	atomic_bool stop;
	atomic_ulong released_ns;	/* the lock's last release */
	atomic_ulong handoffs, handoff_ns;
	/* The workers' CPU time inside work_lock (their thread clocks) */
	atomic_ulong hold_cpu_ns;
	pthread_mutex_t shared_lock;	/* --procs: the workers' lock */
};

static struct shared *sh;
static pthread_mutex_t *lock;		/* work_lock, or sh->shared_lock */
static unsigned int work_ns, decoy_ns, feed_ns;
static unsigned int base_ns = 200000;	/* --hold-us */
static sem_t tokens, room;

/* Opens with a nop: x86 uprobes refuse a first instruction with a lock
   prefix (the atomic add). */
__attribute__((noinline)) void item_done(void)
{
	__asm__ volatile("nop" ::: "memory");
	atomic_fetch_add_explicit(&sh->items, 1, memory_order_relaxed);
}

static double iterations_per_ns;

/* The shortening now, as a fraction x 1e6 (--ab, or --control's), and
   the windows' length. */
static atomic_uint ab_ppm, window_ms = 250;

/* --control: "ab FRAC" lines on stdin set it; at end-of-file the
   controller is gone, and so is the target (a test killed midway
   leaves no target running, pinned at a high priority). */
static void *control(void *arg)
{
	char line[64];
	double frac;
	unsigned int ms;

	(void)arg;
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "ab %lf", &frac) == 1 && frac >= 0 && frac < 1)
			atomic_store(&ab_ppm, (unsigned int)(frac * 1e6));
		if (sscanf(line, "window %u", &ms) == 1 && ms > 0)
			atomic_store(&window_ms, ms);
	}
	_exit(0);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void work(uint64_t iterations)
{
	for (volatile uint64_t i = 0; i < iterations; i++)
		;
}

/* The loop's speed on a CPU, by this thread's CPU clock: the fastest of
   a few tries (a cold cache or a migration only slows one down). */
static void calibrate(void)
{
	const uint64_t n = 2000000;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = thread_cpu_ns(), t1;
		double rate;

		work(n);
		t1 = thread_cpu_ns();
		rate = (double)n / (double)(t1 - t0 ? t1 - t0 : 1);
		if (rate > iterations_per_ns)
			iterations_per_ns = rate;
	}
}

static void spin_ns(uint64_t ns)
{
	work((uint64_t)((double)ns * iterations_per_ns));
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&sh->stop)) {
		unsigned int hold = atomic_load(&sh->hold_ns);
		unsigned int nap = atomic_load(&sh->sleep_ns);
		uint64_t t0, held_cpu;

		uint64_t called, got, released;

		if (feed_ns)
			sem_wait(&tokens);
		called = now_ns();
		pthread_mutex_lock(lock);
		got = now_ns();
		held_cpu = thread_cpu_ns();
		released = atomic_load(&sh->released_ns);
		if (called < released && got > released) {
			atomic_fetch_add(&sh->handoffs, 1);
			atomic_fetch_add(&sh->handoff_ns, got - released);
		}
		if (nap) {
			struct timespec ts = { nap / 1000000000u,
					       (long)(nap % 1000000000u) };

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		spin_ns(hold);
		t0 = thread_cpu_ns();
		atomic_fetch_add(&sh->hold_cpu_ns, t0 - held_cpu);
		atomic_store(&sh->released_ns, now_ns());
		pthread_mutex_unlock(lock);
		if (thread_cpu_ns() - t0 >= hold / 4)
			atomic_fetch_add(&sh->slow_unlocks, 1);
		atomic_fetch_add(&sh->unlocks, 1);
		item_done();
		if (feed_ns)
			sem_post(&room);
		spin_ns(work_ns);
	}
	return NULL;
}

static void *feeder(void *arg)
{
	(void)arg;
	while (!atomic_load(&sh->stop)) {
		sem_wait(&room);
		pthread_mutex_lock(&feed_lock);
		/* --ab shortens it as it does the workers'. */
		spin_ns((uint64_t)feed_ns * atomic_load(&sh->hold_ns) /
			base_ns);
		pthread_mutex_unlock(&feed_lock);
		sem_post(&tokens);
	}
	return NULL;
}

static void *decoy(void *arg)
{
	(void)arg;
	while (!atomic_load(&sh->stop)) {
		pthread_mutex_lock(&decoy_lock);
		sleep_us((int)(decoy_ns / 1000));
		pthread_mutex_unlock(&decoy_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 3, decoys = 0, procs = 0;
	bool controlled = false;
	pid_t kids[16];
	double seconds = 10, ab = 0;
	unsigned int nap_ns = 0;
	pthread_t t[64];
	int n = 0;

	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(k, "--control")) {
			controlled = true;
			i--;
		} else if (!strcmp(k, "--threads"))
			threads = atoi(v);
		else if (!strcmp(k, "--hold-us"))
			base_ns = (unsigned int)(atof(v) * 1000);
		else if (!strcmp(k, "--hold-sleep-us"))
			nap_ns = (unsigned int)(atof(v) * 1000);
		else if (!strcmp(k, "--work-us"))
			work_ns = (unsigned int)(atof(v) * 1000);
		else if (!strcmp(k, "--decoy-threads"))
			decoys = atoi(v);
		else if (!strcmp(k, "--decoy-hold-us"))
			decoy_ns = (unsigned int)(atof(v) * 1000);
		else if (!strcmp(k, "--feeder-us"))
			feed_ns = (unsigned int)atoi(v) * 1000;
		else if (!strcmp(k, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(k, "--window-ms"))
			atomic_store(&window_ms, (unsigned int)atoi(v));
		else if (!strcmp(k, "--ab"))
			ab = atof(v);
		else if (!strcmp(k, "--procs"))
			procs = atoi(v);
		else {
			fprintf(stderr, "whatif: unknown option %s\n", k);
			return 2;
		}
	}
	if (threads + decoys > 62 || threads < 1 || procs < 0 || procs > 16 ||
	    (feed_ns && procs))
		return 2;
	sem_init(&tokens, 0, 0);
	sem_init(&room, 0, FEED_AHEAD);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	lock = &work_lock;
	if (procs) {
		pthread_mutexattr_t attr;

		pthread_mutexattr_init(&attr);
		pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&sh->shared_lock, &attr);
		lock = &sh->shared_lock;
	}
	/* Inherited by the threads (and processes) made after. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	calibrate();
	atomic_store(&sh->hold_ns, base_ns);
	atomic_store(&sh->sleep_ns, nap_ns);
	/* Each lock taken once before the threads start (a first probe
	   hit may map its page with the address space's lock held). */
	pthread_mutex_lock(lock);
	pthread_mutex_unlock(lock);
	pthread_mutex_lock(&decoy_lock);
	pthread_mutex_unlock(&decoy_lock);
	pthread_mutex_lock(&feed_lock);
	pthread_mutex_unlock(&feed_lock);
	for (int p = 0; p < procs; p++) {
		kids[p] = fork();
		if (kids[p] < 0)
			return 1;
		if (kids[p])
			continue;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; i < threads; i++)
			pthread_create(&t[n++], NULL, worker, NULL);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	if (procs) {
		printf("lock %p\npids", (void *)lock);
		for (int p = 0; p < procs; p++)
			printf(" %d", (int)kids[p]);
		printf("\n");
		fflush(stdout);
	}
	for (int i = 0; !procs && i < threads; i++)
		pthread_create(&t[n++], NULL, worker, NULL);
	for (int i = 0; i < decoys; i++)
		pthread_create(&t[n++], NULL, decoy, NULL);
	if (feed_ns)
		pthread_create(&t[n++], NULL, feeder, NULL);
	atomic_store(&ab_ppm, (unsigned int)(ab * 1e6));
	if (controlled) {
		pthread_t c;

		pthread_create(&c, NULL, control, NULL);
		pthread_detach(c);
	}
	{
		uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
		unsigned long before = atomic_load(&sh->items);
		unsigned long unlocked = 0, slow = 0, handed = 0, handed_ns = 0;
		unsigned long held_ns = 0;
		uint64_t t0 = now_ns(), cpu0 = process_cpu_ns();
		int w = 0;

		while (now_ns() < end) {
			double frac = atomic_load(&ab_ppm) / 1e6;
			bool shorter = frac > 0 && (w & 1);
			unsigned long after;
			uint64_t t1;

			atomic_store(&sh->hold_ns, shorter ?
				     (unsigned int)(base_ns * (1 - frac)) : base_ns);
			atomic_store(&sh->sleep_ns, shorter ?
				     (unsigned int)(nap_ns * (1 - frac)) : nap_ns);
			sleep_us((int)atomic_load(&window_ms) * 1000);
			after = atomic_load(&sh->items);
			t1 = now_ns();
			printf("%s %.1f", frac > 0 ? (shorter ? "short" : "base")
						 : "rate",
			       (double)(after - before) / ((double)(t1 - t0) * 1e-9));
			{
				unsigned long u = atomic_load(&sh->unlocks);
				unsigned long sl = atomic_load(&sh->slow_unlocks);

				uint64_t cpu1 = process_cpu_ns();
				unsigned long h = atomic_load(&sh->handoffs);
				unsigned long hn = atomic_load(&sh->handoff_ns);

				unsigned long hc = atomic_load(&sh->hold_cpu_ns);

				printf(" slow %.3f ab %.2f cpu %.3f handoff %.2f %lu"
				       " holdcpu %.3f\n",
				       u > unlocked ?
				       (double)(sl - slow) / (double)(u - unlocked) : 0.0,
				       frac, (double)(cpu1 - cpu0) /
					     (double)(t1 - t0),
				       h > handed ? (double)(hn - handed_ns) /
						    (double)(h - handed) / 1e3 : 0.0,
				       h - handed, cpu1 > cpu0 ?
				       (double)(hc - held_ns) /
				       (double)(cpu1 - cpu0) : 0.0);
				held_ns = hc;
				handed = h;
				handed_ns = hn;
				cpu0 = cpu1;
				unlocked = u;
				slow = sl;
			}
			fflush(stdout);
			before = after;
			t0 = t1;
			w++;
		}
	}
	atomic_store(&sh->stop, true);
	/* Whoever waits for a token or for room sees the stop. */
	for (int i = 0; feed_ns && i <= threads; i++) {
		sem_post(&tokens);
		sem_post(&room);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int p = 0; p < procs; p++)
		waitpid(kids[p], NULL, 0);
	return 0;
}
