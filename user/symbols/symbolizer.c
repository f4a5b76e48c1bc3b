// SPDX-License-Identifier: GPL-2.0
/*
 * One libdwfl session per target, in the manner of eu-stack.
 *
 * Modules are reported by syncprof, not by dwfl_linux_proc_report: each
 * file is opened here, through the target's root or its map_files, so a
 * process in a container resolves, and its ELF is opened at once, so
 * reports printed after the target exited are still named.  Its DWARF is
 * read when a name is first asked for, unless the process has a root of
 * its own (a container): a separate debug file found through
 * /proc/PID/root is gone with the process, so there it is read at once.
 * Reading every module's DWARF at once cost each new program its libc
 * debug file (tens of MB, decompressed) even when nothing of it was ever
 * named: under --all, memory grew by hundreds of MB a minute.  A
 * miss re-reads /proc/PID/maps (at most every 50 ms) and adds what was
 * mapped since: libraries dlopen'ed later resolve too.
 *
 * A call site is looked up at ret - 1.  Its line is the first location,
 * from the innermost outward, that is not in a system header: the line
 * table's line, then the call sites of each inlined function around it.
 * So std::lock_guard -> std::mutex::lock -> __gthread_mutex_lock, all
 * inlined, resolve to the user's lock_guard line, while a user's own
 * inline helper keeps its own line.
 *
 * A stack's frames (symbolizer__frames) keep every inlined call instead:
 * one frame per DW_TAG_inlined_subroutine around pc, each at the line
 * the line table or the inner call's DW_AT_call_file/line gives, then
 * the real function, as eu-addr2line -i prints them.  Names are
 * demangled by libiberty (demangle.c): C++, and Rust's legacy and v0
 * manglings.
 *
 * A lock inside a global struct is named by its member path
 * (memberpath.c) from the variable's DWARF type; without DWARF, by
 * symbol+0xoff.
 *
 * Lookups go through a per-module index (modindex.c: sorted symbols and
 * DWARF function ranges, built on first use), and results are cached per
 * address (open addressing; strings owned here).
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "array.h"
#include "debugfetch.h"
#include "debugfind.h"
#include "demangle.h"
#include "dwflfile.h"
#include "holders.h"
#include "perfmap.h"
#include "log.h"
#include "maphistory.h"
#include "callarg.h"
#include "memberpath.h"
#include "modindex.h"
#include "procmaps.h"
#include "srcpath.h"
#include "symbolizer.h"
#include "targetfile.h"

#define REFRESH_MIN_INTERVAL_NS 50000000ull
/* Unmapped code mappings kept for names (maphistory.c): ~230 KB at most. */
#define MAX_UNMAPPED 4096
/* A separate debug file is copied into memory (dwflfile.c): up to this. */
#define DEBUG_FILE_MAX (1ull << 30)

enum cache_kind {
	CACHE_CALLSITE = 0,
	CACHE_OBJECT = 1,
	CACHE_FRAMES_RET = 2,	/* symbolizer__frames of a return address */
	CACHE_FRAMES_PC = 3,	/* ... of an exact pc */
	CACHE_ARG_LOCK = 4,	/* symbolizer__argument_lock, a lock's row */
	CACHE_ARG_COND = 5,	/* ... a condvar's row */
};
#define CACHE_KIND_BITS 3

struct cache_entry {
	uint64_t key;		/* (addr << CACHE_KIND_BITS | kind) + 1; 0 = empty */
	int err;
	struct symbol_info info;
	const char *object;
	const struct symbol_frame *frames;
	size_t n_frames;
};

/* Each module's userdata: what its callbacks and lookups need. */
struct module_slot {
	const char *debuginfo_path;	/* the symbolizer's */
	struct modindex *idx;		/* built on first use */
	struct dwflfile *file;		/* until libdwfl's find_elf takes it */
	int fd;				/* then libdwfl's descriptor of it */
	uint64_t size;			/* and its size when opened */
	bool shrank;			/* said it was truncated */
};

struct reported_file {
	uint64_t dev;
	uint64_t inode;
	uint64_t base;
};

