// SPDX-License-Identifier: GPL-2.0
/*
 * The system calls an off-CPU wait is typed by (docs/off-cpu.md has the
 * same table for users).  Numbers come from <sys/syscall.h>, so the table
 * is this architecture's; calls it lacks (x86-64's poll and select are
 * absent on arm64) drop out by #ifdef.
 *
 *   poll     waiting for any of several events: epoll_wait, epoll_pwait,
 *            epoll_pwait2, poll, ppoll, select, pselect6
 *   io       waiting for one file or socket: reads, writes, receives,
 *            sends, accept, connect, splice, sendfile, fsync, the AIO and
 *            io_uring waits, message queues, open (a FIFO, a slow file
 *            system)
 *   sleep    waiting for time or a signal: nanosleep, clock_nanosleep,
 *            pause, rt_sigsuspend, rt_sigtimedwait
 *   child    waiting for another process: wait4, waitid, vfork
 *   flock    waiting for a file lock someone holds: flock, fcntl
 *   sem      System V semaphores: semop, semtimedop (the lock type)
 *   syscall  any other call that slept (mmap and munmap waiting for the
 *            address space's lock, ...)
 *   fault    a page fault that waited, outside any system call
 * Skipped: the futex family (futex, futex_waitv, futex_wait), which are
 * the modes' lock waits, and exit, exit_group (a thread's last sleeps).
 */
#include <sys/syscall.h>

#include "offcalls.h"
#include "syncprof.h"

#define SKIP	SP_TYPE__COUNT	/* in the table: not an off-CPU wait */

