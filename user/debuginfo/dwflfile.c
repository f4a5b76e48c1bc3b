// SPDX-License-Identifier: GPL-2.0
/*
 * The files libdwfl reads, never mapped from the target's file.
 *
 * libdwfl maps every file it opens itself (elf_begin with
 * ELF_C_READ_MMAP_PRIVATE, in dwfl_report_elf and for the separate debug
 * file a find_debuginfo callback returns), and so did syncprof's own
 * readers (ELF_C_READ_MMAP): a target that truncates a library it mapped,
 * or the debug file beside it, while syncprof holds the mapping killed
 * syncprof with SIGBUS at the next read of a page past the new end (the
 * kernel takes every page past it out of every mapping, private ones
 * too).  Here:
 *   - a module's own file is opened with ELF_C_READ (headers now, each
 *     section read with pread when first asked for: a short read is a
 *     libelf error, not a signal) and reported with dwfl_report_module
 *     at the range dwfl_report_elf would compute; libdwfl gets a
 *     reference to the Elf through the find_elf callback, which it takes
 *     as it is, and no descriptor: the file is elfshare.c's, one for
 *     every session that maps it;
 *   - a separate debug file, which libdwfl opens and maps itself from the
 *     descriptor it is given, is given as a copy in sealed memory
 *     (memfd, F_SEAL_SHRINK | F_SEAL_WRITE): nobody can shrink it.
 * Rejected: catching SIGBUS and mapping zeros over the faulting page
 * (every SIGBUS would look like a truncated file, and sanitizers own the
 * handler); copying every module into memory (libLLVM is 117 MB, of
 * which a few symbols are read); checking the size before each read
 * (the file can shrink between the check and the read).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwflfile.h"
#include "elfshare.h"

struct dwflfile {
	Elf *elf;		/* a reference to the shared handle */
	char *file_name;
	uint64_t start, end;	/* the module's range in the process */
};

void dwflfile__free(struct dwflfile *f)
{
	if (!f)
		return;
	if (f->elf)
		elf_end(f->elf);
	free(f->file_name);
	free(f);
}

/*
 * The range dwfl_report_elf(..., base, add_p_vaddr = true) gives the
 * module: from the first PT_LOAD's page to the last one's end, moved by
 * base; an ET_EXEC file sits where it says (base 0).
 */
static int dwflfile__span(struct dwflfile *f, uint64_t base)
{
	GElf_Ehdr ehdr;
	bool first = true;
	size_t n;

	if (!gelf_getehdr(f->elf, &ehdr) || ehdr.e_type == ET_REL ||
	    elf_getphdrnum(f->elf, &n))
		return -ENOEXEC;
	if (ehdr.e_type != ET_DYN)
		base = 0;
	f->start = f->end = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		if (first)
			f->start = base + (ph.p_vaddr & -ph.p_align);
		first = false;
		if (ph.p_vaddr + ph.p_memsz > 0)
			f->end = base + ph.p_vaddr + ph.p_memsz;
	}
	return f->end > f->start ? 0 : -ENOEXEC;
}

int dwflfile__open(struct elfshare_file *file, uint64_t base,
		   const char *file_name, struct dwflfile **out)
{
	struct dwflfile *f;
	int err;

	if (!(f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	f->file_name = strdup(file_name);
	f->elf = elfshare__elf(file);
	if (!f->file_name)
		err = -ENOMEM;
	else if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
		err = -ENOEXEC;
	else
		err = dwflfile__span(f, base);
	if (err) {
		dwflfile__free(f);
		return err;
	}
	*out = f;
	return 0;
}

Dwfl_Module *dwflfile__report(const struct dwflfile *f, Dwfl *dwfl,
			      const char *name)
{
	return dwfl_report_module(dwfl, name, f->start, f->end);
}

int dwflfile__hand_over(struct dwflfile *f, char **file_name, Elf **elfp)
{
	if (!f)
		return -1;
	*elfp = f->elf;
	*file_name = f->file_name;
	free(f);
	/* No descriptor: the file stays elfshare.c's, libdwfl never closes it. */
	return -1;
}

int dwflfile__copy(int fd, size_t max)
{
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
	struct stat st;
	off_t at = 0;
	int copy, err = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	copy = memfd_create("syncprof-debug", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (copy < 0)
		return -errno;
	/* A file that shrinks meanwhile leaves a shorter copy: still whole. */
	while (at < st.st_size) {
		ssize_t n = sendfile(copy, fd, &at, (size_t)(st.st_size - at));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
	}
	if (!err && fcntl(copy, F_ADD_SEALS, seals))
		err = -errno;
	if (!err && lseek(copy, 0, SEEK_SET))
		err = -errno;
	if (err) {
		close(copy);
		return err;
	}
	return copy;
}
