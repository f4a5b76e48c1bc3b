/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DWARF half of a module index (modindex.c) shared by every module
 * of one build: its functions' address ranges and its variables'
 * addresses, as DWARF addresses with DIE offsets, the same in each copy
 * of the build.  Each module keeps its own Dwarf handle (its DIEs are
 * read there) and symbols; what is shared holds no handle, no file and
 * no pointer into one.
 */
#ifndef SYNCPROF_MODSHARE_H
#define SYNCPROF_MODSHARE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODSHARE_ID_MAX 64

/*
 * What makes two modules' DWARF the same: the build ID, and the sizes of
 * the DWARF sections read (a stripped copy that reads a separate debug
 * file, reworked by dwz, has other DIE offsets than an unstripped one).
 */
struct modshare_key {
	uint8_t id[MODSHARE_ID_MAX];
	size_t id_len;
	uint64_t info_size, abbrev_size, str_size;
};

struct modshare_func {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};

struct modshare_var {
	Dwarf_Addr addr;
	Dwarf_Off die;
};

struct modshare;

/* The ranges of key's build, held once more; NULL when none is. */
struct modshare *modshare__find(const struct modshare_key *key);
/*
 * The ranges of key's build from funcs (sorted; taken, even on error),
 * held by the caller and found by the next modshare__find.  -ENOMEM.
 */
int modshare__add(const struct modshare_key *key, struct modshare_func *funcs,
		  size_t n, struct modshare **out);
/* One holder less; the last frees them. */
void modshare__put(struct modshare *m);

const struct modshare_func *modshare__funcs(const struct modshare *m,
					    size_t *n);
/* Whether the variables are indexed (modshare__set_vars): *vars, *n. */
bool modshare__vars(const struct modshare *m, const struct modshare_var **vars,
		    size_t *n);
/* The variables (sorted; taken), for every holder. */
void modshare__set_vars(struct modshare *m, struct modshare_var *vars,
			size_t n);

/* Builds held now, for /metrics and tests. */
size_t modshare__count(void);

#endif
