// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer's ELF and DWARF paths: an ELF file, as if a process had
 * mapped it, named through libdwfl, the module index, the line table and
 * the inline chain (symbolizer__new_file; no process is read), and the
 * frames of the inline chain (symbolizer__frames), and the call-site
 * records heap locks are named by.  The addresses asked
 * for are the file's own symbols: their starts, as return addresses and
 * as objects, and their middles.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "symbolizer.h"

#define BASE 0x7f1200000000ull
#define MAX_LOOKUPS 64

/*
 * At least one frame, all in the module the address is in, every one
 * but the last inlined into the next; asked again, the same frames.
 */
static void frames(struct symbolizer *sym, const char *path, uint64_t addr,
		   bool is_return_address)
{
	const struct symbol_frame *f, *again;
	size_t n, n_again;
	int err = symbolizer__frames(sym, addr, is_return_address, &f, &n);

	if (err && err != -ENOENT)
		abort();
	if (!f || !n)
		abort();
	if (err)
		return;
	for (size_t i = 0; i < n; i++)
		if (!f[i].info.module || strcmp(f[i].info.module, path) ||
		    f[i].inlined != (i + 1 < n))
			abort();
	if (symbolizer__frames(sym, addr, is_return_address, &again, &n_again) ||
	    again != f || n_again != n)
		abort();
}

static void name(struct symbolizer *sym, const char *path, uint64_t addr)
{
	struct symbol_info info;
	int err = symbolizer__callsite(sym, addr, &info);

	if (err && err != -ENOENT)
		abort();
	if (!err && (!info.module || strcmp(info.module, path)))
		abort();
	/* Cached: the same answer. */
	if (!err) {
		struct symbol_info again;

		if (symbolizer__callsite(sym, addr, &again) ||
		    again.module != info.module || again.function != info.function ||
		    again.file != info.file || again.line != info.line ||
		    again.module_offset != info.module_offset ||
		    again.function_offset != info.function_offset)
			abort();
	}
	symbolizer__object(sym, addr);
	/* A lock argument by its type (callarg.c): any answer, never a crash. */
	symbolizer__argument_lock(sym, addr, false);
	symbolizer__argument_lock(sym, addr, true);
	frames(sym, path, addr, true);
	frames(sym, path, addr, false);
}

/* Symbol values from .symtab and .dynsym, read with libelf. */
static size_t symbol_addresses(const uint8_t *data, size_t size,
			       uint64_t *out, size_t max)
{
	char *copy = malloc(size);
	Elf_Scn *scn = NULL;
	size_t n = 0;
	Elf *elf;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	while (elf && n < max && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &shdr) || !shdr.sh_entsize ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && n < max; i++) {
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(s.st_info) != STT_OBJECT))
				continue;
			out[n++] = s.st_value;
			if (n < max && s.st_size > 2)
				out[n++] = s.st_value + s.st_size / 2;
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addrs[MAX_LOOKUPS];
	const char *path = fuzz_file(data, size);
	struct symbolizer *sym;
	size_t n;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	n = symbol_addresses(data, size, addrs, MAX_LOOKUPS);
	if (symbolizer__new_file(path, BASE, fuzz_file_dir(), &sym))
		return 0;
	for (size_t i = 0; i < n; i++) {
		name(sym, path, BASE + addrs[i] + 1);	/* a return address */
		name(sym, path, addrs[i] + 1);		/* ET_EXEC: not moved */
	}
	symbolizer__free(sym);
	return 0;
}
