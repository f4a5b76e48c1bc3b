// SPDX-License-Identifier: GPL-2.0
/*
 * elfimage: an ELF file as syncprof reads a target's libc and programs:
 * function lookup by name (versions, .dynsym then .symtab), the load
 * bias of a mapping, file offsets, the build ID.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfimage.h"
#include "fuzz_file.h"

#define MAX_NAMES 64

struct walk {
	struct elfimage *image;
	unsigned int n;
};

/* Every .dynsym function is looked up again by its name (versions). */
static int each_dynfunc(void *ctx, const char *name, uint64_t vaddr,
			uint64_t size)
{
	struct walk *w = ctx;
	struct elfimage_func func;
	uint64_t offset;

	elfimage__find_func(w->image, name, &func);
	elfimage__file_offset(w->image, vaddr, &offset);
	elfimage__file_offset(w->image, vaddr + size, &offset);
	return ++w->n >= MAX_NAMES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"pthread_mutex_lock", "pthread_cond_wait", "sem_wait",
		"sp_cond_wait", "sp_plain", "sp_local", "main", "",
	};
	static const uint64_t offsets[] = { 0, 0x1000, 0x28000, ~0ull };
	struct elfimage *image;
	struct elfimage_func func;
	struct walk w;
	uint8_t id[64];
	uint64_t out;

	if (elfimage__open(fuzz_file(data, size), &image))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		elfimage__find_func(image, names[i], &func);
	w = (struct walk){ .image = image };
	elfimage__for_each_dynfunc(image, each_dynfunc, &w);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		elfimage__load_bias(image, 0x7f0000000000ull + offsets[i],
				    offsets[i], &out);
	if (elfimage__build_id(image, id, sizeof(id)) > (int)sizeof(id) ||
	    elfimage__build_id(image, id, 4) > 4)
		abort();
	elfimage__is_dynamic(image);
	elfimage__close(image);
	return 0;
}
