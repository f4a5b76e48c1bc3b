/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording in uftrace's data format (file version 4, as uftrace 0.13
 * reads it): `uftrace replay|report|tui|dump|info -d DIR`.  Each wait is
 * a function span on its thread whose symbol is the wait's label
 * (recnames.h); waits lost to a full ring are a LOST record inside a
 * "(waits lost)" span, where they were lost.
 */
#ifndef SYNCPROF_UFTRACE_H
#define SYNCPROF_UFTRACE_H

#include <stdint.h>

#include "evlog.h"
#include "recmeta.h"
#include "recnames.h"

/* uftrace's record types (struct uftrace_record's 2-bit type). */
enum uftrace_rec_type {
	UFTRACE_REC_ENTRY = 0,
	UFTRACE_REC_EXIT = 1,
	UFTRACE_REC_LOST = 2,
};

/*
 * The spans' fake module: mapped where no user address can be (above
 * x86-64's 47-bit user space, inside the 48 bits a record holds), one
 * 16-byte slot per symbol.
 */
#define UFTRACE_SPAN_BASE	UINT64_C(0xa00000000000)
#define UFTRACE_SPAN_MODULE	"syncprof-waits"
#define UFTRACE_LOST_LABEL	"(waits lost)"

/*
 * The second word of a record: type:2, more:1, magic:3 (5), depth:10,
 * addr:48, from the low bits up.
 */
uint64_t uftrace__record_word(enum uftrace_rec_type type, unsigned int depth,
			      uint64_t addr);
/* The address of span i's symbol (i = -1: the lost-waits symbol). */
uint64_t uftrace__span_addr(long span);
/*
 * Writes DIR's uftrace files (info, task.txt, sid-*.map, the symbol file,
 * one TID.dat per thread) from the event log.  DIR exists and holds no
 * older uftrace files.
 */
int uftrace__export(const char *dir, const struct recmeta *meta,
		    struct recnames *names, struct evlog_reader *events);

#endif
