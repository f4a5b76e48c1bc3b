/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a recording keeps besides its waits (syncprof.meta), so that
 * --replay prints what the live run printed: the target, the mode, and
 * each report the run printed with its window, its times and its drop
 * counts; and the threads' names.  A text file of tab-separated lines
 * (rectext.h).
 */
#ifndef SYNCPROF_RECMETA_H
#define SYNCPROF_RECMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define RECMETA_NAME	"syncprof.meta"
/*
 * Why a recording stopped before its end, when syncprof could say: a
 * file of RECMETA_STOP_SIZE bytes written (zeros) when the recording
 * starts, so that the reason (the errno, in decimal, then a newline) is
 * written over it without needing space on a full disk.  Zeros or no
 * file: not said (killed, or a recording older than the file).
 */
#define RECMETA_STOP_NAME	"syncprof.stop"
#define RECMETA_STOP_SIZE	4096
#define RECMETA_VERSION	1

/* One report the live run printed: the waits of windows [first, last]. */
struct recmeta_report {
	uint32_t sequence;
	uint32_t first_window;
	uint32_t last_window;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t dropped;
	uint64_t unwind_stopped;
	/* Saved as a "report_more" line, which older readers skip. */
	uint64_t abandoned;	/* full mode: calls left by longjmp */
	uint64_t map_full;	/* dropped, by cause (format_drops) */
	uint64_t no_storage;
	uint64_t nested;
	uint64_t skipped;
	uint64_t ring;
	/* Saved as a "report_wall" line: the window's end by the wall clock
	 * (ns since the epoch; 0: not known, a recording made before). */
	uint64_t wall_ns;
	/*
	 * Saved as a "report_findings" line (NULL: none, a recording made
	 * before): what to fix first as the table printed it, as JSON's
	 * list, and the threads' weights the rows were ordered by
	 * ("tid:weight,..."), so that a replay prints what the run did.
	 * recmeta__add_report copies them.
	 */
	char *findings_text;
	char *findings_json;
	char *weights;
};

struct recmeta_thread {
	uint32_t tid;
	char comm[16];
};

struct recmeta {
	pid_t pid;
	char *comm;
	char *exe;		/* the target's executable, NULL if unknown */
	char *mode;		/* "full" | "contended" */
	char *cmdline;		/* syncprof's own command line */
	uint64_t attach_ns;
	uint64_t end_ns;	/* when recording stopped */
	uint64_t calibration_ns;
	uint64_t calibration_emulated_ns;	/* by kind of probed site */
	uint64_t calibration_stepped_ns;
	uint32_t map_size;	/* --map-size */
	uint32_t ring_size;
	uint64_t events;	/* waits recorded */
	uint64_t lost;		/* waits lost to a full ring, marked */
	/*
	 * Not 0: written while recording (a checkpoint); the recording was
	 * cut short if it is still there (syncprof was killed).  events,
	 * lost and end_ns are the checkpoint's; the log may hold more.
	 */
	uint64_t partial;
	struct recmeta_report *reports;
	size_t n_reports, cap_reports;
	struct recmeta_thread *threads;	/* sorted by tid */
	size_t n_threads, cap_threads;
};

/* Frees what *m holds and zeroes it. */
void recmeta__clear(struct recmeta *m);
/* Copies s into *field (freeing the old value); 0 or -ENOMEM. */
int recmeta__set(char **field, const char *s);
int recmeta__add_report(struct recmeta *m, const struct recmeta_report *r);
/* Threads must come in tid order. */
int recmeta__add_thread(struct recmeta *m, uint32_t tid, const char *comm);
/* The thread's name (the main thread's: the process's), or NULL. */
const char *recmeta__thread_comm(const struct recmeta *m, uint32_t tid);
/* The file's text; write errors are the stream's (outfile.h). */
void recmeta__write(const struct recmeta *m, FILE *f);
/* -EINVAL: not a syncprof.meta this version reads. */
int recmeta__load(const char *path, struct recmeta *m);

#endif
