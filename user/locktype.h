/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock types (enum sp_lock_type, bpf/syncprof.h) by name, as reports
 * print them and --type takes them, and by class.
 */
#ifndef SYNCPROF_LOCKTYPE_H
#define SYNCPROF_LOCKTYPE_H

#include <stdint.h>

#include "syncprof.h"

/* Its name ("mutex", "rwlock-r"...), or "unknown". */
const char *locktype__name(uint32_t type);
/*
 * What a row's threads wait for: a lock someone holds, or an event (a
 * signal, a thread's end, I/O...).  Reports show the lock rows first.
 */
enum lock_class {
	LOCK_CLASS_LOCK = 0,
	LOCK_CLASS_EVENT,
	LOCK_CLASS__COUNT,
};

enum lock_class locktype__class_of(uint32_t type);
/* "lock" or "event" (JSON class), or "unknown". */
const char *locktype__class_name(enum lock_class c);
/* The class's name of a type: locktype__class_name(locktype__class_of()). */
const char *locktype__class(uint32_t type);

#endif
