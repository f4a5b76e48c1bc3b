// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "array.h"
#include "cachemetrics.h"
#include "promtext.h"
#include "symbolizer.h"

void cachemetrics__write(FILE *out, const struct symbolizer_cache_stats *stats)
{
	const struct symbolizer_cache_stats c = *stats;
	const struct {
		const char *name, *type, *help;
		const uint64_t *value;
	} rows[] = {
		{ "syncprof_cache_modules", "gauge", "ELF modules held for "
		  "naming, in every process's session.", &c.modules },
		{ "syncprof_cache_modules_unmapped", "gauge", "Of which no "
		  "followed process maps any more (kept, bounded).", &c.gone },
		{ "syncprof_cache_evictions_total", "counter", "Modules let "
		  "go: unmapped beyond the bound, or of a deleted file.",
		  &c.evictions },
		{ "syncprof_cache_files", "gauge", "Distinct ELF files behind "
		  "the modules (shared by identity).", &c.files },
		{ "syncprof_cache_open_files", "gauge", "Of which held open.",
		  &c.open_files },
		{ "syncprof_cache_memory_bytes", "gauge", "Deleted files no "
		  "process maps, read into memory instead of held open.",
		  &c.memory_bytes },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		promtext__one(out, rows[i].name, rows[i].type, rows[i].help,
			      *rows[i].value);
}