struct symbolizer {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	/* The code mapped now and before: a module named once stays named. */
	struct maphistory *history;
	uint64_t last_refresh_ns;
	bool frozen;		/* the target is gone: its PID may be reused */
	bool own_root;		/* its / is not ours: DWARF read at once */
	struct reported_file *reported;
	size_t n_reported, reported_cap;
	struct cache_entry *cache;
	size_t cache_cap;	/* a power of two */
	size_t cache_used;
	struct holders *holders;	/* heap locks' named handles */
	struct perfmap *perfmap;	/* JIT code's names, or NULL */
	uint64_t perfmap_next_ns;	/* when it may be read again */
	uint64_t holders_ns;	/* when they were read */
	void **strings;		/* everything handed out, freed at the end */
	size_t n_strings;
	size_t strings_cap;
	/*
	 * symbolizer__new_delegating: addresses are canonical ones of
	 * several processes; each lookup goes to the symbolizer of the
	 * process that names it (procspace.c).  space: whether it delegates.
	 */
	struct symbolizer_delegate delegate;
	bool space;
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

/* Keeps p (malloc'ed) until symbolizer__free; false (p freed): no memory. */
static bool symbolizer__keep(struct symbolizer *sym, void *p)
{
	if (array__grow(&sym->strings, &sym->strings_cap, sym->n_strings + 1,
			sizeof(*sym->strings))) {
		free(p);
		return false;
	}
	sym->strings[sym->n_strings++] = p;
	return true;
}

/* Keeps s (malloc'ed) until symbolizer__free; NULL stays NULL. */
static const char *symbolizer__own(struct symbolizer *sym, char *s)
{
	return s && symbolizer__keep(sym, s) ? s : NULL;
}

/*
 * An ELF symbol's name as people write it: demangled, without the
 * symbol version glibc's own .symtab spells into it
 * ("__libc_start_main@@GLIBC_2.34").
 */
static char *elf_symbol_name(const char *name)
{
	const char *at = strchr(name, '@');
	char *bare, *out;

	if (!at || at == name)
		return demangle__name(name);
	bare = strndup(name, (size_t)(at - name));
	if (!bare)
		return NULL;
	out = demangle__name(bare);
	free(bare);
	return out;
}

static bool symbolizer__was_reported(struct symbolizer *sym,
				     const struct reported_file *file)
{
	for (size_t i = 0; i < sym->n_reported; i++) {
		const struct reported_file *r = &sym->reported[i];

		if (r->dev == file->dev && r->inode == file->inode &&
		    r->base == file->base)
			return true;
	}
	return false;
}

/* The lowest mapping of the same file at or before index i. */
static const struct procmaps_entry *first_mapping(const struct procmaps *maps,
						  size_t i)
{
	const struct procmaps_entry *e = procmaps__entry(maps, i);
	const struct procmaps_entry *first = e;

	while (i-- > 0) {
		const struct procmaps_entry *prev = procmaps__entry(maps, i);

		if (prev->inode != e->inode || prev->dev != e->dev)
			break;
		first = prev;
	}
	return first;
}

/*
 * The module's slot, for its file, its debug file's search and its
 * index; file (taken over) is kept for find_elf, or freed when the
 * module had its file already.  false: no slot (no memory).
 */
static bool symbolizer__slot(struct symbolizer *sym, Dwfl_Module *mod,
			     struct dwflfile *file)
{
	void **userdata;
	struct module_slot *slot;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata) {
		dwflfile__free(file);
		return true;
	}
	if (!(slot = calloc(1, sizeof(*slot)))) {
		dwflfile__free(file);
		return false;
	}
	slot->debuginfo_path = sym->debuginfo_path;
	slot->file = file;
	slot->fd = -1;
	*userdata = slot;
	return true;
}

/* libdwfl's find_elf: the file opened when the module was reported. */
static int symbolizer__find_elf(Dwfl_Module *mod, void **userdata,
				const char *modname, Dwarf_Addr base,
				char **file_name, Elf **elfp)
{
	struct module_slot *slot = *userdata;
	int fd;

	if (!slot || !slot->file)
		return -1;
	slot->size = dwflfile__size(slot->file);
	fd = dwflfile__hand_over(slot->file, file_name, elfp);
	slot->file = NULL;
	slot->fd = fd;
	return fd;
}

/* A debug file libdwfl will map: its copy in memory (see dwflfile.c). */
static int symbolizer__debug_copy(int fd, const char *name)
{
	int copy = dwflfile__copy(fd, DEBUG_FILE_MAX);

	close(fd);
	if (copy < 0)
		pr_warn("symbols: %s not read: %s", name ? name : "a debug file",
			strerror(-copy));
	return copy < 0 ? -1 : copy;
}

/*
 * Debug files from debuginfod (debugfetch.c), for every session: libdwfl
 * calls find_debuginfo with the module alone, so the fetcher is reached
 * from here, not from the session.  NULL: off.
 */
static struct debugfetch *symbolizer_fetch;

void symbolizer__use_debuginfod(struct debugfetch *fetch)
{
	symbolizer_fetch = fetch;
}

