// SPDX-License-Identifier: GPL-2.0
#include "locktype.h"

static const char *const type_names[SP_TYPE__COUNT] = {
	[SP_TYPE_MUTEX] = "mutex",
	[SP_TYPE_REC_MUTEX] = "rec_mutex",
	[SP_TYPE_CONDVAR] = "condvar",
	[SP_TYPE_RWLOCK_R] = "rwlock-r",
	[SP_TYPE_RWLOCK_W] = "rwlock-w",
	[SP_TYPE_SEM] = "sem",
	[SP_TYPE_LIBC_LOCK] = "libc-lock",
	[SP_TYPE_FUTEX] = "futex",
	[SP_TYPE_BARRIER] = "barrier",
	[SP_TYPE_SPINLOCK] = "spinlock",
	[SP_TYPE_JOIN] = "join",
	[SP_TYPE_PARK] = "park",
	[SP_TYPE_POLL] = "poll",
	[SP_TYPE_IO] = "io",
	[SP_TYPE_SLEEP] = "sleep",
	[SP_TYPE_CHILD] = "child",
	[SP_TYPE_FLOCK] = "flock",
	[SP_TYPE_SYSCALL] = "syscall",
	[SP_TYPE_FAULT] = "fault",
};

const char *locktype__name(uint32_t type)
{
	return type < SP_TYPE__COUNT ? type_names[type] : "unknown";
}

/*
 * Waiting for something to happen, not for a lock someone holds: a
 * condvar's wait for its signal (taking its mutex back is a mutex row),
 * joins, barriers, a runtime's park, and the off-CPU sleeps but those
 * that wait for a lock (flock, System V semaphores: flock and sem rows).
 * Everything else, unknown types too, waits for a lock.
 */
enum lock_class locktype__class_of(uint32_t type)
{
	switch (type) {
	case SP_TYPE_CONDVAR:
	case SP_TYPE_JOIN:
	case SP_TYPE_BARRIER:
	case SP_TYPE_PARK:
	case SP_TYPE_POLL:
	case SP_TYPE_IO:
	case SP_TYPE_SLEEP:
	case SP_TYPE_CHILD:
	case SP_TYPE_SYSCALL:
	case SP_TYPE_FAULT:
		return LOCK_CLASS_EVENT;
	default:
		return LOCK_CLASS_LOCK;
	}
}

const char *locktype__class_name(enum lock_class c)
{
	static const char *const names[LOCK_CLASS__COUNT] = {
		[LOCK_CLASS_LOCK] = "lock",
		[LOCK_CLASS_EVENT] = "event",
	};

	return c < LOCK_CLASS__COUNT ? names[c] : "unknown";
}

const char *locktype__class(uint32_t type)
{
	return locktype__class_name(locktype__class_of(type));
}
