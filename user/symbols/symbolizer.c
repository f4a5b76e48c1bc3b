// SPDX-License-Identifier: GPL-2.0
/*
 * Names for addresses in the target: the symbolizer of one process (or
 * of one file), and the symbolizer of several that sends each lookup to
 * the process that names the address (procspace.c).
 *
 * It is made of single-job modules, each used only from here and from
 * the ones below it:
 *   dwflsession.c  the libdwfl session: files reported by syncprof, debug
 *                  files, each module's index (modindex.c)
 *   srclines.c     call sites' lines and a pc's frames through inlined
 *                  calls
 *   objectnames.c  lock objects: variables, members, heap holders,
 *                  argument types
 *   symcache.c     answers per address, and the strings handed out
 * What stays here: which code is mapped (maphistory.c, so a module
 * named once stays named), the JIT's perf map, and the order of a
 * lookup: cache, mapping, module, DWARF.  A miss re-reads
 * /proc/PID/maps (at most every 50 ms) and adds what was mapped since:
 * libraries dlopen'ed later resolve too.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "clock.h"
#include "demangle.h"
#include "dwflsession.h"
#include "maphistory.h"
#include "modindex.h"
#include "objectnames.h"
#include "perfmap.h"
#include "procmaps.h"
#include "srclines.h"
#include "symbolizer.h"
#include "symcache.h"

#define REFRESH_MIN_INTERVAL_NS 50000000ull
/* Unmapped code mappings kept for names (maphistory.c): ~230 KB at most. */
#define MAX_UNMAPPED 4096

/* A lock in shared memory, named by the code that took it. */
struct shared_name {
	uint64_t addr;		/* canonical */
	const char *name;	/* owned by the symbolizer that made it */
};

struct symbolizer {
	pid_t pid;
	struct dwflsession *session;
	/* The code mapped now and before: a module named once stays named. */
	struct maphistory *history;
	uint64_t last_refresh_ns;
	bool frozen;		/* the target is gone: its PID may be reused */
	struct symcache *cache;	/* answers, and every string handed out */
	struct objectnames *objects;
	struct perfmap *perfmap;	/* JIT code's names, or NULL */
	uint64_t perfmap_next_ns;	/* when it may be read again */
	/*
	 * symbolizer__new_delegating: addresses are canonical ones of
	 * several processes; each lookup goes to the symbolizer of the
	 * process that names it (procspace.c).  space: whether it delegates.
	 */
	struct symbolizer_delegate delegate;
	bool space;
	/* Shared memory's locks by the type a waiter's code named. */
	struct shared_name *shared_names;
	size_t n_shared_names, shared_names_cap;
};

/* A canonical address's symbolizer and its address there; false: none. */
static bool symbolizer__delegate(struct symbolizer *sym, uint64_t *addr,
				 struct symbolizer **to)
{
	uint64_t real;

	sym->delegate.resolve(sym->delegate.ctx, *addr, to, &real);
	*addr = real;
	return *to != NULL && *to != sym;
}

void symbolizer__use_debuginfod(struct debugfetch *fetch)
{
	dwflsession__use_debuginfod(fetch);
}

int symbolizer__refresh(struct symbolizer *sym)
{
	struct procmaps *maps;
	int err;

	if (sym->space) {
		sym->delegate.refresh(sym->delegate.ctx);
		return 0;
	}
	if (sym->frozen)
		return 0;
	err = procmaps__read(sym->pid, &maps);
	sym->last_refresh_ns = clock__monotonic_ns();
	if (err)
		return err;
	err = symbolizer__update(sym, maps);
	procmaps__free(maps);
	return err;
}

int symbolizer__update(struct symbolizer *sym, const struct procmaps *maps)
{
	int err;

	if (sym->space || sym->frozen)
		return 0;
	/* Files new since the last report get a module (from the full list:
	 * a file's load base is its lowest mapping, code or not). */
	dwflsession__report(sym->session, maps);
	/* Only code is named through the history: heap churn is no change. */
	err = maphistory__update(sym->history, maps);
	return err < 0 ? err : 0;
}

bool symbolizer__outdated(const struct symbolizer *sym,
			  const struct procmaps *maps)
{
	return !sym->space && !sym->frozen && sym->session &&
	       dwflsession__outdated(sym->session, maps);
}

