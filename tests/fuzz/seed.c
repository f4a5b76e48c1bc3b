// SPDX-License-Identifier: GPL-2.0
/*
 * The source of the small ELF seeds committed under tests/fuzz/corpus/
 * (the larger ones are copied from build/tests/fixtures at build time).
 * Regenerate them with `make fuzz-seeds`: -nostdlib and one page per
 * segment keep each file a few KB, with a .symtab, .dynsym with a
 * version, .eh_frame (rsp- and rbp-based frames), DWARF with an inlined
 * call and a global lock object.
 */
#include <pthread.h>

pthread_mutex_t seed_lock;
static int seed_count;

static inline __attribute__((always_inline)) void seed_bump(int by)
{
	seed_count += by;
}

__attribute__((noinline)) int seed_leaf(int x)
{
	seed_bump(x);
	return seed_count * 3;
}

__attribute__((noinline, optimize("no-omit-frame-pointer")))
int seed_framed(int n)
{
	volatile char buf[64];

	for (int i = 0; i < n && i < 64; i++)
		buf[i] = (char)i;
	return buf[n & 63] + seed_leaf(n);
}

int seed_v1(void) { return 1; }
int seed_v2(void) { return 2; }
__asm__(".symver seed_v1, seed_versioned@VERS_1.0");
__asm__(".symver seed_v2, seed_versioned@@VERS_2.0");
