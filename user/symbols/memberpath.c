// SPDX-License-Identifier: GPL-2.0
/*
 * Member paths: a lock inside a global struct is named as its source
 * names it ("queue.not_empty", "table[3].lock"), not "queue+0x28".
 *
 * Chosen: walk the variable's DWARF type down to the byte asked for:
 * through typedefs and qualifiers, into the struct, class or union
 * member whose [DW_AT_data_member_location, + its size) holds it (C++
 * base classes and anonymous members add no name), into the array
 * element offset / element size (each dimension of a multi-dimensional
 * array its own "[i]").  Of a union's members that hold the byte, a
 * lock wins, else the first.  The walk stops at the outermost lock
 * type, known by name: a lock is what the user declared, and a futex
 * word a few bytes into a pthread_cond_t names the condvar.  It stops
 * before a member or at a type whose name is reserved to the
 * implementation ("__x", "_X"): glibc's "__data.__lock", libstdc++'s
 * "_M_i" inside a std::atomic, the "mutex" inside ld.so's
 * __rtld_lock_recursive_t mean nothing to the user, and differ between
 * libcs.
 *
 * Rejected: descending into the lock types (glibc and musl lay them out
 * differently, and the row already says mutex or condvar); taking any
 * type whose name contains "lock" or "mutex" for a lock (a user's
 * "struct lockstats" holding several locks would hide which one);
 * naming a byte in padding or inside a scalar by its neighbour (it is
 * "+0xN" after the innermost thing that holds it).
 *
 * The way back (memberpath__find, for --object): a path's members by
 * name (anonymous members and base classes searched through) and its
 * indexes give the bytes the named thing spans.
 */
#include <ctype.h>
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memberpath.h"

#define MAX_DEPTH	32	/* a type nests no deeper in practice */
#define MAX_DIMS	8

/*
 * Lock types by the name of their typedef, struct or class (C++ and
 * Rust generics by the name before '<'): the C and C++ standard
 * libraries', GLib's, QEMU's and Rust's std::sync.
 */
static const char *const lock_types[] = {
	"pthread_mutex_t", "pthread_cond_t", "pthread_rwlock_t",
	"pthread_spinlock_t", "pthread_barrier_t", "sem_t", "mtx_t", "cnd_t",
	"mutex", "recursive_mutex", "timed_mutex", "recursive_timed_mutex",
	"shared_mutex", "shared_timed_mutex", "condition_variable",
	"condition_variable_any", "counting_semaphore", "binary_semaphore",
	"latch", "barrier",
	"GMutex", "GRecMutex", "GRWLock", "GCond",
	"QemuMutex", "QemuRecMutex", "QemuCond", "QemuSemaphore", "QemuSpin",
	"QemuEvent", "QemuLockCnt",
	"Mutex", "RwLock", "Condvar", "Once", "Barrier",
};

static bool is_lock_type(Dwarf_Die *type)
{
	const char *name = dwarf_diename(type);
	size_t len;

	if (!name)
		return false;
	len = strcspn(name, "<");
	for (size_t i = 0; i < sizeof(lock_types) / sizeof(lock_types[0]); i++)
		if (strlen(lock_types[i]) == len && !strncmp(name, lock_types[i], len))
			return true;
	return false;
}

/* Reserved to the implementation: "__x" or "_X". */
static bool is_reserved(const char *name)
{
	return name && name[0] == '_' &&
	       (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'));
}

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
	       tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type ||
	       tag == DW_TAG_atomic_type || tag == DW_TAG_shared_type ||
	       tag == DW_TAG_immutable_type;
}

static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	return dwarf_attr_integrate(die, DW_AT_type, &attr) &&
	       dwarf_formref_die(&attr, out);
}

static bool udata_of(Dwarf_Die *die, unsigned int name, Dwarf_Word *out)
{
	Dwarf_Attribute attr;

	return dwarf_attr(die, name, &attr) && !dwarf_formudata(&attr, out);
}

/* A member's offset: a constant, DWARF 2's DW_OP_plus_uconst, or none (0). */
static bool member_offset(Dwarf_Die *member, Dwarf_Word *out)
{
	Dwarf_Attribute attr;
	Dwarf_Op *ops;
	size_t n;

	*out = 0;
	if (!dwarf_attr(member, DW_AT_data_member_location, &attr))
		return true;
	if (!dwarf_formudata(&attr, out))
		return true;
	if (dwarf_getlocation(&attr, &ops, &n) || n != 1 ||
	    ops[0].atom != DW_OP_plus_uconst)
		return false;
	*out = ops[0].number;
	return true;
}

/* Size in bytes; a flexible array member (no bound) reaches to the end. */
static bool type_size(Dwarf_Die *type, Dwarf_Word *out)
{
	Dwarf_Die peeled;

	if (!dwarf_aggregate_size(type, out) && *out)
		return true;
	if (dwarf_peel_type(type, &peeled) || dwarf_tag(&peeled) != DW_TAG_array_type)
		return false;
	*out = UINT64_MAX;
	return true;
}

