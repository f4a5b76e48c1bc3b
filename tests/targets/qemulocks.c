// SPDX-License-Identifier: GPL-2.0
/*
 * A target shaped like QEMU's locking: the big lock taken through two
 * levels of wrappers (qemu_mutex_lock_iothread_impl -> qemu_mutex_lock_impl
 * -> pthread_mutex_lock, each passing the caller's __FILE__/__LINE__ as
 * QEMU's do), and a halt condvar waited on through qemu_cond_wait_impl.
 * The names are QEMU's, so syncprof's built-in list knows them.
 *
 *   qemulocks [--iters N] [--hold-us N] [--qsp] [--calls N] [--truth FILE]
 *
 * --qsp: as QEMU with `sync-profile on`: the BQL and the condvar go
 * through QSP's wrappers (qsp_bql_mutex_lock, qsp_cond_wait), which time
 * the call themselves around qemu_mutex_lock_impl and
 * qemu_cond_wait_impl, and the vCPU also takes another lock --calls
 * times, uncontended, through qsp_mutex_lock -> qemu_mutex_lock_impl
 * (path "ram", object "ram_lock").
 *
 * A holder thread takes the lock for --hold-us while the vCPU thread
 * blocks in qemu_mutex_lock_iothread() (path "bql"), then the vCPU waits
 * on the halt condvar until the holder kicks it --hold-us later (path
 * "halt"; the kick is sent after the lock is released, so the wait never
 * includes re-taking it).  Then --iters times the main thread waits in
 * qemu_event_wait (path "event", QEMU's QemuEvent: a futex of its own,
 * as the RCU thread waits for work) until the other thread sets it
 * --hold-us later.  The vCPU's own clock around each call is the
 * truth: {"pid", "objects": {"bql", "halt_cond", "event"}, "paths":
 * {NAME: {"count", "wait_ns"}}}.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "lib/targetkit.h"

typedef struct { pthread_mutex_t lock; } QemuMutex;
typedef struct { pthread_cond_t cond; } QemuCond;

static QemuMutex qemu_global_mutex = { PTHREAD_MUTEX_INITIALIZER };
static QemuCond halt_cond = { PTHREAD_COND_INITIALIZER };
static volatile int lock_calls;

__attribute__((noinline))
void qemu_mutex_lock_impl(QemuMutex *mutex, const char *file, int line)
{
	int err = pthread_mutex_lock(&mutex->lock); /* CALLSITE:mutex_lock_impl */

	if (err)
		fprintf(stderr, "%s:%d: lock failed\n", file, line);
	lock_calls++;
}

__attribute__((noinline))
void qemu_cond_wait_impl(QemuCond *cond, QemuMutex *mutex, const char *file,
			 int line)
{
	int err = pthread_cond_wait(&cond->cond, &mutex->lock);

	if (err)
		fprintf(stderr, "%s:%d: wait failed\n", file, line);
	lock_calls++;
}

/* QSP (util/qsp.c): the lock functions QEMU calls when it profiles. */
typedef void (*QemuMutexLockFunc)(QemuMutex *mutex, const char *file, int line);
static uint64_t qsp_ns, qsp_count;

__attribute__((noinline))
void qsp_mutex_lock(QemuMutex *mutex, const char *file, int line)
{
	uint64_t t0 = now_ns();

	qemu_mutex_lock_impl(mutex, file, line);
	qsp_ns += now_ns() - t0;
	qsp_count++;
}

__attribute__((noinline))
void qsp_bql_mutex_lock(QemuMutex *mutex, const char *file, int line)
{
	uint64_t t0 = now_ns();

	qemu_mutex_lock_impl(mutex, file, line);
	qsp_ns += now_ns() - t0;
	qsp_count++;
}

__attribute__((noinline))
void qsp_cond_wait(QemuCond *cond, QemuMutex *mutex, const char *file, int line)
{
	uint64_t t0 = now_ns();

	qemu_cond_wait_impl(cond, mutex, file, line);
	qsp_ns += now_ns() - t0;
	qsp_count++;
}

