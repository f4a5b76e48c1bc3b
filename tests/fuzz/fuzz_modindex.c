// SPDX-License-Identifier: GPL-2.0
/*
 * modindex: the symbol and DWARF function index over one libdwfl module,
 * here an ELF file reported offline (relocatable objects included).
 *
 * Beyond memory safety: every symbol the index keeps is found at its
 * own address, at offset 0; scope lookups hand back DIEs that libdw can
 * read.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "modindex.h"

#define MAX_LOOKUPS 128

static void lookup(const struct modindex *idx, GElf_Addr addr)
{
	Dwarf_Die *scopes = NULL;
	GElf_Off offset;
	int type, n;

	modindex__symbol(idx, addr, &offset, &type);
	n = modindex__scopes(idx, addr, &scopes);
	for (int i = 0; i < n; i++) {
		dwarf_tag(&scopes[i]);
		dwarf_diename(&scopes[i]);
	}
	free(scopes);
}

/* A symbol modindex__build keeps (modindex.c, index_symbols). */
static bool indexed(Elf *elf, const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && modindex__name_ends(elf, name) && *name &&
	       sym->st_shndx != SHN_UNDEF &&
	       (type == STT_FUNC || type == STT_OBJECT);
}

static void check_module(Dwfl_Module *mod, const struct modindex *idx)
{
	int n = dwfl_module_getsymtab(mod), done = 0;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	for (int i = 0; i < n && done < MAX_LOOKUPS; i++, done++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Off offset;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, &elf, NULL);
		int type;

		if (indexed(elf, name, &sym) &&
		    (!modindex__symbol(idx, addr, &offset, &type) || offset))
			abort();
		lookup(idx, addr);
		lookup(idx, addr + sym.st_size / 2);
		lookup(idx, addr + sym.st_size);
	}
	/* Each CU's first address, where its functions usually start. */
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) && done++ < MAX_LOOKUPS) {
		Dwarf_Addr low;

		if (!dwarf_lowpc(cu, &low))
			lookup(idx, low + bias);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	char *debuginfo_path = (char *)fuzz_file_dir();
	const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct modindex *idx;
	Dwfl_Module *mod;

	if (!dwfl)
		return 0;
	mod = dwfl_report_offline(dwfl, "fuzz", path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	if (mod && !modindex__build(mod, &idx)) {
		check_module(mod, idx);
		modindex__free(idx);
	}
	dwfl_end(dwfl);
	return 0;
}