/* libdwfl's find_debuginfo: the search of debugfind.h. */
static int symbolizer__find_debuginfo(Dwfl_Module *mod, void **userdata,
				      const char *modname, Dwarf_Addr base,
				      const char *file_name,
				      const char *debuglink_file,
				      GElf_Word debuglink_crc,
				      char **debuginfo_file_name)
{
	const struct module_slot *slot = *userdata;
	const unsigned char *id;
	GElf_Addr vaddr;
	int fd, len;

	fd = debugfind__open(mod, slot ? slot->debuginfo_path
				       : ":.debug:/usr/lib/debug",
			     modname, file_name, debuglink_file,
			     debuginfo_file_name);
	if (fd >= 0)
		return symbolizer__debug_copy(fd, *debuginfo_file_name);
	if (!symbolizer_fetch)
		return fd;
	/* Not on this machine: debuginfod (debugfetch.c), with its limit. */
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len <= 0)
		return fd;
	fd = debugfetch__find(symbolizer_fetch, id, (size_t)len,
			      file_name ? file_name : modname,
			      debuginfo_file_name);
	return fd >= 0 ? symbolizer__debug_copy(fd, *debuginfo_file_name) : -1;
}

/*
 * The name libdwfl searches a debuglink's directory by: with our root,
 * /proc/PID/root/X is X (procmaps__file_path checked the identity), and
 * X stays valid after the process is gone, when its DWARF may be read.
 */
static const char *symbolizer__link_base(const struct symbolizer *sym,
					 const char *path)
{
	char root[32];
	int n;

	if (sym->own_root || sym->pid <= 0)
		return path;
	n = snprintf(root, sizeof(root), "/proc/%d/root/", (int)sym->pid);
	if (n > 0 && !strncmp(path, root, (size_t)n))
		return path + n - 1;
	return path;
}

/*
 * Reports the files of maps not reported yet.  All files are opened
 * first, then their DWARF loaded: loading is slow (libc's separate debug
 * file takes ~100 ms) and a short-lived target may be gone by then, but
 * an open file outlives it.
 */
static void symbolizer__report(struct symbolizer *sym,
			       const struct procmaps *maps)
{
	Dwfl_Module **added = calloc(procmaps__count(maps) + 1, sizeof(*added));
	size_t n_added = 0;

	dwfl_report_begin_add(sym->dwfl);
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const struct procmaps_entry *first;
		struct reported_file file;
		struct dwflfile *elf;
		char path[PATH_MAX];
		Dwfl_Module *mod;
		int fd, err;

		if (!e->exec || e->path[0] != '/')
			continue;
		first = first_mapping(maps, i);
		file = (struct reported_file){
			.dev = e->dev,
			.inode = e->inode,
			.base = first->start - first->offset,
		};
		if (symbolizer__was_reported(sym, &file))
			continue;
		if (sym->pid <= 0) {
			/* symbolizer__new_file: a file here, no process. */
			snprintf(path, sizeof(path), "%s", e->path);
		} else if (procmaps__file_path(sym->pid, e, path, sizeof(path))) {
			pr_debug("symbols: cannot open %s", e->path);
			continue;
		}
		if (targetfile__open(path, 0, &fd))
			continue;
		/* dwflfile owns fd from here. */
		err = dwflfile__open(fd, file.base,
				     symbolizer__link_base(sym, path), &elf);
		if (err) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 strerror(-err));
			continue;
		}
		mod = dwflfile__report(elf, sym->dwfl, e->path);
		if (!mod) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 dwfl_errmsg(-1));
			dwflfile__free(elf);
			continue;
		}
		if (!symbolizer__slot(sym, mod, elf))
			continue;
		pr_debug("symbols: %s at 0x%" PRIx64, e->path, file.base);
		if (added)
			added[n_added++] = mod;
		if (!array__grow(&sym->reported, &sym->reported_cap,
				 sym->n_reported + 1, sizeof(*sym->reported)))
			sym->reported[sym->n_reported++] = file;
	}
	dwfl_report_end(sym->dwfl, NULL, NULL);
	/* Each file to libdwfl now (find_elf): build IDs are read from it. */
	for (size_t i = 0; i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getelf(added[i], &bias))
			pr_debug("symbols: cannot use %s: %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL),
				 dwfl_errmsg(-1));
	}
	for (size_t i = 0; sym->own_root && i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getdwarf(added[i], &bias))
			pr_debug("symbols: no DWARF for %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL));
	}
	free(added);
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
	/* Files new since the last report get a module (from the full list:
	 * a file's load base is its lowest mapping, code or not). */
	symbolizer__report(sym, maps);
	/* Only code is named through the history: heap churn is no change. */
	err = maphistory__update(sym->history, maps);
	procmaps__free(maps);
	return err < 0 ? err : 0;
}