/* An empty session: no module yet. */
static struct symbolizer *symbolizer__alloc(pid_t pid, const char *debuginfo_path)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	sym->pid = pid;
	if (symcache__new(&sym->cache))
		sym->cache = NULL;
	if (maphistory__new(MAX_UNMAPPED, &sym->history))
		sym->history = NULL;
	if (dwflsession__new(pid, debuginfo_path, &sym->session))
		sym->session = NULL;
	if (sym->session && sym->cache &&
	    objectnames__new(sym->session, sym->cache, pid, &sym->objects))
		sym->objects = NULL;
	/* The target's user now, for the map it may leave when gone. */
	if (pid > 0 && perfmap__new(pid, &sym->perfmap))
		sym->perfmap = NULL;
	if (!sym->cache || !sym->history || !sym->session || !sym->objects ||
	    (pid > 0 && !sym->perfmap)) {
		symbolizer__free(sym);
		return NULL;
	}
	return sym;
}

int symbolizer__new(pid_t pid, const char *debuginfo_path,
		    struct symbolizer **out)
{
	struct symbolizer *sym = symbolizer__alloc(pid, debuginfo_path);
	int err;

	if (!sym)
		return -ENOMEM;
	/* A target already gone leaves addresses unnamed, not an error. */
	err = symbolizer__refresh(sym);
	if (err == -ENOMEM) {
		symbolizer__free(sym);
		return err;
	}
	*out = sym;
	return 0;
}

int symbolizer__new_delegating(const struct symbolizer_delegate *delegate,
			       struct symbolizer **out)
{
	struct symbolizer *sym = symbolizer__alloc(0, NULL);

	if (!sym)
		return -ENOMEM;
	sym->delegate = *delegate;
	sym->space = true;
	sym->frozen = true;	/* no process of its own to read */
	*out = sym;
	return 0;
}

int symbolizer__new_file(const char *path, uint64_t base,
			 const char *debuginfo_path, struct symbolizer **out)
{
	struct procmaps_entry entry = { .start = base, .exec = true, .path = path };
	struct symbolizer *sym;
	struct procmaps *maps;
	struct stat st;
	int err;

	if (path[0] != '/')
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	/* The whole file, read-execute, at offset 0: its text is in there. */
	entry.end = base + ((uint64_t)st.st_size + 4095) / 4096 * 4096;
	entry.inode = st.st_ino;
	entry.dev = st.st_dev;
	if (entry.end <= base)
		return -EINVAL;
	sym = symbolizer__alloc(0, debuginfo_path);
	maps = procmaps__new();
	err = sym && maps ? procmaps__add(maps, &entry) : -ENOMEM;
	if (!err)
		err = maphistory__update(sym->history, maps);
	if (err < 0) {
		procmaps__free(maps);
		symbolizer__free(sym);
		return err;
	}
	dwflsession__report(sym->session, maps);
	procmaps__free(maps);
	sym->frozen = true;
	*out = sym;
	return 0;
}

void symbolizer__freeze(struct symbolizer *sym)
{
	sym->frozen = true;
	/* Its process is gone: its modules join the bounded list. */
	if (!sym->space && sym->pid > 0 && sym->session)
		dwflsession__gone(sym->session);
}

void symbolizer__housekeep(void)
{
	dwflsession__housekeep();
}

void symbolizer__cache_stats(struct symbolizer_cache_stats *out)
{
	struct dwflsession_stats st;

	dwflsession__stats(&st);
	*out = (struct symbolizer_cache_stats){
		.modules = st.modules, .gone = st.gone,
		.evictions = st.evictions, .files = st.files,
		.open_files = st.open_files, .memory_bytes = st.memory_bytes,
		.shared = st.shared,
	};
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	objectnames__free(sym->objects);
	dwflsession__free(sym->session);
	maphistory__free(sym->history);
	perfmap__free(sym->perfmap);
	symcache__free(sym->cache);
	free(sym->shared_names);
	free(sym);
}

/* ---- call sites --------------------------------------------------- */

static const struct procmaps_entry *symbolizer__mapping(struct symbolizer *sym,
							uint64_t addr)
{
	/* Newest first: a reused address belongs to what is mapped now. */
	return maphistory__find(sym->history, addr);
}

