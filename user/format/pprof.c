// SPDX-License-Identifier: GPL-2.0
/*
 * The profile is built straight into protobuf-c's generated structs
 * (profile.pb-c.h, from pprof's own profile.proto in this directory),
 * packed by protobuf-c and gzipped by zlib, as the format asks.  The
 * tables pprof wants deduplicated (strings, functions, locations,
 * mappings) are indexed with libiberty's hash tables.  Rejected: writing
 * the protobuf wire format by hand (the generated code and the library
 * know the encoding; a hand-written one is one more thing to get wrong).
 *
 * A location is one address; a return address is recorded as its call
 * (pc - 1), where the symbolizer looked it up, as the format allows
 * ("a non-leaf address may be in the middle of a call instruction").
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>		/* before hashtab.h, which needs size_t */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libiberty/hashtab.h>
#include <zlib.h>

#include "array.h"
#include "locktype.h"
#include "names.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "rootsplit.h"
#include "text.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

#define MAX_LABELS 8

/* A string of the string table and its index: what `strings` holds. */
struct pprof_string {
	int64_t index;
	const char *text;	/* string_table[index] */
};

/* A sample with its values and labels, in one allocation. */
struct pprof_sample {
	Sample sample;
	int64_t values[2];
	Label labels[MAX_LABELS];
	Label *label_ptrs[MAX_LABELS];
};

struct pprof {
	Profile profile;	/* its arrays are the tables below */
	ValueType sample_types[2];
	ValueType *sample_type_ptrs[2];
	ValueType period_type;
	int64_t comments[2];	/* the run's scope; the class label */
	size_t strings_cap, samples_cap, mappings_cap, locations_cap,
	       functions_cap;
	htab_t strings;		/* of struct pprof_string */
	htab_t functions;	/* of Function, by name and file */
	htab_t locations;	/* of Location, by address */
	htab_t mappings;	/* of Mapping, by memory_start */
	int64_t key_type, key_class, key_object, key_tid, key_process, key_pid;
	int64_t key_root, key_root_state;
	bool symbolized;	/* pprof_window's */
	/* --why (pprof_window's why; NULL: none) */
	const struct why *why;
	const struct report_settings *why_rows_by;
	const char *source_root;	/* root frames' files shown without */
	size_t source_root_len;
	struct rootsplit_part *parts;	/* a stack's, reused */
	size_t parts_cap;
	/* The report's processes, for a row's pid: its name. */
	pid_t pid;
	const char *comm;
	const char *(*process_name)(const void *ctx, pid_t pid);
	const void *process_ctx;
};

/* The name of pid in the report, or NULL. */
static const char *pprof__comm(const struct pprof *p, int64_t pid)
{
	const char *name = p->process_name ?
			   p->process_name(p->process_ctx, (pid_t)pid) : NULL;

	if (name)
		return name;
	return pid == p->pid ? p->comm : NULL;
}

/* ---- the tables ---------------------------------------------------------- */

static hashval_t string_hash(const void *entry)
{
	return htab_hash_string(((const struct pprof_string *)entry)->text);
}

static int string_eq(const void *entry, const void *text)
{
	return !strcmp(((const struct pprof_string *)entry)->text, text);
}

static hashval_t function_hash(const void *entry)
{
	const Function *f = entry;
	int64_t key[2] = { f->name, f->filename };

	return iterative_hash(key, sizeof(key), 0);
}

static int function_eq(const void *a, const void *b)
{
	const Function *x = a, *y = b;

	return x->name == y->name && x->filename == y->filename;
}

static hashval_t address_hash(uint64_t address)
{
	return iterative_hash(&address, sizeof(address), 0);
}

static hashval_t location_hash(const void *entry)
{
	return address_hash(((const Location *)entry)->address);
}

static int location_eq(const void *entry, const void *address)
{
	return ((const Location *)entry)->address == *(const uint64_t *)address;
}

static hashval_t mapping_hash(const void *entry)
{
	return address_hash(((const Mapping *)entry)->memory_start);
}

static int mapping_eq(const void *entry, const void *start)
{
	return ((const Mapping *)entry)->memory_start == *(const uint64_t *)start;
}