/* Whether the process sees the same / as syncprof (not a container's). */
static bool symbolizer__shares_root(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
	if (stat("/", &ours) || stat(path, &theirs))
		return false;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

/* An empty session: no module yet. */
static struct symbolizer *symbolizer__alloc(pid_t pid, const char *debuginfo_path)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	sym->pid = pid;
	sym->cache_cap = 1024;
	sym->cache = calloc(sym->cache_cap, sizeof(*sym->cache));
	if (maphistory__new(MAX_UNMAPPED, &sym->history))
		sym->history = NULL;
	if (debuginfo_path)
		sym->debuginfo_path = strdup(debuginfo_path);
	else if (pid <= 0)
		sym->debuginfo_path = strdup(":.debug:/usr/lib/debug");
	else if (asprintf(&sym->debuginfo_path,
			  ":.debug:/usr/lib/debug:/proc/%d/root/usr/lib/debug",
			  (int)pid) < 0)
		sym->debuginfo_path = NULL;
	sym->own_root = pid > 0 && !symbolizer__shares_root(pid);
	/* The target's user now, for the map it may leave when gone. */
	if (pid > 0 && perfmap__new(pid, &sym->perfmap))
		sym->perfmap = NULL;
	if (!sym->cache || !sym->history || !sym->debuginfo_path ||
	    (pid > 0 && !sym->perfmap)) {
		symbolizer__free(sym);
		return NULL;
	}
	sym->callbacks = (Dwfl_Callbacks){
		.find_elf = symbolizer__find_elf,
		.find_debuginfo = symbolizer__find_debuginfo,
		.debuginfo_path = &sym->debuginfo_path,
	};
	sym->dwfl = dwfl_begin(&sym->callbacks);
	if (!sym->dwfl) {
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
	symbolizer__report(sym, maps);
	procmaps__free(maps);
	sym->frozen = true;
	*out = sym;
	return 0;
}

static int free_module_index(Dwfl_Module *mod, void **userdata,
			     const char *name, Dwarf_Addr start, void *arg)
{
	struct module_slot *slot = *userdata;

	if (slot) {
		modindex__free(slot->idx);
		dwflfile__free(slot->file);
	}
	free(slot);
	*userdata = NULL;
	return DWARF_CB_OK;
}

void symbolizer__freeze(struct symbolizer *sym)
{
	sym->frozen = true;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	if (sym->dwfl) {
		dwfl_getmodules(sym->dwfl, free_module_index, NULL, 0);
		dwfl_end(sym->dwfl);
	}
	maphistory__free(sym->history);
	holders__free(sym->holders);
	perfmap__free(sym->perfmap);
	for (size_t i = 0; i < sym->n_strings; i++)
		free(sym->strings[i]);
	free(sym->strings);
	free(sym->reported);
	free(sym->cache);
	free(sym->debuginfo_path);
	free(sym);
}

/* ---- the cache ---------------------------------------------------- */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static struct cache_entry *cache_slot(struct cache_entry *table, size_t cap,
				      uint64_t key)
{
	size_t i = (size_t)hash64(key) & (cap - 1);

	while (table[i].key && table[i].key != key)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

static int symbolizer__cache_grow(struct symbolizer *sym)
{
	size_t cap = sym->cache_cap * 2;
	struct cache_entry *table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < sym->cache_cap; i++)
		if (sym->cache[i].key)
			*cache_slot(table, cap, sym->cache[i].key) = sym->cache[i];
	free(sym->cache);
	sym->cache = table;
	sym->cache_cap = cap;
	return 0;
}

/* The slot for key: filled (key set) if cached, else empty; NULL: no memory. */
static struct cache_entry *symbolizer__cache(struct symbolizer *sym,
					     uint64_t addr, enum cache_kind kind)
{
	uint64_t key = (addr << CACHE_KIND_BITS | kind) + 1;	/* never 0 */

	if ((sym->cache_used + 1) * 4 > sym->cache_cap * 3 &&
	    symbolizer__cache_grow(sym))
		return NULL;
	return cache_slot(sym->cache, sym->cache_cap, key);
}

static void symbolizer__cache_fill(struct symbolizer *sym,
				   struct cache_entry *slot, uint64_t addr,
				   enum cache_kind kind)
{
	slot->key = (addr << CACHE_KIND_BITS | kind) + 1;
	sym->cache_used++;
}

/* ---- call sites --------------------------------------------------- */

static const struct procmaps_entry *symbolizer__mapping(struct symbolizer *sym,
							uint64_t addr)
{
	/* Newest first: a reused address belongs to what is mapped now. */
	return maphistory__find(sym->history, addr);
}

/* The module's index, built on first use; NULL if it cannot be. */
static struct modindex *module_index(Dwfl_Module *mod)
{
	void **userdata;
	const char *name = dwfl_module_info(mod, &userdata, NULL, NULL, NULL,
					    NULL, NULL, NULL);
	struct module_slot *slot = *userdata;
	uint64_t now;

	if (!slot || slot->idx)
		return slot ? slot->idx : NULL;
	if (modindex__build(mod, &slot->idx))
		slot->idx = NULL;
	/* Read once: a file cut short meanwhile is said once. */
	if (!slot->shrank && dwflfile__shrank(slot->fd, slot->size, &now)) {
		slot->shrank = true;
		pr_warn("symbols: %s was truncated while syncprof read it (%"
			PRIu64 " bytes, then %" PRIu64 "); what was past its "
			"end is not named", name, slot->size, now);
	}
	return slot->idx;
}

/* A function's name from its DIE: linkage name demangled, else its name. */
static char *die_function_name(Dwarf_Die *die)
{
	static const unsigned int linkage_attrs[] = {
		DW_AT_linkage_name, DW_AT_MIPS_linkage_name,
	};
	Dwarf_Attribute attr;
	const char *name;

	for (size_t i = 0; i < 2; i++) {
		name = dwarf_formstring(dwarf_attr_integrate(die, linkage_attrs[i],
							     &attr));
		if (name)
			return demangle__name(name);
	}
	name = dwarf_diename(die);
	return name ? strdup(name) : NULL;
}

static bool is_function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * file:line of pc through the inline chain (see the top of this file).
 * *inline_scope is set when the chosen line lies in an inlined function
 * (its DIE names the function), left NULL for the real function.
 */
static void symbolizer__source(struct symbolizer *sym, Dwfl_Module *mod,
			       struct modindex *idx, Dwarf_Addr pc,
			       struct symbol_info *info, char **inline_function)
{
	Dwfl_Line *line = modindex__dwarf_usable(idx) ?
			  dwfl_module_getsrc(mod, pc) : NULL;
	Dwarf_Die *scopes = NULL, *cudie, cu_mem;
	Dwarf_Files *files = NULL;
	const char *file;
	size_t nfiles = 0;
	int lineno = 0, nscopes;

	*inline_function = NULL;
	if (!line)
		return;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file)
		return;
	nscopes = idx ? modindex__scopes(idx, pc, &scopes) : 0;
	cudie = nscopes > 0 ? dwarf_diecu(&scopes[nscopes - 1], &cu_mem, NULL, NULL)
			    : NULL;
	if (!cudie) {
		Dwarf_Addr bias;

		cudie = dwfl_module_addrdie(mod, pc, &bias);
	}
	if (cudie)
		dwarf_getsrcfiles(cudie, &files, &nfiles);

	/* The location inside scopes[at]; walk out while it is a system header. */
	int at = 0;

	while (file && srcpath__is_system(file) && at < nscopes) {
		Dwarf_Attribute attr;
		Dwarf_Word call_file, call_line;
		int next;

		while (at < nscopes && dwarf_tag(&scopes[at]) != DW_TAG_inlined_subroutine) {
			if (dwarf_tag(&scopes[at]) == DW_TAG_subprogram)
				at = nscopes;	/* the real function: no caller here */
			else
				at++;
		}
		if (at >= nscopes)
			break;
		if (dwarf_formudata(dwarf_attr(&scopes[at], DW_AT_call_file, &attr), &call_file) ||
		    dwarf_formudata(dwarf_attr(&scopes[at], DW_AT_call_line, &attr), &call_line) ||
		    !files)
			break;
		/* The call of inline `at` lies in the next function scope out. */
		for (next = at + 1; next < nscopes && !is_function_scope(&scopes[next]); next++)
			;
		file = dwarf_filesrc(files, call_file, NULL, NULL);
		lineno = (int)call_line;
		at = next;
	}
	if (file) {
		Dwarf_Attribute attr;
		const char *comp_dir = cudie ? dwarf_formstring(
			dwarf_attr(cudie, DW_AT_comp_dir, &attr)) : NULL;

		info->file = symbolizer__own(sym, srcpath__join(comp_dir, file));
		info->line = lineno > 0 ? (unsigned int)lineno : 0;
	}
	/* Name the inlined function the line is in, if it is one. */
	for (int i = at; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			*inline_function = die_function_name(&scopes[i]);
			break;
		}
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
	}
	free(scopes);
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
	info->function = symbolizer__own(sym, strdup(name));
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
	mod = dwfl_addrmodule(sym->dwfl, pc);
	if (!mod)
		return 0;
	idx = module_index(mod);
	name = idx ? modindex__symbol(idx, pc, &offset, &type) : NULL;
	if (name && type == STT_FUNC) {
		info->function = symbolizer__own(sym, elf_symbol_name(name));
		info->function_offset = offset + 1;
	}
	symbolizer__source(sym, mod, idx, pc, info, &inline_function);
	if (inline_function)
		info->function = symbolizer__own(sym, inline_function);
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
	struct cache_entry *slot = symbolizer__cache(sym, ret_addr, CACHE_CALLSITE);
	int err;

	if (slot && slot->key) {
		*info = slot->info;
		return slot->err;
	}
	err = symbolizer__resolve(sym, ret_addr, info);
	if (err)
		return err;	/* not cached: a library may map it later */
	/* A miss may have refreshed and rehashed: find the slot again. */
	slot = symbolizer__cache(sym, ret_addr, CACHE_CALLSITE);
	if (slot && !slot->key) {
		symbolizer__cache_fill(sym, slot, ret_addr, CACHE_CALLSITE);
		slot->info = *info;
		slot->err = err;
	}
	return err;
}

