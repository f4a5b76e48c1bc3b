// SPDX-License-Identifier: GPL-2.0
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfimage.h"
#include "targetfile.h"

#define VERSYM_HIDDEN 0x8000

struct elfimage {
	int fd;
	Elf *elf;
};

int elfimage__open(const char *path, struct elfimage **out)
{
	struct elfimage *image;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	image = calloc(1, sizeof(*image));
	if (!image)
		return -ENOMEM;
	err = targetfile__open(path, 0, &image->fd);
	if (err) {
		free(image);
		return err;
	}
	image->elf = elf_begin(image->fd, ELF_C_READ, NULL);
	if (!image->elf || elf_kind(image->elf) != ELF_K_ELF) {
		elfimage__close(image);
		return -ENOEXEC;
	}
	*out = image;
	return 0;
}

void elfimage__close(struct elfimage *image)
{
	if (!image)
		return;
	if (image->elf)
		elf_end(image->elf);
	if (image->fd >= 0)
		close(image->fd);
	free(image);
}

static int elfimage__vaddr_to_offset(struct elfimage *image, uint64_t vaddr,
				     uint64_t *offset)
{
	size_t n;

	if (elf_getphdrnum(image->elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(image->elf, (int)i, &phdr) ||
		    phdr.p_type != PT_LOAD)
			continue;
		if (vaddr >= phdr.p_vaddr && vaddr < phdr.p_vaddr + phdr.p_memsz) {
			*offset = vaddr - phdr.p_vaddr + phdr.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static Elf_Scn *elfimage__section(struct elfimage *image, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(image->elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return scn;
	}
	return NULL;
}

/* Best match for NAME in one symbol table: 1 found, 0 not. */
static int elfimage__search(struct elfimage *image, Elf_Scn *symtab,
			    Elf_Data *versym, const char *name, int type,
			    GElf_Sym *best)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	bool found = false, found_default = false;
	size_t name_len = strlen(name);

	if (!gelf_getshdr(symtab, &shdr) || !shdr.sh_entsize)
		return 0;
	data = elf_getdata(symtab, NULL);
	if (!data)
		return 0;
	for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		GElf_Sym sym;
		GElf_Versym ver = 0;
		const char *sym_name;
		bool is_default;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != type ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		sym_name = elf_strptr(image->elf, shdr.sh_link, sym.st_name);
		if (!sym_name || strncmp(sym_name, name, name_len))
			continue;
		/* .symtab spells versions into the name: NAME@VER, NAME@@VER. */
		if (sym_name[name_len] == '\0')
			is_default = true;
		else if (sym_name[name_len] == '@')
			is_default = sym_name[name_len + 1] == '@';
		else
			continue;
		if (versym && gelf_getversym(versym, (int)i, &ver) &&
		    (ver & VERSYM_HIDDEN))
			is_default = false;
		if (!found || (is_default && !found_default)) {
			*best = sym;
			found = true;
			found_default = is_default;
		}
	}
	return found;
}

/* NAME among the defined symbols of one type, .dynsym first (an
   object's file_offset: 0). */
static int elfimage__find(struct elfimage *image, const char *name, int type,
			  struct elfimage_func *func)
{
	Elf_Scn *dynsym = elfimage__section(image, SHT_DYNSYM);
	Elf_Scn *symtab = elfimage__section(image, SHT_SYMTAB);
	Elf_Scn *versym_scn = elfimage__section(image, SHT_GNU_versym);
	Elf_Data *versym = versym_scn ? elf_getdata(versym_scn, NULL) : NULL;
	GElf_Sym sym;
	int found = 0;

	if (dynsym)
		found = elfimage__search(image, dynsym, versym, name, type,
					 &sym);
	if (!found && symtab)
		found = elfimage__search(image, symtab, NULL, name, type, &sym);
	if (!found)
		return -ENOENT;
	func->vaddr = sym.st_value;
	func->size = sym.st_size;
	func->file_offset = 0;
	/* Data in .bss has no bytes in the file. */
	if (type == STT_OBJECT)
		return 0;
	return elfimage__vaddr_to_offset(image, sym.st_value, &func->file_offset);
}

int elfimage__find_func(struct elfimage *image, const char *name,
			struct elfimage_func *func)
{
	return elfimage__find(image, name, STT_FUNC, func);
}

int elfimage__find_object(struct elfimage *image, const char *name,
			  struct elfimage_func *object)
{
	return elfimage__find(image, name, STT_OBJECT, object);
}

bool elfimage__is_dynamic(struct elfimage *image)
{
	size_t n;

	if (elf_getphdrnum(image->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(image->elf, (int)i, &phdr) &&
		    phdr.p_type == PT_INTERP)
			return true;
	}
	return false;
}

/* Defined functions of one symbol table, to fn. */
static int elfimage__each_func_in(struct elfimage *image, Elf_Scn *table,
				  int (*fn)(void *ctx, const char *name,
					    uint64_t vaddr, uint64_t size),
				  void *ctx)
{
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!table || !gelf_getshdr(table, &shdr) || !shdr.sh_entsize)
		return -ENOENT;
	data = elf_getdata(table, NULL);
	if (!data)
		return -ENOENT;
	for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		const char *name;
		GElf_Sym sym;
		int ret;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(image->elf, shdr.sh_link, sym.st_name);
		if (!name)
			continue;
		ret = fn(ctx, name, sym.st_value, sym.st_size);
		if (ret)
			return ret;
	}
	return 0;
}

