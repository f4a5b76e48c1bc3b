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
struct elfshare_file;

/*
 * The shared ELF file (elfshare.h; not taken over) as a process maps it
 * at base (its lowest mapping's start - offset), with a reference of its
 * own to the file's libelf handle (read with pread: ELF_C_READ).
 * file_name: the name libdwfl searches debug links by.  -ENOEXEC: no
 * ELF, or no loadable segment.
 */
int dwflfile__open(struct elfshare_file *file, uint64_t base,
		   const char *file_name, struct dwflfile **out);
/*
 * Reports f's module as dwfl_report_elf(dwfl, name, file_name, fd, base,
 * true) does, without handing f over: the caller keeps it for libdwfl's
 * find_elf callback (dwflfile__hand_over), which libdwfl calls when it
 * first needs the file.  NULL on failure (dwfl_errmsg).
 */
Dwfl_Module *dwflfile__report(const struct dwflfile *f, Dwfl *dwfl,
			      const char *name);
/*
 * For Dwfl_Callbacks.find_elf: hands f's Elf reference and name over to
 * libdwfl (f is freed).  Always -1, no descriptor: the file's stays with
 * elfshare.c, and libdwfl reads through the handle.
 */
int dwflfile__hand_over(struct dwflfile *f, char **file_name, Elf **elfp);
void dwflfile__free(struct dwflfile *f);
/*
 * A private copy of the file at fd (not taken over), at most max bytes,
 * in sealed memory that nobody can shrink: for the separate debug files
 * that libdwfl opens and maps itself.  A descriptor, or -errno (-EFBIG:
 * larger than max).
 */
int dwflfile__copy(int fd, size_t max);

#endif