/* ---- frames, inlined calls expanded ------------------------------------ */

/*
 * The frames of the code at pc, innermost first, as eu-addr2line -i
 * gives them: the line table names the innermost location; each inlined
 * subroutine around it is a frame whose caller's location is its
 * DW_AT_call_file:DW_AT_call_line; the subprogram they were inlined into
 * is the last frame.  base holds what all frames share (module, offset)
 * and the ELF symbol's name for the outermost one.
 */
static int symbolizer__expand(struct symbolizer *sym, Dwfl_Module *mod,
			      struct modindex *idx, Dwarf_Addr pc,
			      const struct symbol_info *base,
			      struct symbol_frame **out, size_t *n)
{
	Dwfl_Line *line = modindex__dwarf_usable(idx) ?
			  dwfl_module_getsrc(mod, pc) : NULL;
	Dwarf_Die *scopes = NULL, *cudie = NULL, cu_mem;
	Dwarf_Files *files = NULL;
	const char *file = NULL, *comp_dir = NULL;
	size_t nfiles = 0, cap = 0;
	int lineno = 0, nscopes, err = 0;
	Dwarf_Attribute attr;

	*out = NULL;
	*n = 0;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	nscopes = idx ? modindex__scopes(idx, pc, &scopes) : 0;
	if (nscopes > 0)
		cudie = dwarf_diecu(&scopes[nscopes - 1], &cu_mem, NULL, NULL);
	if (!cudie && modindex__dwarf_usable(idx)) {
		Dwarf_Addr bias;

		cudie = dwfl_module_addrdie(mod, pc, &bias);
	}
	if (cudie) {
		dwarf_getsrcfiles(cudie, &files, &nfiles);
		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir,
						       &attr));
	}
	for (int i = 0; i <= nscopes; i++) {
		int tag = i < nscopes ? dwarf_tag(&scopes[i]) : DW_TAG_subprogram;
		struct symbol_frame *f;
		Dwarf_Word call_file, call_line;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;	/* a lexical block */
		if (array__grow(out, &cap, *n + 1, sizeof(**out))) {
			err = -ENOMEM;
			break;
		}
		f = &(*out)[(*n)++];
		*f = (struct symbol_frame){ .info = *base };
		if (i < nscopes) {
			int decl = 0;

			if (!dwarf_decl_line(&scopes[i], &decl) && decl > 0)
				f->decl_line = (unsigned int)decl;
		}
		if (file) {
			f->info.file = symbolizer__own(sym, srcpath__join(comp_dir,
									 file));
			f->info.line = lineno > 0 ? (unsigned int)lineno : 0;
		}
		if (tag == DW_TAG_subprogram) {
			/* The real function: the ELF symbol names it, as a
			   call site; else its DIE. */
			if (!f->info.function && i < nscopes)
				f->info.function = symbolizer__own(
					sym, die_function_name(&scopes[i]));
			break;
		}
		f->inlined = true;
		f->info.function = symbolizer__own(sym,
						   die_function_name(&scopes[i]));
		f->info.function_offset = 0;
		/* Where it was inlined: the location in the next frame out. */
		file = NULL;
		lineno = 0;
		if (files &&
		    !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr),
				     &call_file) &&
		    !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr),
				     &call_line)) {
			file = dwarf_filesrc(files, call_file, NULL, NULL);
			lineno = (int)call_line;
		}
	}
	free(scopes);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

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
	mod = dwfl_addrmodule(sym->dwfl, at);
	if (mod)
		idx = module_index(mod);
	name = idx ? modindex__symbol(idx, at, &offset, &type) : NULL;
	if (name && type == STT_FUNC) {
		base.function = symbolizer__own(sym, elf_symbol_name(name));
		base.function_offset = offset + (pc - at);
	}
	if (mod)
		return symbolizer__expand(sym, mod, idx, at, &base, frames, n);
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
	enum cache_kind kind = is_return_address ? CACHE_FRAMES_RET
						 : CACHE_FRAMES_PC;
	struct cache_entry *slot;
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
	slot = symbolizer__cache(sym, pc, kind);

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
	if (!symbolizer__keep(sym, found))
		return -ENOMEM;
	*frames = found;
	*n = n_found;
	/* A miss may have refreshed and rehashed: find the slot again. */
	slot = symbolizer__cache(sym, pc, kind);
	if (slot && !slot->key) {
		symbolizer__cache_fill(sym, slot, pc, kind);
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
	Dwfl_Module *mod = e ? dwfl_addrmodule(sym->dwfl, addr) : NULL;
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

/*
 * A heap object (in no module): the variable whose first word points to
 * it (holders.h), read from the live target at most once a second.
 */
static const char *symbolizer__held_object(struct symbolizer *sym,
					   uint64_t addr)
{
	uint64_t now = clock__monotonic_ns();
	const char *name;

	if (!sym->frozen && (!sym->holders ||
			     now - sym->holders_ns > 1000000000ull)) {
		struct holders *h;

		if (!holders__build(sym->dwfl, sym->pid, &h)) {
			holders__free(sym->holders);
			sym->holders = h;
			sym->holders_ns = now;
		}
	}
	name = holders__find(sym->holders, addr);
	return name ? symbolizer__own(sym, strdup(name)) : NULL;
}

/* The DWARF type of the variable whose symbol starts at addr. */
static bool variable_type(struct modindex *idx, uint64_t addr, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	Dwarf_Die var;

	return !modindex__variable(idx, addr, &var) &&
	       dwarf_attr_integrate(&var, DW_AT_type, &attr) &&
	       dwarf_formref_die(&attr, type);
}

static const char *symbolizer__resolve_object(struct symbolizer *sym,
					      uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(sym->dwfl, addr);
	struct modindex *idx = mod ? module_index(mod) : NULL;
	Dwarf_Die type;
	const char *name;
	GElf_Off offset;
	char *full, *out;
	int kind;

	if (!idx)
		return symbolizer__held_object(sym, addr);
	name = modindex__symbol(idx, addr, &offset, &kind);
	if (!name || kind != STT_OBJECT)
		return NULL;
	full = elf_symbol_name(name);
	if (!full)
		return NULL;
	/* With DWARF, the member's path ("queue.not_empty", memberpath.h). */
	if (variable_type(idx, addr - offset, &type) &&
	    !memberpath__name(&type, offset, full, &out)) {
		free(full);
		return symbolizer__own(sym, out);
	}
	if (!offset)
		return symbolizer__own(sym, full);
	if (asprintf(&out, "%s+0x%" PRIx64, full, (uint64_t)offset) < 0)
		out = NULL;
	free(full);
	return symbolizer__own(sym, out);
}

/* The lock passed at the call returning to ret_addr, by its pointer's type. */
static const char *symbolizer__resolve_argument(struct symbolizer *sym,
						uint64_t ret_addr, bool condvar,
						bool *known)
{
	Dwfl_Module *mod = dwfl_addrmodule(sym->dwfl, ret_addr - 1);
	struct modindex *idx = mod ? module_index(mod) : NULL;
	struct callarg_abi abi;
	Dwarf_Die *scopes = NULL;
	Dwarf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf;
	char *name;
	int n;

	*known = idx != NULL;	/* without the module, it may come later */
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (!idx || !elf || !gelf_getehdr(elf, &ehdr) ||
	    callarg__abi(ehdr.e_machine, &abi) ||
	    !dwfl_module_getdwarf(mod, &bias))
		return NULL;
	n = modindex__scopes(idx, ret_addr - 1, &scopes);
	if (callarg__lock_name(scopes, n, ret_addr - bias, &abi, condvar, &name))
		name = NULL;
	free(scopes);
	return name ? symbolizer__own(sym, name) : NULL;
}

const char *symbolizer__argument_lock(struct symbolizer *sym,
				      uint64_t ret_addr, bool condvar)
{
	enum cache_kind kind = condvar ? CACHE_ARG_COND : CACHE_ARG_LOCK;
	struct cache_entry *slot;
	struct symbolizer *to;
	const char *name;
	bool known;

	if (sym->space)
		return symbolizer__delegate(sym, &ret_addr, &to)
		       ? symbolizer__argument_lock(to, ret_addr, condvar) : NULL;
	slot = symbolizer__cache(sym, ret_addr, kind);
	if (slot && slot->key)
		return slot->object;
	name = symbolizer__resolve_argument(sym, ret_addr, condvar, &known);
	if (!known)
		return NULL;
	/* Not known is an answer too: each call site is read once. */
	slot = symbolizer__cache(sym, ret_addr, kind);
	if (slot && !slot->key) {
		symbolizer__cache_fill(sym, slot, ret_addr, kind);
		slot->object = name;
	}
	return name;
}

/* What symbolizer__find_object looks for, and what it found. */
struct object_search {
	const char *name;
	uint64_t start, size;
	int found;
};

static int find_object_in(Dwfl_Module *mod, void **userdata __attribute__((unused)),
			  const char *modname __attribute__((unused)),
			  Dwarf_Addr base __attribute__((unused)), void *arg)
{
	struct object_search *q = arg;
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &addr,
							   NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
		    s.st_shndx == SHN_UNDEF || strcmp(name, q->name))
			continue;
		q->start = addr;
		q->size = s.st_size;
		q->found++;
		break;
	}
	return DWARF_CB_OK;
}

