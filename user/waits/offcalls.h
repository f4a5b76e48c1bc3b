/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu's system calls: which type a sleep in each one is, and its
 * name (the object of an off-CPU row).  No libbpf here: the report names
 * rows with it, the loader fills the kernel's table from it.
 */
#ifndef SYNCPROF_OFFCALLS_H
#define SYNCPROF_OFFCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether type is one of the off-CPU types (SP_TYPE_POLL ... FAULT). */
bool offcalls__is_offcpu(uint32_t type);
/*
 * The kernel table's value for system call nr (see SP_OFFCPU_SKIP in
 * bpf/syncprof.h): type + 1, SP_OFFCPU_SKIP, or 0 (SP_TYPE_SYSCALL).
 */
uint8_t offcalls__value(uint32_t nr);
/*
 * Whether an object is a system call's number (or the page fault's),
 * not a lock's address: no lock lives in the first page.  An off-CPU
 * wait a runtime's lock function typed (PostgreSQL's ProcSleep) keeps
 * its system call as its object.
 */
bool offcalls__is_call_object(uint64_t object);
/*
 * The name of an off-CPU row's object: the system call's ("epoll_wait"),
 * "page fault", or NULL for a call the table does not list (the object
 * is its number).
 */
const char *offcalls__object_name(uint64_t object);

#endif