static const struct offcall {
	long nr;
	const char *name;
	uint32_t type;
} table[] = {
#define C(name, type) { SYS_##name, #name, type }
#ifdef SYS_epoll_wait
	C(epoll_wait, SP_TYPE_POLL),
#endif
	C(epoll_pwait, SP_TYPE_POLL),
#ifdef SYS_epoll_pwait2
	C(epoll_pwait2, SP_TYPE_POLL),
#endif
#ifdef SYS_poll
	C(poll, SP_TYPE_POLL),
#endif
	C(ppoll, SP_TYPE_POLL),
#ifdef SYS_select
	C(select, SP_TYPE_POLL),
#endif
	C(pselect6, SP_TYPE_POLL),

	C(read, SP_TYPE_IO), C(readv, SP_TYPE_IO), C(pread64, SP_TYPE_IO),
	C(preadv, SP_TYPE_IO), C(preadv2, SP_TYPE_IO),
	C(write, SP_TYPE_IO), C(writev, SP_TYPE_IO), C(pwrite64, SP_TYPE_IO),
	C(pwritev, SP_TYPE_IO), C(pwritev2, SP_TYPE_IO),
	C(recvfrom, SP_TYPE_IO), C(recvmsg, SP_TYPE_IO), C(recvmmsg, SP_TYPE_IO),
	C(sendto, SP_TYPE_IO), C(sendmsg, SP_TYPE_IO), C(sendmmsg, SP_TYPE_IO),
	C(accept, SP_TYPE_IO), C(accept4, SP_TYPE_IO), C(connect, SP_TYPE_IO),
	C(splice, SP_TYPE_IO), C(tee, SP_TYPE_IO), C(vmsplice, SP_TYPE_IO),
	C(sendfile, SP_TYPE_IO), C(copy_file_range, SP_TYPE_IO),
	C(fsync, SP_TYPE_IO), C(fdatasync, SP_TYPE_IO),
	C(sync_file_range, SP_TYPE_IO), C(io_getevents, SP_TYPE_IO),
	C(io_pgetevents, SP_TYPE_IO), C(io_uring_enter, SP_TYPE_IO),
	C(mq_timedreceive, SP_TYPE_IO), C(mq_timedsend, SP_TYPE_IO),
	C(msgrcv, SP_TYPE_IO), C(msgsnd, SP_TYPE_IO),
#ifdef SYS_open
	C(open, SP_TYPE_IO),
#endif
	C(openat, SP_TYPE_IO), C(openat2, SP_TYPE_IO),

	C(nanosleep, SP_TYPE_SLEEP), C(clock_nanosleep, SP_TYPE_SLEEP),
#ifdef SYS_pause
	C(pause, SP_TYPE_SLEEP),
#endif
	C(rt_sigsuspend, SP_TYPE_SLEEP), C(rt_sigtimedwait, SP_TYPE_SLEEP),

	C(wait4, SP_TYPE_CHILD), C(waitid, SP_TYPE_CHILD),
#ifdef SYS_vfork
	C(vfork, SP_TYPE_CHILD),
#endif

	C(flock, SP_TYPE_FLOCK), C(fcntl, SP_TYPE_FLOCK),
	C(semop, SP_TYPE_SEM), C(semtimedop, SP_TYPE_SEM),

	/* Named, typed as any other call. */
	C(mmap, SP_TYPE_SYSCALL), C(munmap, SP_TYPE_SYSCALL),
	C(mprotect, SP_TYPE_SYSCALL), C(madvise, SP_TYPE_SYSCALL),
	C(brk, SP_TYPE_SYSCALL), C(mremap, SP_TYPE_SYSCALL),
	C(close, SP_TYPE_SYSCALL), C(execve, SP_TYPE_SYSCALL),
	C(clone, SP_TYPE_SYSCALL), C(clone3, SP_TYPE_SYSCALL),
	C(ioctl, SP_TYPE_SYSCALL), C(getdents64, SP_TYPE_SYSCALL),
	C(statx, SP_TYPE_SYSCALL), C(newfstatat, SP_TYPE_SYSCALL),
	C(unlinkat, SP_TYPE_SYSCALL), C(renameat2, SP_TYPE_SYSCALL),
	C(ftruncate, SP_TYPE_SYSCALL), C(fallocate, SP_TYPE_SYSCALL),
	C(sched_yield, SP_TYPE_SYSCALL), C(kill, SP_TYPE_SYSCALL),
	C(tgkill, SP_TYPE_SYSCALL), C(membarrier, SP_TYPE_SYSCALL),

	C(futex, SKIP),
#ifdef SYS_futex_waitv
	C(futex_waitv, SKIP),
#endif
#ifdef SYS_futex_wait
	C(futex_wait, SKIP), C(futex_requeue, SKIP),
#elif defined(__x86_64__)
	/* Linux 6.7's futex2 calls, newer than glibc 2.36's list. */
	{ 455, "futex_wait", SKIP }, { 456, "futex_requeue", SKIP },
#endif
	C(exit, SKIP), C(exit_group, SKIP),
#undef C
};

#define N_CALLS (sizeof(table) / sizeof(table[0]))

static const struct offcall *offcalls__find(uint64_t nr)
{
	for (size_t i = 0; i < N_CALLS; i++)
		if ((uint64_t)table[i].nr == nr)
			return &table[i];
	return NULL;
}

bool offcalls__is_offcpu(uint32_t type)
{
	return type >= SP_TYPE_POLL && type <= SP_TYPE_FAULT;
}

uint8_t offcalls__value(uint32_t nr)
{
	const struct offcall *c = offcalls__find(nr);

	if (!c || c->type == SP_TYPE_SYSCALL)
		return 0;
	if (c->type == SKIP)
		return SP_OFFCPU_SKIP;
	return (uint8_t)(c->type + 1);
}

bool offcalls__is_call_object(uint64_t object)
{
	return object < SP_OFFCPU_CALLS_MAX || object == SP_OFFCPU_FAULT_OBJECT;
}

const char *offcalls__object_name(uint64_t object)
{
	const struct offcall *c;

	if (object == SP_OFFCPU_FAULT_OBJECT)
		return "page fault";
	c = offcalls__find(object);
	return c ? c->name : NULL;
}