static int symbolizer__find_symbol(struct symbolizer *sym, const char *name,
				   uint64_t *start, uint64_t *size)
{
	struct object_search q = { .name = name };

	if (dwfl_getmodules(sym->dwfl, find_object_in, &q, 0) < 0)
		return -EIO;
	if (!q.found)
		return -ENOENT;
	if (q.found > 1)
		return -ENOTUNIQ;
	*start = q.start;
	*size = q.size;
	return 0;
}

/* A member path ("queue.not_empty", "table[3].lock"), by DWARF. */
static int symbolizer__find_member(struct symbolizer *sym, const char *name,
				   uint64_t *start, uint64_t *size)
{
	/* The variable's name ends at the first '.' or '[' ("ns::v.m"). */
	size_t len = strcspn(name, ".[");
	Dwfl_Module *mod;
	struct modindex *idx;
	Dwarf_Die type;
	uint64_t offset, base, bytes;
	char *symbol;
	int err;

	if (!name[len] || !len)
		return -ENOENT;
	symbol = strndup(name, len);
	if (!symbol)
		return -ENOMEM;
	err = symbolizer__find_symbol(sym, symbol, &base, &bytes);
	free(symbol);
	if (err)
		return err;
	mod = dwfl_addrmodule(sym->dwfl, base);
	idx = mod ? module_index(mod) : NULL;
	if (!idx || !variable_type(idx, base, &type) ||
	    memberpath__find(&type, name + len, &offset, size))
		return -ENOENT;
	*start = base + offset;
	return 0;
}