/* The index of s in the string table, added if new; -ENOMEM. */
static int64_t pprof__string(struct pprof *p, const char *s)
{
	Profile *pr = &p->profile;
	struct pprof_string *entry;
	void **slot;
	char *copy;

	slot = htab_find_slot_with_hash(p->strings, s, htab_hash_string(s),
					INSERT);
	if (!slot)
		return -ENOMEM;
	if (*slot)
		return ((struct pprof_string *)*slot)->index;
	entry = malloc(sizeof(*entry));
	copy = strdup(s);
	if (!entry || !copy ||
	    array__grow(&pr->string_table, &p->strings_cap,
			pr->n_string_table + 1, sizeof(*pr->string_table))) {
		free(entry);
		free(copy);
		htab_clear_slot(p->strings, slot);
		return -ENOMEM;
	}
	pr->string_table[pr->n_string_table] = copy;
	*entry = (struct pprof_string){ (int64_t)pr->n_string_table++, copy };
	*slot = entry;
	return entry->index;
}

/*
 * The id of the function (name, file), added if new, with the line it
 * starts at; 0: no memory.
 */
static uint64_t pprof__function(struct pprof *p, const char *name,
				const char *file, unsigned int start_line)
{
	Profile *pr = &p->profile;
	Function key = PERFTOOLS__PROFILES__FUNCTION__INIT, *f;
	void **slot;

	key.name = pprof__string(p, name);
	key.filename = pprof__string(p, file ? file : "");
	if (key.name < 0 || key.filename < 0)
		return 0;
	slot = htab_find_slot(p->functions, &key, INSERT);
	if (!slot)
		return 0;
	if (*slot)
		return ((Function *)*slot)->id;
	f = malloc(sizeof(*f));
	if (!f || array__grow(&pr->function, &p->functions_cap,
			      pr->n_function + 1, sizeof(*pr->function))) {
		free(f);
		htab_clear_slot(p->functions, slot);
		return 0;
	}
	*f = key;
	f->system_name = key.name;	/* only the demangled name is kept */
	f->start_line = start_line;
	f->id = pr->n_function + 1;
	pr->function[pr->n_function++] = f;
	*slot = f;
	return f->id;
}