int elfimage__for_each_dynfunc(struct elfimage *image,
			       int (*fn)(void *ctx, const char *name,
					 uint64_t vaddr, uint64_t size),
			       void *ctx)
{
	return elfimage__each_func_in(image,
				      elfimage__section(image, SHT_DYNSYM),
				      fn, ctx);
}

int elfimage__for_each_func(struct elfimage *image,
			    int (*fn)(void *ctx, const char *name,
				      uint64_t vaddr, uint64_t size),
			    void *ctx)
{
	Elf_Scn *symtab = elfimage__section(image, SHT_SYMTAB);

	return elfimage__each_func_in(image, symtab ? symtab :
				      elfimage__section(image, SHT_DYNSYM),
				      fn, ctx);
}

Elf *elfimage__elf(struct elfimage *image)
{
	return image->elf;
}

int elfimage__loads(struct elfimage *image, struct elfimage_load **out,
		    size_t *n_out)
{
	struct elfimage_load *loads;
	size_t n, m = 0;

	if (elf_getphdrnum(image->elf, &n))
		return -ENOEXEC;
	loads = calloc(n ? n : 1, sizeof(*loads));
	if (!loads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;
		uint64_t align;

		if (!gelf_getphdr(image->elf, (int)i, &phdr) ||
		    phdr.p_type != PT_LOAD || !phdr.p_filesz)
			continue;
		/* The kernel maps from the page holding p_offset. */
		align = phdr.p_align > 1 ?
			(phdr.p_align < 4096 ? phdr.p_align : 4096) - 1 : 0;
		loads[m++] = (struct elfimage_load){
			.map_from = phdr.p_offset & ~align,
			.file_end = phdr.p_offset + phdr.p_filesz,
			.delta = phdr.p_vaddr - phdr.p_offset,
		};
	}
	*out = loads;
	*n_out = m;
	return 0;
}

int elfimage__bias_from(const struct elfimage_load *loads, size_t n,
			uint64_t map_start, uint64_t map_offset,
			uint64_t *bias)
{
	for (size_t i = 0; i < n; i++) {
		if (map_offset < loads[i].map_from ||
		    map_offset >= loads[i].file_end)
			continue;
		*bias = map_start - map_offset - loads[i].delta;
		return 0;
	}
	return -ENOENT;
}

int elfimage__load_bias(struct elfimage *image, uint64_t map_start,
			uint64_t map_offset, uint64_t *bias)
{
	struct elfimage_load *loads;
	size_t n;
	int err = elfimage__loads(image, &loads, &n);

	if (err)
		return err;
	err = elfimage__bias_from(loads, n, map_start, map_offset, bias);
	free(loads);
	return err;
}

int elfimage__build_id(struct elfimage *image, uint8_t *buf, size_t len)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(image->elf, &id);

	if (n <= 0)
		return -ENOENT;
	if ((size_t)n > len)
		n = (ssize_t)len;
	memcpy(buf, id, (size_t)n);
	return (int)n;
}

int elfimage__file_offset(struct elfimage *image, uint64_t vaddr,
			  uint64_t *offset)
{
	return elfimage__vaddr_to_offset(image, vaddr, offset);
}