int symbolizer__find_object(struct symbolizer *sym, const char *name,
			    uint64_t *start, uint64_t *size)
{
	int err = symbolizer__find_symbol(sym, name, start, size);

	return err == -ENOENT ? symbolizer__find_member(sym, name, start, size)
			      : err;
}

/*
 * Several processes: a lock in shared memory has no symbol; it is named
 * by its mapping and offset, the same from every process ("path+0xoff").
 */
static const char *symbolizer__space_object(struct symbolizer *sym,
					    uint64_t addr)
{
	uint64_t canonical = addr, offset;
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
	if (asprintf(&text, "%s+0x%" PRIx64, path, offset) < 0)
		return NULL;
	return symbolizer__keep(sym, text) ? text : NULL;
}

const char *symbolizer__object(struct symbolizer *sym, uint64_t addr)
{
	struct cache_entry *slot;
	const char *name;

	if (sym->space)
		return symbolizer__space_object(sym, addr);
	slot = symbolizer__cache(sym, addr, CACHE_OBJECT);
	if (slot && slot->key)
		return slot->object;
	name = symbolizer__resolve_object(sym, addr);
	if (!name)
		return NULL;	/* heap, stack, or a library not seen yet */
	slot = symbolizer__cache(sym, addr, CACHE_OBJECT);
	if (slot && !slot->key) {
		symbolizer__cache_fill(sym, slot, addr, CACHE_OBJECT);
		slot->object = name;
	}
	return name;
}