static char *hex_string(const unsigned char *bytes, size_t n)
{
	char *s = malloc(n * 2 + 1);

	for (size_t i = 0; s && i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", bytes[i]);
	if (s)
		s[n * 2] = '\0';
	return s;
}

/* The id of the mapping holding addr, added if new; 0: none, or no memory. */
/* The mapping of a served profile's addresses in no module known. */
#define PPROF_UNKNOWN_MAPPING	"[unknown]"

static uint64_t pprof__mapping(struct pprof *p,
			       const struct pprof_source *src, uint64_t addr)
{
	Profile *pr = &p->profile;
	struct symbol_module mod;
	Mapping *m;
	void **slot;
	char *build_id = NULL;

	if (!src || src->module(src->ctx, addr, &mod)) {
		if (!p->symbolized)
			return 0;	/* left for pprof to map elsewhere */
		/*
		 * A served profile's address in no module known (a process
		 * gone before its maps were read): a mapping of its own,
		 * marked named as far as can be.  pprof would make one up,
		 * unmarked, and ask the server to name it (a POST to
		 * /debug/pprof/symbol, which fails the fetch).
		 */
		mod = (struct symbol_module){
			.path = PPROF_UNKNOWN_MAPPING,
			.start = UINT64_MAX - 1,
			.end = UINT64_MAX,
		};
	}
	slot = htab_find_slot_with_hash(p->mappings, &mod.start,
					address_hash(mod.start), INSERT);
	if (!slot)
		return 0;
	if (*slot)
		return ((Mapping *)*slot)->id;
	m = malloc(sizeof(*m));
	if (mod.build_id)
		build_id = hex_string(mod.build_id, mod.build_id_len);
	if (!m || (mod.build_id && !build_id) ||
	    array__grow(&pr->mapping, &p->mappings_cap, pr->n_mapping + 1,
			sizeof(*pr->mapping)))
		goto nomem;
	*m = (Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	m->memory_start = mod.start;
	m->memory_limit = mod.end;
	m->file_offset = mod.offset;
	m->filename = pprof__string(p, mod.path);
	m->build_id = build_id ? pprof__string(p, build_id) : 0;
	if (m->filename < 0 || m->build_id < 0)
		goto nomem;
	free(build_id);
	m->id = pr->n_mapping + 1;
	pr->mapping[pr->n_mapping++] = m;
	*slot = m;
	return m->id;
nomem:
	free(build_id);
	free(m);
	htab_clear_slot(p->mappings, slot);
	return 0;
}

/* The id of pc's location, added with its lines if new; 0: no memory. */
static uint64_t pprof__location(struct pprof *p,
				const struct pprof_source *src,
				const struct rowstacks_pc *pc)
{
	Profile *pr = &p->profile;
	uint64_t address = pc->is_return_address ? pc->pc - 1 : pc->pc;
	size_t n = pc->n_frames;
	Location *loc;
	Line *lines, **ptrs;
	Mapping *m = NULL;
	void **slot;

	slot = htab_find_slot_with_hash(p->locations, &address,
					address_hash(address), INSERT);
	if (!slot)
		return 0;
	if (*slot)
		return ((Location *)*slot)->id;
	/* The location, its lines and their pointers in one block. */
	loc = malloc(sizeof(*loc) + n * (sizeof(*lines) + sizeof(*ptrs)));
	if (!loc || array__grow(&pr->location, &p->locations_cap,
				pr->n_location + 1, sizeof(*pr->location))) {
		free(loc);
		htab_clear_slot(p->locations, slot);
		return 0;
	}
	lines = (Line *)(loc + 1);
	ptrs = (Line **)(lines + n);
	*loc = (Location)PERFTOOLS__PROFILES__LOCATION__INIT;
	loc->id = pr->n_location + 1;
	loc->address = address;
	loc->mapping_id = pprof__mapping(p, src, address);
	if (loc->mapping_id)
		m = pr->mapping[loc->mapping_id - 1];
	loc->line = ptrs;
	/* Innermost first: the last line is the function the others
	   were inlined into, as pprof wants them. */
	for (size_t i = 0; i < n; i++) {
		const struct symbol_info *info = &pc->frames[i].info;
		Line *line = &lines[loc->n_line];

		if (!info->function)
			continue;	/* nameless: pprof shows the address */
		*line = (Line)PERFTOOLS__PROFILES__LINE__INIT;
		line->function_id = pprof__function(p, info->function,
						    info->file,
						    pc->frames[i].decl_line);
		line->line = info->line;
		if (!line->function_id) {
			free(loc);
			htab_clear_slot(p->locations, slot);
			return 0;
		}
		ptrs[loc->n_line++] = line;
		if (m) {
			m->has_functions = true;
			m->has_filenames |= info->file != NULL;
			m->has_line_numbers |= info->line != 0;
			m->has_inline_frames |= pc->frames[i].inlined;
		}
	}
	pr->location[pr->n_location++] = loc;
	*slot = loc;
	return loc->id;
}

/* ---- samples --------------------------------------------------------- */

/* A sample's values, and its root labels (string indexes; 0: none). */
struct pprof_values {
	uint64_t count, ns;
	int64_t root, root_state;
};

/* Sets the next of s's labels to key and str (a string) or num. */
static void pprof__label(struct pprof_sample *s, size_t *n, int64_t key,
			 int64_t str, int64_t num)
{
	s->labels[*n] = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
	s->labels[*n].key = key;
	s->labels[*n].str = str;
	s->labels[(*n)++].num = num;
}

/*
 * Where a stack's sample starts: at the row's call site, the frames
 * inside the lock's wrappers (the runtimes' built-in ones, --skip) left
 * out, as the table's Call site column leaves them; the whole stack when
 * the call site is not one of its frames.
 */
static size_t pprof__first_pc(const struct report_row *row,
			      const struct rowstacks_stack *st)
{
	for (size_t i = 0; row->callsite && i < st->n_pcs; i++)
		if (st->pcs[i].pc == row->callsite)
			return i;
	return 0;
}

static int pprof__sample(struct pprof *p, const struct pprof_source *src,
			 const struct report_row *row, int64_t object,
			 const struct rowstacks_stack *st,
			 const struct pprof_values *v)
{
	Profile *pr = &p->profile;
	size_t first = pprof__first_pc(row, st), n_pcs = st->n_pcs - first;
	struct pprof_sample *s = calloc(1, sizeof(*s));
	uint64_t *ids = calloc(n_pcs, sizeof(*ids));
	size_t n_labels = 0;
	int64_t type, class;

	if (!s || !ids ||
	    array__grow(&pr->sample, &p->samples_cap, pr->n_sample + 1,
			sizeof(*pr->sample)))
		goto nomem;
	for (size_t i = 0; i < n_pcs; i++) {
		ids[i] = pprof__location(p, src, &st->pcs[first + i]);
		if (!ids[i])
			goto nomem;
	}
	type = pprof__string(p, locktype__name(row->type));
	class = pprof__string(p, locktype__class(row->type));
	if (type < 0 || class < 0)
		goto nomem;
	s->sample = (Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
	s->sample.location_id = ids;
	s->sample.n_location_id = n_pcs;
	s->values[0] = (int64_t)v->count;
	s->values[1] = (int64_t)v->ns;
	s->sample.value = s->values;
	s->sample.n_value = 2;
	pprof__label(s, &n_labels, p->key_type, type, 0);
	/* lock or event: -tagfocus=class=lock keeps the lock waits. */
	pprof__label(s, &n_labels, p->key_class, class, 0);
	pprof__label(s, &n_labels, p->key_object, object, 0);
	/* Rows split by process (--per-process, --serve): which one. */
	if (row->pid != REPORT_NO_TID) {
		const char *comm = pprof__comm(p, row->pid);
		int64_t name = pprof__string(p, comm ? comm : "?");

		if (name < 0)
			goto nomem;
		pprof__label(s, &n_labels, p->key_process, name, 0);
		pprof__label(s, &n_labels, p->key_pid, 0, row->pid);
	}
	if (row->tid != REPORT_NO_TID)
		pprof__label(s, &n_labels, p->key_tid, 0, row->tid);
	/* --why: where the part's chains end (-tagfocus=root=...). */
	if (v->root)
		pprof__label(s, &n_labels, p->key_root, v->root, 0);
	if (v->root_state)
		pprof__label(s, &n_labels, p->key_root_state, v->root_state, 0);
	for (size_t i = 0; i < n_labels; i++)
		s->label_ptrs[i] = &s->labels[i];
	s->sample.label = s->label_ptrs;
	s->sample.n_label = n_labels;
	pr->sample[pr->n_sample++] = &s->sample;
	return 0;
nomem:
	free(ids);
	free(s);
	return -ENOMEM;
}

/*
 * The root label of a part: the release site as -g prints a frame
 * ("convoy_c (convoy.c:212)"), "(not seen)" when no release was, "none"
 * for the remainder no root was charged with.  -ENOMEM.
 */
static int64_t pprof__root_text(struct pprof *p,
				const struct pprof_source *src,
				const struct why_root *root)
{
	struct symbol_frame frame = { 0 };
	char text[TEXT_MAX];

	if (!root)
		return pprof__string(p, "none");
	if (!root->site)
		return pprof__string(p, "(not seen)");
	if (src)
		src->callsite(src->ctx, root->site, &frame.info);
	names__frame_text(&frame, root->site, p->source_root,
			  p->source_root_len, text, sizeof(text));
	return pprof__string(p, text);
}

/* One sample per part of st: its roots, then the rest (root=none). */
static int pprof__split(struct pprof *p, const struct pprof_source *src,
			const struct report_row *row, int64_t object,
			const struct rowstacks_stack *st,
			const struct why_row *roots)
{
	size_t n;
	int err = rootsplit__parts(roots, st->count, st->wait_ns, &p->parts,
				   &n, &p->parts_cap);

	for (size_t i = 0; !err && i < n; i++) {
		const struct rootsplit_part *part = &p->parts[i];
		struct pprof_values v = {
			.count = part->count, .ns = part->ns,
			.root = pprof__root_text(p, src, part->root),
			.root_state = part->root ? pprof__string(p,
				why__state_name(part->root->state)) : 0,
		};

		if (v.root < 0 || v.root_state < 0)
			return -ENOMEM;
		err = pprof__sample(p, src, row, object, st, &v);
	}
	return err;
}

static int pprof__sym_module(void *ctx, uint64_t addr,
			     struct symbol_module *out)
{
	return symbolizer__module(ctx, addr, out);
}

static void pprof__sym_callsite(void *ctx, uint64_t addr,
				struct symbol_info *out)
{
	symbolizer__callsite(ctx, addr, out);
}

int pprof__add(struct pprof *p, struct symbolizer *sym,
	       const struct report_row *row, const char *object_symbol,
	       const struct rowstacks *rs)
{
	const struct pprof_source src = {
		.module = pprof__sym_module,
		.callsite = pprof__sym_callsite,
		.ctx = sym,
	};

	return pprof__add_from(p, sym ? &src : NULL, row, object_symbol, rs);
}

int pprof__add_from(struct pprof *p, const struct pprof_source *src,
		    const struct report_row *row, const char *object_symbol,
		    const struct rowstacks *rs)
{
	struct why_row *roots = NULL;
	char text[64];
	int64_t object;
	int err = 0;

	if (row->n_objects > 1)
		snprintf(text, sizeof(text), "%u objects", row->n_objects);
	else if (!object_symbol)
		snprintf(text, sizeof(text), "0x%" PRIx64, row->object);
	object = pprof__string(p, row->n_objects == 1 && object_symbol
				  ? object_symbol : text);
	if (object < 0)
		return -ENOMEM;
	if (p->why)
		err = rootsplit__stacks(p->why, row, p->why_rows_by, rs, &roots);
	for (size_t i = 0; !err && i < rs->n_stacks; i++) {
		const struct rowstacks_stack *st = &rs->stacks[i];
		const struct pprof_values v = { st->count, st->wait_ns, 0, 0 };

		if (!st->count && !st->wait_ns)
			continue;
		err = roots ? pprof__split(p, src, row, object, st, &roots[i])
			    : pprof__sample(p, src, row, object, st, &v);
	}
	rootsplit__stacks_free(roots, roots ? rs->n_stacks : 0);
	return err;
}

/* ---- the profile ----------------------------------------------------- */

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pprof__new(const struct pprof_window *window, struct pprof **out)
{
	struct pprof *p = calloc(1, sizeof(*p));
	Profile *pr;
	char comment[256];
	uint64_t mono, real;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pr = &p->profile;
	*pr = (Profile)PERFTOOLS__PROFILES__PROFILE__INIT;
	p->strings = htab_create_alloc(64, string_hash, string_eq, free,
				       calloc, free);
	p->functions = htab_create_alloc(64, function_hash, function_eq, NULL,
					 calloc, free);
	p->locations = htab_create_alloc(64, location_hash, location_eq, NULL,
					 calloc, free);
	p->mappings = htab_create_alloc(16, mapping_hash, mapping_eq, NULL,
					calloc, free);
	if (!p->strings || !p->functions || !p->locations || !p->mappings ||
	    pprof__string(p, "") != 0)
		goto nomem;
	for (int i = 0; i < 2; i++) {
		p->sample_types[i] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		p->sample_type_ptrs[i] = &p->sample_types[i];
	}
	/* Go's and Abseil's mutex profile: contentions, then delay. */
	p->sample_types[0].type = pprof__string(p, "contentions");
	p->sample_types[0].unit = pprof__string(p, "count");
	p->sample_types[1].type = pprof__string(p, "delay");
	p->sample_types[1].unit = pprof__string(p, "nanoseconds");
	p->period_type = p->sample_types[0];
	pr->sample_type = p->sample_type_ptrs;
	pr->n_sample_type = 2;
	pr->period_type = &p->period_type;
	pr->period = 1;
	pr->default_sample_type = p->sample_types[1].type;
	p->key_type = pprof__string(p, "type");
	p->key_class = pprof__string(p, "class");
	p->key_object = pprof__string(p, "object");
	p->key_tid = pprof__string(p, "tid");
	p->key_process = pprof__string(p, "process");
	p->key_pid = pprof__string(p, "pid");
	p->key_root = pprof__string(p, "root");
	p->key_root_state = pprof__string(p, "root_state");
	p->why = window->why;
	p->why_rows_by = window->why_rows_by;
	p->pid = window->pid;
	p->comm = window->comm;
	p->process_name = window->process_name;
	p->process_ctx = window->process_ctx;
	p->symbolized = window->symbolized;
	p->source_root = window->source_root;
	p->source_root_len = window->source_root ? window->source_root_len : 0;
	if (window->scope)
		snprintf(comment, sizeof(comment), "syncprof: %s, mode %s",
			 window->scope, window->mode ? window->mode : "?");
	else
		snprintf(comment, sizeof(comment), "syncprof: pid %d (%s), mode %s",
			 (int)window->pid, window->comm ? window->comm : "?",
			 window->mode ? window->mode : "?");
	p->comments[0] = pprof__string(p, comment);
	p->comments[1] = pprof__string(p, "class=event samples are waits for "
				       "an event (an idle worker's condvar, a "
				       "join); -tagfocus=class=lock keeps the "
				       "lock waits");
	if (p->sample_types[0].type < 0 || p->sample_types[0].unit < 0 ||
	    p->sample_types[1].type < 0 || p->sample_types[1].unit < 0 ||
	    p->key_type < 0 || p->key_class < 0 || p->key_object < 0 ||
	    p->key_tid < 0 || p->key_process < 0 || p->key_pid < 0 ||
	    p->key_root < 0 || p->key_root_state < 0 || p->comments[0] < 0 ||
	    p->comments[1] < 0)
		goto nomem;
	pr->comment = p->comments;
	pr->n_comment = 2;
	/* The window's start, from CLOCK_MONOTONIC to the epoch. */
	mono = clock_ns(CLOCK_MONOTONIC);
	real = clock_ns(CLOCK_REALTIME);
	pr->time_nanos = (int64_t)(real - (mono - window->start_ns));
	pr->duration_nanos = (int64_t)(window->end_ns - window->start_ns);
	*out = p;
	return 0;
nomem:
	pprof__free(p);
	return -ENOMEM;
}

void pprof__free(struct pprof *p)
{
	Profile *pr;

	if (!p)
		return;
	pr = &p->profile;
	for (size_t i = 0; i < pr->n_sample; i++) {
		free(pr->sample[i]->location_id);
		free(pr->sample[i]);	/* the struct pprof_sample */
	}
	for (size_t i = 0; i < pr->n_location; i++)
		free(pr->location[i]);
	for (size_t i = 0; i < pr->n_function; i++)
		free(pr->function[i]);
	for (size_t i = 0; i < pr->n_mapping; i++)
		free(pr->mapping[i]);
	for (size_t i = 0; i < pr->n_string_table; i++)
		free(pr->string_table[i]);
	free(pr->sample);
	free(pr->location);
	free(pr->function);
	free(pr->mapping);
	free(pr->string_table);
	free(p->parts);
	if (p->strings)
		htab_delete(p->strings);
	if (p->functions)
		htab_delete(p->functions);
	if (p->locations)
		htab_delete(p->locations);
	if (p->mappings)
		htab_delete(p->mappings);
	free(p);
}

static int mapping_cmp(const void *pa, const void *pb)
{
	const Mapping *a = *(Mapping *const *)pa, *b = *(Mapping *const *)pb;

	return a->memory_start < b->memory_start ? -1
					: a->memory_start > b->memory_start;
}

/* data, len bytes, gzipped into *out (malloc'ed). */
static int gzip_bytes(const uint8_t *data, size_t len, uint8_t **out,
		      size_t *out_len)
{
	z_stream z = { 0 };
	uLong bound;
	int err;

	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, len) + 32;
	*out = malloc(bound);
	if (!*out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)bound;
	err = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (err != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

int pprof__finish(struct pprof *p, FILE *out)
{
	Profile *pr = &p->profile;
	size_t len, gz_len;
	uint8_t *buf, *gz;
	int err;

	for (size_t i = 0; p->symbolized && i < pr->n_mapping; i++)
		pr->mapping[i]->has_functions = true;
	/* mapping[0] is the main binary: an executable loads lowest. */
	if (pr->n_mapping)
		qsort(pr->mapping, pr->n_mapping, sizeof(*pr->mapping), mapping_cmp);
	len = perftools__profiles__profile__get_packed_size(pr);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(pr, buf);
	err = gzip_bytes(buf, len, &gz, &gz_len);
	free(buf);
	if (err)
		return err;
	/* One profile per report: the caller puts each in place whole. */
	if (fwrite(gz, 1, gz_len, out) != gz_len)
		err = -EIO;
	free(gz);
	return err;
}

int pprof__print(FILE *out, struct symbolizer *sym,
		 const struct stacktab *tab, const struct pprof_window *window,
		 const struct report_rows *rows,
		 const struct row_names *names)
{
	struct rowstacks rs = { 0 };
	struct pprof *p;
	int err;

	if (!sym)
		return -EINVAL;
	err = pprof__new(window, &p);
	if (!err && p->why && !p->source_root) {
		p->source_root_len = names__source_root(rows, names);
		p->source_root = names__source_root_text(rows, names,
							 p->source_root_len);
	}
	for (size_t i = 0; i < rows->count && !err; i++) {
		err = rowstacks__name(&rs, sym, tab, &rows->rows[i]);
		if (!err)
			err = pprof__add(p, sym, &rows->rows[i],
					 names[i].object_symbol, &rs);
	}
	if (!err)
		err = pprof__finish(p, out);
	rowstacks__release(&rs);
	pprof__free(p);
	return err;
}
