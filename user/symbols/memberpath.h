/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The name of a byte inside a variable, from its DWARF type, as the
 * program's source spells it: "stats.lock", "table[3].mu", "a.b.c".
 */
#ifndef SYNCPROF_MEMBERPATH_H
#define SYNCPROF_MEMBERPATH_H

#include <stdint.h>
#include <elfutils/libdw.h>

/*
 * base (the variable's name) followed by the path of the member that
 * holds the byte at offset in a variable of DWARF type `type`.  The walk
 * stops at the outermost lock type (pthread_mutex_t, pthread_cond_t,
 * std::mutex, GMutex, ...: a condvar's futex word names the condvar),
 * at a member or type whose name is reserved to the implementation
 * ("__data", "_M_i", "__rtld_lock_recursive_t"), and at a scalar; an offset left inside a scalar or in padding
 * is added as "+0xN".  *out is malloc'ed.  0; -ENOENT: offset is not
 * inside the type; -ENOMEM.
 */
int memberpath__name(Dwarf_Die *type, uint64_t offset, const char *base,
		     char **out);
/*
 * As memberpath__name, for a byte that must lie in a lock: 0 only when
 * the walk ends at a lock type (*lock: its name, "pthread_mutex_t",
 * "pthread_cond_t", "mutex"...; the type's DWARF string).  -ENOENT: the
 * byte is in no lock, or outside the type; -ENOMEM.
 */
int memberpath__lock(Dwarf_Die *type, uint64_t offset, const char *base,
		     const char **lock, char **out);
/*
 * The other way: where the member path (".not_empty", "[3].lock",
 * ".in.pair[1]"; what follows the variable's name) lies in a variable
 * of DWARF type `type`: *offset and *size in bytes.  0; -ENOENT: no
 * such member or element, or a path that does not parse.
 */
int memberpath__find(Dwarf_Die *type, const char *path, uint64_t *offset,
		     uint64_t *size);

#endif
