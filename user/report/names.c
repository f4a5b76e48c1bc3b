// SPDX-License-Identifier: GPL-2.0
/*
 * Rows and frames named as the renderers print them: a row's call site
 * and lock through the symbolizer, the call site and a stack frame as
 * text, and the source root the rows' files share (left out of each).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "offcalls.h"
#include "srcpath.h"
#include "text.h"

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void names__callsite_text(const struct symbol_info *info, uint64_t addr,
			   enum callsite_style style, size_t strip,
			   char *buf, size_t len)
{
	const char *file = info->file && info->line ? info->file : NULL;
	char raw[TEXT_MAX];

	if (file && file[0] == '/' && strlen(file) > strip)
		file += strip;
	if (file && style == CALLSITE_LINE)
		snprintf(raw, sizeof(raw), "%s:%u", file, info->line);
	else if (file && info->function && style == CALLSITE_BOTH)
		snprintf(raw, sizeof(raw), "%s (%s:%u)", info->function, file,
			 info->line);
	else if (info->function)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64, info->function,
			 info->function_offset);
	else if (file)
		snprintf(raw, sizeof(raw), "%s:%u", file, info->line);
	else if (info->module)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64,
			 basename_of(info->module), info->module_offset);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, addr);
	text__sanitize(raw, buf, len);
}

void names__frame_text(const struct symbol_frame *f, uint64_t pc,
			const char *root, size_t root_len, char *buf,
			size_t len)
{
	const struct symbol_info *info = &f->info;
	const char *file = info->file && info->line ? info->file : NULL;
	const char *inlined = f->inlined ? " [inlined]" : "";
	char raw[TEXT_MAX];

	if (file && root && root_len && strlen(file) > root_len &&
	    !strncmp(file, root, root_len))
		file += root_len;
	if (info->function && file)
		snprintf(raw, sizeof(raw), "%s (%s:%u)%s", info->function,
			 file, info->line, inlined);
	else if (info->function && info->module)
		snprintf(raw, sizeof(raw), "%s (%s)%s", info->function,
			 basename_of(info->module), inlined);
	else if (info->function)
		snprintf(raw, sizeof(raw), "%s%s", info->function, inlined);
	else if (file)
		snprintf(raw, sizeof(raw), "%s:%u%s", file, info->line, inlined);
	else if (info->module)
		snprintf(raw, sizeof(raw), "%s+0x%" PRIx64,
			 basename_of(info->module), info->module_offset);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, pc);
	text__sanitize(raw, buf, len);
}

/*
 * A lock with no symbol, by the type the call site took it through
 * (callarg.c): rows whose object is a call's lock argument.
 */
static const char *names__argument_lock(struct symbolizer *sym,
					const struct report_row *r)
{
	switch (r->type) {
	case SP_TYPE_MUTEX: case SP_TYPE_REC_MUTEX: case SP_TYPE_RWLOCK_R:
	case SP_TYPE_RWLOCK_W: case SP_TYPE_SEM: case SP_TYPE_BARRIER:
	case SP_TYPE_SPINLOCK:
		return symbolizer__argument_lock(sym, r->callsite, false);
	case SP_TYPE_CONDVAR:
		return symbolizer__argument_lock(sym, r->callsite, true);
	}
	return NULL;
}

int names__rows_from(const struct names_source *src,
		     const struct report_rows *rows, struct row_names **out)
{
	struct row_names *names = NULL;

	*out = NULL;
	if (!rows->count)
		return 0;
	names = calloc(rows->count, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < rows->count; i++) {
		src->callsite(src->ctx, rows->rows[i].callsite,
			      &names[i].callsite);
		if (rows->rows[i].n_objects == 1)
			names[i].object_symbol = src->object(src->ctx,
							     &rows->rows[i]);
	}
	*out = names;
	return 0;
}

static void names__symbolizer_callsite(void *ctx, uint64_t addr,
				       struct symbol_info *out)
{
	symbolizer__callsite(ctx, addr, out);
}

/*
 * An off-CPU call's name, the object's symbol, or the lock argument's;
 * shared memory: the type the code took it through first (remembered
 * for the mapping's other rows).
 */
static const char *names__symbolizer_object(void *ctx,
					    const struct report_row *r)
{
	struct symbolizer *sym = ctx;
	const char *name, *typed;
	bool shared;

	if (offcalls__is_offcpu(r->type) ||
	    offcalls__is_call_object(r->object))
		name = offcalls__object_name(r->object);
	else
		name = symbolizer__object(sym, r->object);
	shared = symbolizer__shared(sym, r->object);
	if (name && !shared)
		return name;
	typed = names__argument_lock(sym, r);
	if (typed && shared)
		symbolizer__name_shared(sym, r->object, typed);
	return typed ? typed : name;
}

int names__rows(struct symbolizer *sym, const struct report_rows *rows,
		struct row_names **out)
{
	const struct names_source src = {
		names__symbolizer_callsite, names__symbolizer_object, sym,
	};

	return names__rows_from(&src, rows, out);
}

size_t names__source_root(const struct report_rows *rows,
			   const struct row_names *names)
{
	const char **files = calloc(rows->count ? rows->count : 1, sizeof(*files));
	size_t n = 0, strip;

	if (!files)
		return 0;
	for (size_t i = 0; i < rows->count; i++)
		if (names[i].callsite.file && names[i].callsite.line &&
		    names[i].callsite.file[0] == '/')
			files[n++] = names[i].callsite.file;
	strip = srcpath__common_dir(files, n);
	free(files);
	return strip;
}

const char *names__source_root_text(const struct report_rows *rows,
				     const struct row_names *names,
				     size_t strip)
{
	for (size_t i = 0; strip && i < rows->count; i++)
		if (names[i].callsite.file && names[i].callsite.line &&
		    names[i].callsite.file[0] == '/' &&
		    strlen(names[i].callsite.file) > strip)
			return names[i].callsite.file;
	return NULL;
}

void names__object_text(const struct report_row *r, const char *symbol,
			 char *buf, size_t len)
{
	char raw[TEXT_MAX];

	if (r->n_objects > 1)
		snprintf(raw, sizeof(raw), "[%12u]", r->n_objects);
	else if (symbol)
		snprintf(raw, sizeof(raw), "%s", symbol);
	else
		snprintf(raw, sizeof(raw), "0x%" PRIx64, r->object);
	text__sanitize(raw, buf, len);
}
