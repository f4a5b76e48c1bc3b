// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "promtext.h"

void promtext__family(FILE *out, const char *name, const char *type,
		      const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void promtext__one(FILE *out, const char *name, const char *type,
		   const char *help, uint64_t value)
{
	promtext__family(out, name, type, help);
	fprintf(out, "%s %" PRIu64 "\n", name, value);
}

void promtext__one_real(FILE *out, const char *name, const char *type,
			const char *help, double value)
{
	promtext__family(out, name, type, help);
	fprintf(out, "%s %.6f\n", name, value);
}