/* The mapping holding addr, the maps re-read once on a miss; or NULL. */
static const struct procmaps_entry *symbolizer__find(struct symbolizer *sym,
						     uint64_t addr)
{
	const struct procmaps_entry *e = symbolizer__mapping(sym, addr);

	if (!e && clock__monotonic_ns() - sym->last_refresh_ns > REFRESH_MIN_INTERVAL_NS &&
	    !symbolizer__refresh(sym))
		e = symbolizer__mapping(sym, addr);
	return e;
}

/*
 * Code in no file: a JIT's, named by its /tmp/perf-PID.map (perfmap.h)
 * when it writes one.  at is the lookup address (ret - 1 for a return
 * address), pc what the offset is counted to.
 */
static int symbolizer__jit(struct symbolizer *sym, uint64_t at, uint64_t pc,
			   struct symbol_info *info)
{
	uint64_t offset, now = clock__monotonic_ns(), cost;
	const char *name;

	if (!sym->perfmap)
		return -ENOENT;
	/* A map the JIT keeps growing costs at most a tenth of the time. */
	if (now >= sym->perfmap_next_ns) {
		perfmap__refresh(sym->perfmap, !sym->frozen);
		cost = clock__monotonic_ns() - now;
		sym->perfmap_next_ns = now + (cost * 10 > REFRESH_MIN_INTERVAL_NS
					      ? cost * 10 : REFRESH_MIN_INTERVAL_NS);
	}
	name = perfmap__lookup(sym->perfmap, at, &offset);
	if (!name)
		return -ENOENT;
	*info = (struct symbol_info){ 0 };
	info->function = symcache__own(sym->cache, strdup(name));
	info->function_offset = offset + (pc - at);
	return info->function ? 0 : -ENOMEM;
}

static int symbolizer__resolve(struct symbolizer *sym, uint64_t ret,
			       struct symbol_info *info)
{
	const struct procmaps_entry *e;
	uint64_t pc = ret - 1;
	Dwfl_Module *mod;
	char *inline_function = NULL;
	struct modindex *idx;
	const char *name;
	GElf_Off offset;
	int type;

	*info = (struct symbol_info){ 0 };
	e = symbolizer__find(sym, pc);
	if (!e)
		return symbolizer__jit(sym, pc, ret, info);
	info->module = e->path;
	info->module_offset = ret - e->start + e->offset;
	mod = dwflsession__module(sym->session, pc);
	if (!mod)
		return 0;
	idx = dwflsession__index(mod);
	name = idx ? modindex__symbol(idx, pc, &offset, &type) : NULL;
	if (name && type == STT_FUNC) {
		info->function = symcache__own(sym->cache, demangle__symbol(name));
		info->function_offset = offset + 1;
	}
	srclines__callsite(sym->cache, mod, idx, pc, info, &inline_function);
	if (inline_function)
		info->function = symcache__own(sym->cache, inline_function);
	return 0;
}

int symbolizer__callsite(struct symbolizer *sym, uint64_t ret_addr,
			 struct symbol_info *info)
{
	struct symbolizer *to;

	if (sym->space) {
		if (symbolizer__delegate(sym, &ret_addr, &to))
			return symbolizer__callsite(to, ret_addr, info);
		*info = (struct symbol_info){ 0 };
		return -ENOENT;
	}
	struct symcache_entry *slot = symcache__slot(sym->cache, ret_addr,
						     SYMCACHE_CALLSITE);
	int err;

	if (slot && slot->key) {
		*info = slot->info;
		return slot->err;
	}
	err = symbolizer__resolve(sym, ret_addr, info);
	if (err)
		return err;	/* not cached: a library may map it later */
	/* A miss may have refreshed and rehashed: find the slot again. */
	slot = symcache__slot(sym->cache, ret_addr, SYMCACHE_CALLSITE);
	if (slot && !slot->key) {
		symcache__fill(sym->cache, slot, ret_addr, SYMCACHE_CALLSITE);
		slot->info = *info;
		slot->err = err;
	}
	return err;
}

/* ---- frames, inlined calls expanded ------------------------------------ */

