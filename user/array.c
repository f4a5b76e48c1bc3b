// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

int array__grow(void *items, size_t *cap, size_t need, size_t size)
{
	size_t new_cap = *cap ? *cap : 16;
	void *old, *grown;

	if (need <= *cap)
		return 0;
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2)
			return -ENOMEM;
		new_cap *= 2;
	}
	memcpy(&old, items, sizeof(old));
	grown = reallocarray(old, new_cap, size);
	if (!grown)
		return -ENOMEM;
	memcpy(items, &grown, sizeof(grown));
	*cap = new_cap;
	return 0;
}
