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
#include "outfile.h"
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
 * A recording's uftrace files, kept current while it records: waits are
 * added as they are read from the event log; each sync writes their
 * records to the TID.dat files, then puts info, task.txt, sid-SID.map and
 * the symbol file in place, whole, for the waits written so far.  Spans
 * are numbered as they first appear, so what one sync wrote keeps its
 * name at the next: a recording cut short (SIGKILL) reads up to its last
 * sync.
 */
struct uftrace_writer;

int uftrace__writer_new(struct outdir *dir, uint64_t sid,
			struct uftrace_writer **out);
/* One event's records, buffered.  0 or the first error. */
int uftrace__writer_add(struct uftrace_writer *w, const struct sp_wait_event *e);
/* names: every span added so far, named (labels). */
int uftrace__writer_sync(struct uftrace_writer *w, const struct recmeta *meta,
			 struct recnames *names);
/* Closes the TID.dat files; the first error. */
int uftrace__writer_free(struct uftrace_writer *w);

/*
 * Writes DIR's uftrace files from the event log at once (new, add, sync,
 * free).  DIR holds no older uftrace files.
 */
int uftrace__export(struct outdir *dir, const struct recmeta *meta,
		    struct recnames *names, struct evlog_reader *events);

#endif