/* QEMU's QemuEvent (util/qemu-thread-posix.c): set, free, or free
   with waiters (busy); waiters sleep on the value itself. */
#define EV_SET 0
#define EV_FREE 1
#define EV_BUSY -1
typedef struct { atomic_int value; } QemuEvent;

static QemuEvent work_event = { EV_FREE };

__attribute__((noinline))
void qemu_event_set(QemuEvent *ev)
{
	if (atomic_exchange(&ev->value, EV_SET) == EV_BUSY)
		syscall(SYS_futex, &ev->value, FUTEX_WAKE, INT32_MAX, NULL,
			NULL, 0);
}

__attribute__((noinline))
void qemu_event_reset(QemuEvent *ev)
{
	int set = EV_SET;

	atomic_compare_exchange_strong(&ev->value, &set, EV_FREE);
}

__attribute__((noinline))
void qemu_event_wait(QemuEvent *ev)
{
	int value = atomic_load(&ev->value);

	if (value == EV_SET)
		return;
	if (value == EV_FREE &&
	    !atomic_compare_exchange_strong(&ev->value, &value, EV_BUSY) &&
	    value == EV_SET)
		return;
	while (atomic_load(&ev->value) == EV_BUSY)
		syscall(SYS_futex, &ev->value, FUTEX_WAIT, EV_BUSY, NULL,
			NULL, 0);
}

static QemuMutexLockFunc bql_mutex_lock_func = qemu_mutex_lock_impl;
static QemuMutexLockFunc qemu_mutex_lock_func = qemu_mutex_lock_impl;
static void (*qemu_cond_wait_func)(QemuCond *, QemuMutex *, const char *,
				   int) = qemu_cond_wait_impl;
static QemuMutex ram_lock = { PTHREAD_MUTEX_INITIALIZER };
static int ram_calls;

__attribute__((noinline))
void qemu_mutex_lock_iothread_impl(const char *file, int line)
{
	bql_mutex_lock_func(&qemu_global_mutex, file, line);
	lock_calls++;
}

static void qemu_mutex_unlock_iothread(void)
{
	pthread_mutex_unlock(&qemu_global_mutex.lock);
}

/* QEMU's unlock wrapper: a release's site is its caller's line. */
__attribute__((noinline))
void qemu_mutex_unlock_impl(QemuMutex *mutex, const char *file, int line)
{
	(void)file;
	(void)line;
	if (pthread_mutex_unlock(&mutex->lock))
		abort();
}

#define qemu_mutex_lock_iothread() \
	qemu_mutex_lock_iothread_impl(__FILE__, __LINE__)
#define qemu_cond_wait(c, m) qemu_cond_wait_func(c, m, __FILE__, __LINE__)
#define qemu_mutex_lock(m) qemu_mutex_lock_func(m, __FILE__, __LINE__)
#define qemu_mutex_unlock(m) qemu_mutex_unlock_impl(m, __FILE__, __LINE__)

static int iters = 20, hold_us = 3000;
static atomic_int phase;	/* 3i+1: held; 3i+2: halted; 3i+3: done */
static bool kicked;
static uint64_t bql_ns, halt_ns, bql_count, halt_count, event_ns, event_count;
static atomic_int vcpu_tid;

static void wait_phase(int value)
{
	while (atomic_load(&phase) < value)
		sleep_us(50);
}

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++) {
		pthread_mutex_lock(&qemu_global_mutex.lock);
		atomic_store(&phase, 3 * i + 1);
		wait_blocked_in_futex(atomic_load(&vcpu_tid));
		sleep_us(hold_us);
		qemu_mutex_unlock(&qemu_global_mutex); /* CALLSITE:bql_release */
		wait_phase(3 * i + 2);
		wait_blocked_in_futex(atomic_load(&vcpu_tid));
		sleep_us(hold_us);
		pthread_mutex_lock(&qemu_global_mutex.lock);
		kicked = true;
		pthread_mutex_unlock(&qemu_global_mutex.lock);
		pthread_cond_signal(&halt_cond.cond);
		wait_phase(3 * i + 3);
	}
	return NULL;
}