static int symbolizer__resolve_frames(struct symbolizer *sym, uint64_t pc,
				      bool is_return_address,
				      struct symbol_frame **frames, size_t *n)
{
	uint64_t at = is_return_address ? pc - 1 : pc;
	const struct procmaps_entry *e = symbolizer__find(sym, at);
	struct symbol_info base = { 0 };
	struct modindex *idx = NULL;
	Dwfl_Module *mod;
	const char *name;
	GElf_Off offset;
	int type;

	*frames = NULL;
	*n = 0;
	if (!e) {
		int err = symbolizer__jit(sym, at, pc, &base);

		if (err)
			return err;
		*frames = malloc(sizeof(**frames));
		if (!*frames)
			return -ENOMEM;
		**frames = (struct symbol_frame){ .info = base };
		*n = 1;
		return 0;
	}
	base.module = e->path;
	base.module_offset = pc - e->start + e->offset;
	mod = dwflsession__module(sym->session, at);
	if (mod)
		idx = dwflsession__index(mod);
	name = idx ? modindex__symbol(idx, at, &offset, &type) : NULL;
	if (name && type == STT_FUNC) {
		base.function = symcache__own(sym->cache, demangle__symbol(name));
		base.function_offset = offset + (pc - at);
	}
	if (mod)
		return srclines__frames(sym->cache, mod, idx, at, &base, frames,
					n);
	*frames = malloc(sizeof(**frames));
	if (!*frames)
		return -ENOMEM;
	**frames = (struct symbol_frame){ .info = base };
	*n = 1;
	return 0;
}

int symbolizer__frames(struct symbolizer *sym, uint64_t pc,
		       bool is_return_address,
		       const struct symbol_frame **frames, size_t *n)
{
	static const struct symbol_frame unknown;
	enum symcache_kind kind = is_return_address ? SYMCACHE_FRAMES_RET
						 : SYMCACHE_FRAMES_PC;
	struct symcache_entry *slot;
	struct symbol_frame *found;
	struct symbolizer *to;
	size_t n_found;
	int err;

	if (sym->space) {
		if (symbolizer__delegate(sym, &pc, &to))
			return symbolizer__frames(to, pc, is_return_address,
						  frames, n);
		*frames = &unknown;
		*n = 1;
		return -ENOENT;
	}
	slot = symcache__slot(sym->cache, pc, kind);

	if (slot && slot->key) {
		*frames = slot->frames;
		*n = slot->n_frames;
		return 0;
	}
	*frames = &unknown;
	*n = 1;
	err = symbolizer__resolve_frames(sym, pc, is_return_address, &found,
					 &n_found);
	if (err)
		return err;	/* not cached: a library may map it later */
	if (!symcache__keep(sym->cache, found))
		return -ENOMEM;
	*frames = found;
	*n = n_found;
	/* A miss may have refreshed and rehashed: find the slot again. */
	slot = symcache__slot(sym->cache, pc, kind);
	if (slot && !slot->key) {
		symcache__fill(sym->cache, slot, pc, kind);
		slot->frames = found;
		slot->n_frames = n_found;
	}
	return 0;
}

int symbolizer__module(struct symbolizer *sym, uint64_t addr,
		       struct symbol_module *out)
{
	struct symbolizer *to;

	if (sym->space) {
		if (symbolizer__delegate(sym, &addr, &to))
			return symbolizer__module(to, addr, out);
		return -ENOENT;
	}
	const struct procmaps_entry *e = symbolizer__find(sym, addr);
	Dwfl_Module *mod = e ? dwflsession__module(sym->session, addr) : NULL;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len;

	*out = (struct symbol_module){ 0 };
	if (!e)
		return -ENOENT;
	out->path = e->path;
	out->start = e->start;
	out->end = e->end;
	out->offset = e->offset;
	len = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	if (len > 0) {
		out->build_id = bits;
		out->build_id_len = (size_t)len;
	}
	return 0;
}

/* ---- objects ------------------------------------------------------ */

