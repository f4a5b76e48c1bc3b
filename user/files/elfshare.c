// SPDX-License-Identifier: GPL-2.0
/*
 * ELF files shared by identity.
 *
 * Each followed process has a libdwfl session of its own (dwflsession.c),
 * and each session opened every file its process mapped: under --all,
 * 39,802 processes in an hour left one inode of ld.so open 308 times and
 * libc 187 times, each with its own headers and tables read.  Here a
 * file is opened once, whoever maps it: the key is its device, inode,
 * size and modification time (a file rewritten in place is another
 * file), and every session gets a reference to the same libelf handle
 * (elf_begin's ELF_C_READ on a handle only counts a reference; libelf
 * reads with pread, never maps: see dwflfile.c).  The descriptor stays
 * here: libdwfl is handed the handle alone, so it never closes the file.
 *
 * A file deleted on disk (a library replaced by an upgrade, a JIT's or
 * a plugin host's temporary copy) keeps its disk space in use while it
 * is open.  Once no followed process maps it, it is read into memory
 * (libelf's ELF_C_FDREAD) and closed: names of its addresses are still
 * given, and its space is freed.  A file larger than the memory left for
 * such copies is given up instead (its users release it).
 *
 * Rejected: a key of the build ID alone (a file without one, and a
 * rebuilt file with the same, are common in development trees); one
 * shared libdwfl session for every process (libdwfl keys modules by
 * address, and each process maps a library where ASLR put it).
 *
 * The table is the process's own: libelf handles are process-wide
 * anyway, and every session, made anywhere, must find the same file.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "elfshare.h"

struct elfshare_file {
	uint64_t dev, inode, size;
	int64_t mtime_s, mtime_ns;
	int fd;			/* -1 once read into memory */
	Elf *elf;		/* the table's reference */
	size_t users;
	size_t mapped;		/* users whose process maps it now */
};

static struct elfshare_file **table;
static size_t n_table, cap_table;
/* Counted with atomics: /metrics may read them from another thread. */
static struct elfshare_stats stats;
#define COUNT(field, delta) \
	__atomic_add_fetch(&stats.field, (uint64_t)(delta), __ATOMIC_RELAXED)

static struct elfshare_file *elfshare__find(const struct stat *st)
{
	for (size_t i = 0; i < n_table; i++) {
		struct elfshare_file *f = table[i];

		if (f->dev == (uint64_t)st->st_dev &&
		    f->inode == (uint64_t)st->st_ino &&
		    f->size == (uint64_t)st->st_size &&
		    f->mtime_s == (int64_t)st->st_mtim.tv_sec &&
		    f->mtime_ns == (int64_t)st->st_mtim.tv_nsec)
			return f;
	}
	return NULL;
}

int elfshare__get(int fd, struct elfshare_file **out)
{
	struct elfshare_file *f;
	struct stat st;

	if (elf_version(EV_CURRENT) == EV_NONE || fstat(fd, &st)) {
		close(fd);
		return -EINVAL;
	}
	f = elfshare__find(&st);
	if (f) {
		close(fd);
		f->users++;
		COUNT(shared, 1);
		*out = f;
		return 0;
	}
	if (array__grow(&table, &cap_table, n_table + 1, sizeof(*table)) ||
	    !(f = calloc(1, sizeof(*f)))) {
		close(fd);
		return -ENOMEM;
	}
	*f = (struct elfshare_file){
		.dev = (uint64_t)st.st_dev, .inode = (uint64_t)st.st_ino,
		.size = (uint64_t)st.st_size,
		.mtime_s = (int64_t)st.st_mtim.tv_sec,
		.mtime_ns = (int64_t)st.st_mtim.tv_nsec,
		.fd = fd, .users = 1,
	};
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		if (f->elf)
			elf_end(f->elf);
		close(fd);
		free(f);
		return -ENOEXEC;
	}
	table[n_table++] = f;
	COUNT(files, 1);
	COUNT(open_files, 1);
	*out = f;
	return 0;
}

void elfshare__put(struct elfshare_file *f)
{
	if (!f || --f->users)
		return;
	for (size_t i = 0; i < n_table; i++) {
		if (table[i] == f) {
			table[i] = table[--n_table];
			break;
		}
	}
	elf_end(f->elf);
	COUNT(files, -1);
	if (f->fd >= 0) {
		close(f->fd);
		COUNT(open_files, -1);
	} else {
		COUNT(memory_bytes, -f->size);
	}
	free(f);
}

Elf *elfshare__elf(struct elfshare_file *f)
{
	return elf_begin(f->fd, ELF_C_READ, f->elf);
}

uint64_t elfshare__size(const struct elfshare_file *f)
{
	return f->size;
}

bool elfshare__shrank(const struct elfshare_file *f, uint64_t *now)
{
	struct stat st;

	if (f->fd < 0 || fstat(f->fd, &st))
		return false;
	*now = (uint64_t)st.st_size;
	return *now < f->size;
}

void elfshare__mapped(struct elfshare_file *f, int delta)
{
	if (delta > 0)
		f->mapped++;
	else if (f->mapped)
		f->mapped--;
}

int elfshare__release_deleted(struct elfshare_file *f, uint64_t max_bytes)
{
	struct stat st;

	if (f->fd < 0 || f->mapped || fstat(f->fd, &st) || st.st_nlink)
		return 0;
	/* ELF_C_FDREAD reads it whole and lets go of the descriptor. */
	if (stats.memory_bytes + f->size > max_bytes ||
	    elf_cntl(f->elf, ELF_C_FDREAD))
		return -EFBIG;
	close(f->fd);
	f->fd = -1;
	COUNT(open_files, -1);
	COUNT(memory_bytes, f->size);
	return 0;
}

void elfshare__stats(struct elfshare_stats *out)
{
	out->files = __atomic_load_n(&stats.files, __ATOMIC_RELAXED);
	out->open_files = __atomic_load_n(&stats.open_files, __ATOMIC_RELAXED);
	out->memory_bytes = __atomic_load_n(&stats.memory_bytes,
					    __ATOMIC_RELAXED);
	out->shared = __atomic_load_n(&stats.shared, __ATOMIC_RELAXED);
}
