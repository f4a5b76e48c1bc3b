/* SPDX-License-Identifier: GPL-2.0 */
/* An ELF file on disk: its functions and how it is linked (libelf). */
#ifndef SYNCPROF_ELFIMAGE_H
#define SYNCPROF_ELFIMAGE_H

#include <stdbool.h>
#include <stdint.h>

struct elfimage;

struct elfimage_func {
	uint64_t vaddr;
	uint64_t file_offset;	/* what a uprobe is attached at */
	uint64_t size;
};

int elfimage__open(const char *path, struct elfimage **out);
void elfimage__close(struct elfimage *image);
/*
 * Looks NAME up among the defined functions, .dynsym first, then .symtab.
 * Of several versions the default one (NAME@@VER) wins.  -ENOENT if absent.
 */
int elfimage__find_func(struct elfimage *image, const char *name,
			struct elfimage_func *func);
/* Has a program interpreter, i.e. is dynamically linked. */
bool elfimage__is_dynamic(struct elfimage *image);

#endif