struct step {
	Dwarf_Die type;		/* where the walk goes next */
	uint64_t offset;	/* the byte's offset in it */
	const char *name;	/* the member's name, NULL: none (a base, anonymous) */
};

/* The member of a struct, class or union that holds offset; false: none. */
static bool member_at(Dwarf_Die *aggregate, uint64_t offset, struct step *out)
{
	Dwarf_Die child, type;
	bool found = false;

	if (dwarf_child(aggregate, &child))
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Word at, size;
		bool lock;

		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) ||
		    dwarf_hasattr(&child, DW_AT_declaration) ||	/* static */
		    dwarf_hasattr(&child, DW_AT_bit_size) ||
		    !member_offset(&child, &at) || !type_of(&child, &type) ||
		    !type_size(&type, &size) || offset < at ||
		    offset - at >= size)
			continue;
		lock = is_lock_type(&type);
		if (found && !lock)
			continue;
		out->type = type;
		out->offset = offset - at;
		out->name = tag == DW_TAG_member ? dwarf_diename(&child) : NULL;
		found = true;
		if (lock)
			break;
	} while (!dwarf_siblingof(&child, &child));
	return found;
}

/* An array type's element and dimensions. */
struct array_shape {
	Dwarf_Die elem;
	Dwarf_Word elem_size;
	size_t dims;
	Dwarf_Word lower[MAX_DIMS];
	Dwarf_Word count[MAX_DIMS];	/* 0: unknown (only the first may be) */
	Dwarf_Word stride[MAX_DIMS];	/* bytes from one index to the next */
};

/* A subrange's lower bound and element count (0: unknown). */
static void subrange_of(Dwarf_Die *sub, Dwarf_Word *lower, Dwarf_Word *count)
{
	Dwarf_Word upper;

	*lower = 0;
	udata_of(sub, DW_AT_lower_bound, lower);
	if (udata_of(sub, DW_AT_count, count))
		return;
	*count = udata_of(sub, DW_AT_upper_bound, &upper) && upper >= *lower
		 ? upper - *lower + 1 : 0;
}

static bool array_shape_of(Dwarf_Die *array, struct array_shape *a)
{
	Dwarf_Die child;

	a->dims = 0;
	if (!type_of(array, &a->elem) ||
	    dwarf_aggregate_size(&a->elem, &a->elem_size) || !a->elem_size ||
	    dwarf_child(array, &child))
		return false;
	do {
		if (dwarf_tag(&child) != DW_TAG_subrange_type)
			continue;
		if (a->dims == MAX_DIMS)
			return false;
		subrange_of(&child, &a->lower[a->dims], &a->count[a->dims]);
		a->dims++;
	} while (!dwarf_siblingof(&child, &child));
	for (size_t i = a->dims; i-- > 0;) {
		Dwarf_Word inner = i + 1 < a->dims ? a->count[i + 1] : 1;
		Dwarf_Word next = i + 1 < a->dims ? a->stride[i + 1] : a->elem_size;

		if (!inner || next > UINT64_MAX / inner)
			return false;
		a->stride[i] = next * inner;
	}
	return a->dims > 0;
}

/*
 * The element of an array that holds offset, its index in each
 * dimension printed to f; false: not inside, or not computable.
 */
static bool element_at(Dwarf_Die *array, uint64_t offset, FILE *f,
		       struct step *out)
{
	Dwarf_Word index[MAX_DIMS];
	struct array_shape a;

	if (!array_shape_of(array, &a))
		return false;
	for (size_t i = 0; i < a.dims; i++) {
		index[i] = offset / a.stride[i];
		if (a.count[i] && index[i] >= a.count[i])
			return false;
		offset %= a.stride[i];
	}
	for (size_t i = 0; i < a.dims; i++)
		fprintf(f, "[%" PRIu64 "]", a.lower[i] + index[i]);
	out->type = a.elem;
	out->offset = offset;
	out->name = NULL;
	return true;
}

/*
 * Walks from at down to the thing that holds offset, printing each
 * member's name and element's index to f.  Returns what is left of the
 * offset to show: 0 at a lock or a reserved member (the whole of it is
 * meant), else the offset inside the innermost thing found.  *lock: the
 * name of the lock type the walk stopped at, NULL if it stopped
 * elsewhere.
 */
static uint64_t memberpath__walk(Dwarf_Die at, uint64_t offset, FILE *f,
				 const char **lock)
{
	int depth = 0;

	*lock = NULL;
	for (int steps = 0; steps < 4 * MAX_DEPTH; steps++) {
		int tag = dwarf_tag(&at);
		struct step next;

		if (is_lock_type(&at)) {
			*lock = dwarf_diename(&at);
			return 0;
		}
		if (is_reserved(dwarf_diename(&at)))
			return 0;
		if (is_qualifier(tag)) {
			if (!type_of(&at, &at))
				break;
			continue;
		}
		if (++depth > MAX_DEPTH)
			break;
		if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		    tag == DW_TAG_union_type) {
			if (!member_at(&at, offset, &next))
				break;
			if (is_reserved(next.name))
				return 0;
			if (next.name)
				fprintf(f, ".%s", next.name);
		} else if (tag == DW_TAG_array_type) {
			if (!element_at(&at, offset, f, &next))
				break;
		} else {
			break;	/* a scalar, pointer, enum */
		}
		at = next.type;
		offset = next.offset;
	}
	return offset;
}