const char *symbolizer__argument_lock(struct symbolizer *sym,
				      uint64_t ret_addr, bool condvar)
{
	enum symcache_kind kind = condvar ? SYMCACHE_ARG_COND : SYMCACHE_ARG_LOCK;
	struct symcache_entry *slot;
	struct symbolizer *to;
	const char *name;
	bool known;

	if (sym->space)
		return symbolizer__delegate(sym, &ret_addr, &to)
		       ? symbolizer__argument_lock(to, ret_addr, condvar) : NULL;
	slot = symcache__slot(sym->cache, ret_addr, kind);
	if (slot && slot->key)
		return slot->object;
	name = objectnames__argument(sym->objects, ret_addr, condvar, &known);
	if (!known)
		return NULL;
	/* Not known is an answer too: each call site is read once. */
	slot = symcache__slot(sym->cache, ret_addr, kind);
	if (slot && !slot->key) {
		symcache__fill(sym->cache, slot, ret_addr, kind);
		slot->object = name;
	}
	return name;
}

int symbolizer__find_object(struct symbolizer *sym, const char *name,
			    uint64_t *start, uint64_t *size)
{
	return objectnames__find(sym->objects, name, start, size);
}

/*
 * What a user calls a shared mapping: memory the kernel backs with no
 * file of the user's (MAP_SHARED | MAP_ANONYMOUS shows as /dev/zero, huge
 * pages as /anon_hugepage, System V segments as /SYSV<key>, memfd_create
 * as /memfd:<name>) is "shared memory", the rest keeps its path
 * (/dev/shm/name, a mapped file).
 */
static void shared_memory_name(const char *path, char *buf, size_t len)
{
	if (!*path || !strcmp(path, "/dev/zero") ||
	    !strcmp(path, "/anon_hugepage"))
		snprintf(buf, len, "shared memory");
	else if (!strncmp(path, "/SYSV", 5) || !strncmp(path, "/memfd:", 7))
		snprintf(buf, len, "shared memory (%s)", path + 1);
	else
		snprintf(buf, len, "%s", path);
}

/*
 * Several processes: a lock in shared memory has no symbol; it is named
 * by its mapping and offset, the same from every process ("shared
 * memory+0xoff").
 */
static const char *symbolizer__space_object(struct symbolizer *sym,
					    uint64_t addr)
{
	uint64_t canonical = addr, offset;
	char mapping[PATH_MAX + 32];
	struct symbolizer *to;
	const char *path, *name;
	char *text;

	if (symbolizer__delegate(sym, &addr, &to)) {
		name = symbolizer__object(to, addr);
		if (name)
			return name;
	}
	if (!sym->delegate.shared_object(sym->delegate.ctx, canonical, &path,
					 &offset))
		return NULL;
	for (size_t i = 0; i < sym->n_shared_names; i++)
		if (sym->shared_names[i].addr == canonical)
			return sym->shared_names[i].name;
	shared_memory_name(path, mapping, sizeof(mapping));
	if (asprintf(&text, "%s+0x%" PRIx64, mapping, offset) < 0)
		return NULL;
	return symcache__keep(sym->cache, text) ? text : NULL;
}

void symbolizer__name_shared(struct symbolizer *sym, uint64_t addr,
			     const char *name)
{
	for (size_t i = 0; i < sym->n_shared_names; i++)
		if (sym->shared_names[i].addr == addr)
			return;		/* the first name stays */
	if (array__grow(&sym->shared_names, &sym->shared_names_cap,
			sym->n_shared_names + 1, sizeof(*sym->shared_names)))
		return;			/* named by its mapping, then */
	sym->shared_names[sym->n_shared_names++] =
		(struct shared_name){ addr, name };
}

bool symbolizer__shared(struct symbolizer *sym, uint64_t addr)
{
	const char *path;
	uint64_t offset;

	return sym->space && sym->delegate.shared_object(sym->delegate.ctx,
							 addr, &path, &offset);
}

const char *symbolizer__object(struct symbolizer *sym, uint64_t addr)
{
	struct symcache_entry *slot;
	const char *name;

	if (sym->space)
		return symbolizer__space_object(sym, addr);
	slot = symcache__slot(sym->cache, addr, SYMCACHE_OBJECT);
	if (slot && slot->key)
		return slot->object;
	name = objectnames__name(sym->objects, addr, !sym->frozen);
	if (!name)
		return NULL;	/* heap, stack, or a library not seen yet */
	slot = symcache__slot(sym->cache, addr, SYMCACHE_OBJECT);
	if (slot && !slot->key) {
		symcache__fill(sym->cache, slot, addr, SYMCACHE_OBJECT);
		slot->object = name;
	}
	return name;
}
