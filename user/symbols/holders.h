/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Locks a runtime allocates for the user: a GLib GRWLock (and GRecMutex)
 * is a named variable whose first word points to a pthread lock on
 * GLib's heap, which is what the kernel sees waited on.  The table maps
 * such heap pointers back to the named variables that hold them.
 */
#ifndef SYNCPROF_HOLDERS_H
#define SYNCPROF_HOLDERS_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/types.h>

struct holders;

/*
 * Reads the first word of every data symbol of 8 to 64 bytes in the
 * modules of dwfl, from the live process pid.
 */
int holders__build(Dwfl *dwfl, pid_t pid, struct holders **out);
void holders__free(struct holders *h);
/* The (demangled) name of a variable whose first word is addr, or NULL. */
const char *holders__find(const struct holders *h, uint64_t addr);

#endif