/* The path's text and the lock type it ends at (NULL: none). */
static int memberpath__text(Dwarf_Die *type, uint64_t offset,
			    const char *base, const char **lock, char **out)
{
	Dwarf_Word size;
	char *text = NULL;
	size_t len = 0;
	uint64_t rest;
	FILE *f;

	*out = NULL;
	if (type_size(type, &size) && offset >= size)
		return -ENOENT;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fputs(base, f);
	rest = memberpath__walk(*type, offset, f, lock);
	if (rest)
		fprintf(f, "+0x%" PRIx64, rest);
	if (fclose(f) || !text) {
		free(text);
		return -ENOMEM;
	}
	*out = text;
	return 0;
}

int memberpath__name(Dwarf_Die *type, uint64_t offset, const char *base,
		     char **out)
{
	const char *lock;

	return memberpath__text(type, offset, base, &lock, out);
}

int memberpath__lock(Dwarf_Die *type, uint64_t offset, const char *base,
		     const char **lock, char **out)
{
	int err = memberpath__text(type, offset, base, lock, out);

	if (err || *lock)
		return err;
	free(*out);
	*out = NULL;
	return -ENOENT;
}

/*
 * The member called name in an aggregate, also inside its anonymous
 * members and base classes: *offset (from the aggregate) and *type.
 */
static bool member_named(Dwarf_Die *aggregate, const char *name, size_t len,
			 int depth, uint64_t *offset, Dwarf_Die *type)
{
	Dwarf_Die child, inner;

	if (depth > MAX_DEPTH || dwarf_child(aggregate, &child))
		return false;
	do {
		int tag = dwarf_tag(&child);
		const char *n = dwarf_diename(&child);
		Dwarf_Word at;
		uint64_t below;

		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) ||
		    dwarf_hasattr(&child, DW_AT_declaration) ||
		    !member_offset(&child, &at) || !type_of(&child, type))
			continue;
		if (tag == DW_TAG_member && n) {
			if (strlen(n) == len && !strncmp(n, name, len)) {
				*offset = at;
				return true;
			}
			continue;
		}
		/* Anonymous, or a base class: its members are the aggregate's. */
		if (dwarf_peel_type(type, &inner) == 0 &&
		    member_named(&inner, name, len, depth + 1, &below, type)) {
			*offset = at + below;
			return true;
		}
	} while (!dwarf_siblingof(&child, &child));
	return false;
}

/*
 * The brackets at *path into the array `array`: one per dimension, or
 * fewer (a row of a multi-dimensional array, which ends the path).
 */
static bool index_into(Dwarf_Die *array, const char **path, uint64_t *offset,
		       Dwarf_Die *type, uint64_t *size)
{
	struct array_shape a;
	size_t used = 0;

	if (!array_shape_of(array, &a))
		return false;
	while (used < a.dims && **path == '[') {
		char *end;
		unsigned long long i;

		if (!isdigit((unsigned char)(*path)[1]))
			return false;
		i = strtoull(*path + 1, &end, 10);
		if (*end != ']' || i < a.lower[used] ||
		    (a.count[used] && i - a.lower[used] >= a.count[used]))
			return false;
		*offset += (i - a.lower[used]) * a.stride[used];
		used++;
		*path = end + 1;
	}
	*type = a.elem;
	*size = used ? a.stride[used - 1] : 0;
	/* A row ends the path. */
	return used == a.dims || (used && !**path);
}

int memberpath__find(Dwarf_Die *type, const char *path, uint64_t *offset,
		     uint64_t *size)
{
	Dwarf_Die at = *type;
	uint64_t off = 0, sz = 0;

	for (int depth = 0; *path; depth++) {
		Dwarf_Die peeled;
		int tag;

		if (depth > MAX_DEPTH || dwarf_peel_type(&at, &peeled))
			return -ENOENT;
		tag = dwarf_tag(&peeled);
		if (*path == '.' && (tag == DW_TAG_structure_type ||
				     tag == DW_TAG_class_type ||
				     tag == DW_TAG_union_type)) {
			size_t len = strcspn(path + 1, ".[");
			uint64_t below;

			if (!len || !member_named(&peeled, path + 1, len, 0,
						  &below, &at))
				return -ENOENT;
			off += below;
			path += 1 + len;
		} else if (*path == '[' && tag == DW_TAG_array_type) {
			if (!index_into(&peeled, &path, &off, &at, &sz))
				return -ENOENT;
			if (!*path)
				break;	/* sz: the element's or the row's size */
		} else {
			return -ENOENT;
		}
		sz = 0;
	}
	if (!sz && !type_size(&at, &sz))
		return -ENOENT;
	*offset = off;
	*size = sz;
	return 0;
}
