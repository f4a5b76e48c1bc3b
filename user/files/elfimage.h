/* SPDX-License-Identifier: GPL-2.0 */
/* An ELF file on disk: its functions and how it is linked (libelf). */
#ifndef SYNCPROF_ELFIMAGE_H
#define SYNCPROF_ELFIMAGE_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

struct elfimage;

/* A PT_LOAD segment as a mapping of it sees it. */
struct elfimage_load {
	uint64_t map_from;	/* the page its mappings start at */
	uint64_t file_end;	/* p_offset + p_filesz */
	uint64_t delta;		/* p_vaddr - p_offset, kept by the mapping */
};

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
/* The same among the defined data objects (vaddr and size; no offset). */
int elfimage__find_object(struct elfimage *image, const char *name,
			  struct elfimage_func *object);
/*
 * Calls fn for each defined function of .dynsym (name without version),
 * stopping at the first non-zero return, which it returns.
 */
int elfimage__for_each_dynfunc(struct elfimage *image,
			       int (*fn)(void *ctx, const char *name,
					 uint64_t vaddr, uint64_t size),
			       void *ctx);
/*
 * Calls fn for each defined function symbol of .symtab, or of .dynsym
 * when there is no .symtab (a stripped file); names as the table spells
 * them (.symtab may append @VERSION).  Stops at the first non-zero
 * return, which it returns; -ENOENT: no symbol table.
 */
int elfimage__for_each_func(struct elfimage *image,
			    int (*fn)(void *ctx, const char *name,
				      uint64_t vaddr, uint64_t size),
			    void *ctx);
/* The open ELF handle (owned by the image), for libdw and libelf readers. */
Elf *elfimage__elf(struct elfimage *image);
/*
 * The load bias (runtime address - file virtual address) of a mapping of
 * this file that starts at map_start with file offset map_offset.
 * -ENOENT if no PT_LOAD segment holds that offset.
 */
int elfimage__load_bias(struct elfimage *image, uint64_t map_start,
			uint64_t map_offset, uint64_t *bias);
/* The PT_LOAD segments with file bytes, in a new array (*n of them). */
int elfimage__loads(struct elfimage *image, struct elfimage_load **out,
		    size_t *n);
/* elfimage__load_bias from segments read before: no file open. */
int elfimage__bias_from(const struct elfimage_load *loads, size_t n,
			uint64_t map_start, uint64_t map_offset,
			uint64_t *bias);
/* The file offset of a virtual address in a PT_LOAD segment; -ENOENT. */
int elfimage__file_offset(struct elfimage *image, uint64_t vaddr,
			  uint64_t *offset);
/* Copies the GNU build ID; its length, or -ENOENT. */
int elfimage__build_id(struct elfimage *image, uint8_t *buf, size_t len);
/* Has a program interpreter, i.e. is dynamically linked. */
bool elfimage__is_dynamic(struct elfimage *image);

#endif
