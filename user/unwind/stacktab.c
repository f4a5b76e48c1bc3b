// SPDX-License-Identifier: GPL-2.0
/*
 * Open addressing on the stack id, which the kernel already made a
 * well-mixed hash of the frames: no second hash, linear probing, the
 * table doubled at half load.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktab.h"

struct stack_slot {
	uint64_t id;		/* 0: empty */
	uint64_t *frames;
	uint32_t n;
	enum stacktab_end end;
	uint64_t alias;		/* the id the same frames go by, or 0 */
};

struct stacktab {
	struct stack_slot *slots;
	size_t cap;		/* a power of two */
	size_t count;
};

int stacktab__new(struct stacktab **out)
{
	struct stacktab *tab = calloc(1, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	tab->cap = 64;
	tab->slots = calloc(tab->cap, sizeof(*tab->slots));
	if (!tab->slots) {
		free(tab);
		return -ENOMEM;
	}
	*out = tab;
	return 0;
}

void stacktab__free(struct stacktab *tab)
{
	if (!tab)
		return;
	for (size_t i = 0; i < tab->cap; i++)
		free(tab->slots[i].frames);
	free(tab->slots);
	free(tab);
}

static struct stack_slot *stacktab__slot(struct stack_slot *slots, size_t cap,
					 uint64_t id)
{
	size_t i = (size_t)(id ^ id >> 32) & (cap - 1);

	while (slots[i].id && slots[i].id != id)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int stacktab__grow(struct stacktab *tab)
{
	size_t cap = tab->cap * 2;
	struct stack_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < tab->cap; i++)
		if (tab->slots[i].id)
			*stacktab__slot(slots, cap, tab->slots[i].id) =
				tab->slots[i];
	free(tab->slots);
	tab->slots = slots;
	tab->cap = cap;
	return 0;
}

int stacktab__add(struct stacktab *tab, uint64_t id, const uint64_t *frames,
		  uint32_t n, enum stacktab_end end)
{
	struct stack_slot *slot;
	uint64_t *copy;

	if (!id)
		return -EINVAL;
	if ((tab->count + 1) * 2 > tab->cap && stacktab__grow(tab))
		return -ENOMEM;
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, frames, n * sizeof(*copy));
	slot = stacktab__slot(tab->slots, tab->cap, id);
	if (slot->id)
		free(slot->frames);
	else
		tab->count++;
	*slot = (struct stack_slot){ id, copy, n, end, 0 };
	return 0;
}

int stacktab__alias(struct stacktab *tab, uint64_t id, uint64_t to)
{
	struct stack_slot *slot;

	if (!id || !to)
		return -EINVAL;
	slot = stacktab__slot(tab->slots, tab->cap, id);
	if (!slot->id)
		return -ENOENT;
	slot->alias = to == id ? 0 : to;
	return 0;
}

uint64_t stacktab__canonical(const struct stacktab *tab, uint64_t id)
{
	const struct stack_slot *slot;

	if (!tab || !id)
		return id;
	slot = stacktab__slot(tab->slots, tab->cap, id);
	return slot->id && slot->alias ? slot->alias : id;
}

int stacktab__get(const struct stacktab *tab, uint64_t id,
		  const uint64_t **frames, uint32_t *n, enum stacktab_end *end)
{
	const struct stack_slot *slot;

	if (!id)
		return -ENOENT;
	slot = stacktab__slot(tab->slots, tab->cap, id);
	if (!slot->id)
		return -ENOENT;
	*frames = slot->frames;
	*n = slot->n;
	*end = slot->end;
	return 0;
}

/*
 * Linear probing's deletion: the entries after the emptied slot, up to
 * the next empty one, move back into it when their home slot does not
 * lie between the two (cyclically), so every entry stays reachable from
 * its home without tombstones.
 */
int stacktab__remove(struct stacktab *tab, uint64_t id)
{
	size_t mask = tab->cap - 1, i, j;
	struct stack_slot *slot;

	if (!id)
		return -ENOENT;
	slot = stacktab__slot(tab->slots, tab->cap, id);
	if (!slot->id)
		return -ENOENT;
	free(slot->frames);
	tab->count--;
	i = (size_t)(slot - tab->slots);
	for (j = (i + 1) & mask; tab->slots[j].id; j = (j + 1) & mask) {
		uint64_t other = tab->slots[j].id;
		size_t home = (size_t)(other ^ other >> 32) & mask;

		/* home in (i, j]: the entry is reachable where it is. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		tab->slots[i] = tab->slots[j];
		i = j;
	}
	tab->slots[i] = (struct stack_slot){ 0 };
	return 0;
}

size_t stacktab__count(const struct stacktab *tab)
{
	return tab->count;
}
