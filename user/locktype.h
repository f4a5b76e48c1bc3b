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
/* "lock" or "event" (JSON class): what the row's threads wait for. */
const char *locktype__class(uint32_t type);

#endif
