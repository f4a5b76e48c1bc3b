/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF files handed to libdwfl without mapping the target's file: a file
 * the target can truncate, mapped by syncprof, kills syncprof with SIGBUS
 * when a page past the new end is read.
 */
#ifndef SYNCPROF_DWFLFILE_H
#define SYNCPROF_DWFLFILE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwflfile;

/*
 * The ELF file open at fd (taken over, closed on failure), read with
 * pread (libelf's ELF_C_READ), as a process maps it at base (its lowest
 * mapping's start - offset).  file_name: the name libdwfl searches debug
 * links by.  -ENOEXEC: no ELF, or no loadable segment.
 */
int dwflfile__open(int fd, uint64_t base, const char *file_name,
		   struct dwflfile **out);
/*
 * Reports f's module as dwfl_report_elf(dwfl, name, file_name, fd, base,
 * true) does, without handing f over: the caller keeps it for libdwfl's
 * find_elf callback (dwflfile__hand_over), which libdwfl calls when it
 * first needs the file.  NULL on failure (dwfl_errmsg).
 */
Dwfl_Module *dwflfile__report(const struct dwflfile *f, Dwfl *dwfl,
			      const char *name);
/*
 * For Dwfl_Callbacks.find_elf: hands f's descriptor, Elf and name over to
 * libdwfl (f is freed).  The descriptor, or -1 when f is NULL.
 */
int dwflfile__hand_over(struct dwflfile *f, char **file_name, Elf **elfp);
void dwflfile__free(struct dwflfile *f);
/* Its size when it was opened. */
uint64_t dwflfile__size(const struct dwflfile *f);
/*
 * Whether the file at fd (a descriptor libdwfl holds) is now shorter
 * than size: sections past its end read as missing.  *now: its size.
 */
bool dwflfile__shrank(int fd, uint64_t size, uint64_t *now);
/*
 * A private copy of the file at fd (not taken over), at most max bytes,
 * in sealed memory that nobody can shrink: for the separate debug files
 * that libdwfl opens and maps itself.  A descriptor, or -errno (-EFBIG:
 * larger than max).
 */
int dwflfile__copy(int fd, size_t max);

#endif
