// SPDX-License-Identifier: GPL-2.0
/* --what-if's results, kept for the reports. */
#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "whatif.h"

int whatif__add(struct whatif *w, const struct whatif_entry *e)
{
	int err = array__grow(&w->entries, &w->cap, w->n + 1,
			      sizeof(*w->entries));

	if (err)
		return err;
	w->entries[w->n++] = *e;
	return 0;
}

void whatif__free(struct whatif *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->entries[i].object_name);
	free(w->entries);
	free(w->progress);
	free(w);
}