static void vcpu_loop(void)
{
	for (int i = 0; i < iters; i++) {
		uint64_t t0;

		wait_phase(3 * i + 1);
		sleep_us(hold_us / 10);	/* the holder has it */
		t0 = now_ns();
		qemu_mutex_lock_iothread(); /* CALLSITE:bql */
		bql_ns += now_ns() - t0;
		bql_count++;
		kicked = false;
		atomic_store(&phase, 3 * i + 2);
		t0 = now_ns();
		while (!kicked)
			qemu_cond_wait(&halt_cond, &qemu_global_mutex); /* CALLSITE:halt */
		halt_ns += now_ns() - t0;
		halt_count++;
		qemu_mutex_unlock_iothread();
		atomic_store(&phase, 3 * i + 3);
	}
	for (int i = 0; i < ram_calls; i++) {
		qemu_mutex_lock(&ram_lock); /* CALLSITE:ram */
		pthread_mutex_unlock(&ram_lock.lock);
	}
}

static atomic_int main_tid;

static void *event_setter(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++) {
		wait_blocked_in_futex(atomic_load(&main_tid));
		sleep_us(hold_us);
		qemu_event_set(&work_event);
		while (atomic_load(&work_event.value) == EV_SET)
			sleep_us(50);	/* until the waiter resets it */
	}
	return NULL;
}

static void event_loop(void)
{
	pthread_t setter;

	atomic_store(&main_tid, (int)gettid());
	pthread_create(&setter, NULL, event_setter, NULL);
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = now_ns();

		qemu_event_wait(&work_event); /* CALLSITE:event */
		event_ns += now_ns() - t0;
		event_count++;
		qemu_event_reset(&work_event);
	}
	pthread_join(setter, NULL);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "hold-us", required_argument, NULL, 'h' },
		{ "truth", required_argument, NULL, 't' },
		{ "qsp", no_argument, NULL, 'q' },
		{ "calls", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *truth = NULL;
	pthread_t thread;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'h')
			hold_us = atoi(optarg);
		else if (c == 't')
			truth = optarg;
		else if (c == 'c')
			ram_calls = atoi(optarg);
		else if (c == 'q') {
			bql_mutex_lock_func = qsp_bql_mutex_lock;
			qemu_mutex_lock_func = qsp_mutex_lock;
			qemu_cond_wait_func = qsp_cond_wait;
		} else
			return 2;
	}
	atomic_store(&vcpu_tid, (int)gettid());
	pthread_create(&thread, NULL, holder, NULL);
	vcpu_loop();
	pthread_join(thread, NULL);
	event_loop();
	if (!truth)
		return 0;
	f = fopen(truth, "w");
	if (!f)
		return 1;
	fprintf(f, "{\"pid\": %d, \"objects\": {\"bql\": \"%p\", \"halt_cond\": \"%p\", "
		"\"event\": \"%p\"}, "
		"\"paths\": {\"bql\": {\"count\": %llu, \"wait_ns\": %llu}, "
		"\"halt\": {\"count\": %llu, \"wait_ns\": %llu}, "
		"\"event\": {\"count\": %llu, \"wait_ns\": %llu}, "
		"\"ram\": {\"count\": %d}}, \"ram_lock\": \"%p\", "
		"\"qsp\": {\"count\": %llu, \"wait_ns\": %llu}}\n", (int)getpid(),
		(void *)&qemu_global_mutex, (void *)&halt_cond,
		(void *)&work_event,
		(unsigned long long)bql_count, (unsigned long long)bql_ns,
		(unsigned long long)halt_count, (unsigned long long)halt_ns,
		(unsigned long long)event_count, (unsigned long long)event_ns,
		ram_calls, (void *)&ram_lock, (unsigned long long)qsp_count,
		(unsigned long long)qsp_ns);
	return fclose(f) ? 1 : 0;
}
