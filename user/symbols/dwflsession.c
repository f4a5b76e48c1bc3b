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
 * named: under --all, memory grew by hundreds of MB a minute.
 *
 * Separate debug files are found by debugfind.c, else fetched by
 * debugfetch.c, and read from a private copy (dwflfile.c).  Each
 * module's index (modindex.c: sorted symbols and DWARF function ranges)
 * is built on first use and lives in the module's userdata.
 */
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "debugfetch.h"
#include "debugfind.h"
#include "dwflfile.h"
#include "dwflsession.h"
#include "elfshare.h"
#include "log.h"
#include "modindex.h"
#include "procmaps.h"
#include "targetfile.h"

/* A separate debug file is copied into memory (dwflfile.c): up to this. */
#define DEBUG_FILE_MAX (1ull << 30)
/* Modules no process maps any more, kept for naming, in all sessions. */
#define GONE_MAX 64
/* Deleted files no process maps any more, read into memory: in all. */
#define GONE_MEMORY_MAX (64ull << 20)

/* Each module's userdata: what its callbacks and lookups need. */
struct module_slot {
	const char *debuginfo_path;	/* the session's */
	struct dwflsession *owner;
	Dwfl_Module *mod;
	struct modindex *idx;		/* built on first use */
	struct dwflfile *file;		/* until libdwfl's find_elf takes it */
	struct elfshare_file *share;	/* the file, whoever maps it */
	uint64_t dev, inode, base;
	bool shrank;			/* said it was truncated */
	bool mapped;			/* in the process's latest maps */
	bool release;			/* to be removed from its session */
	struct module_slot *gone_prev, *gone_next; /* while !mapped */
};

struct dwflsession {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	bool own_root;		/* its / is not ours: DWARF read at once */
	bool gone;		/* its process is: nothing is mapped */
	struct module_slot **slots;
	size_t n_slots, slots_cap;
};

/*
 * The modules no process maps, oldest first, of every session; the
 * counts with atomics: /metrics may read them from another thread.
 */
static struct {
	struct module_slot *head, *tail;
	uint64_t n;
	struct dwflsession_stats stats;
} gone;
#define COUNT(field, delta) \
	__atomic_add_fetch(&(field), (uint64_t)(delta), __ATOMIC_RELAXED)

static void gone__add(struct module_slot *slot)
{
	slot->gone_prev = gone.tail;
	slot->gone_next = NULL;
	if (gone.tail)
		gone.tail->gone_next = slot;
	else
		gone.head = slot;
	gone.tail = slot;
	COUNT(gone.n, 1);
}

static void gone__remove(struct module_slot *slot)
{
	if (slot->gone_prev)
		slot->gone_prev->gone_next = slot->gone_next;
	else
		gone.head = slot->gone_next;
	if (slot->gone_next)
		slot->gone_next->gone_prev = slot->gone_prev;
	else
		gone.tail = slot->gone_prev;
	slot->gone_prev = slot->gone_next = NULL;
	COUNT(gone.n, -1);
}

static struct module_slot *dwflsession__find_slot(struct dwflsession *s,
						  uint64_t dev, uint64_t inode,
						  uint64_t base)
{
	for (size_t i = 0; i < s->n_slots; i++) {
		struct module_slot *r = s->slots[i];

		if (r->dev == dev && r->inode == inode && r->base == base)
			return r;
	}
	return NULL;
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
 * index; file (taken over) is kept for find_elf, share (taken over) for
 * the module's life.  false: no slot (no memory), both freed.
 */
static bool dwflsession__slot(struct dwflsession *s, Dwfl_Module *mod,
			      struct dwflfile *file,
			      struct elfshare_file *share,
			      const struct module_slot *id)
{
	void **userdata;
	struct module_slot *slot;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata ||
	    array__grow(&s->slots, &s->slots_cap, s->n_slots + 1,
			sizeof(*s->slots)) ||
	    !(slot = calloc(1, sizeof(*slot)))) {
		dwflfile__free(file);
		elfshare__put(share);
		return *userdata != NULL;
	}
	*slot = *id;
	slot->debuginfo_path = s->debuginfo_path;
	slot->owner = s;
	slot->mod = mod;
	slot->file = file;
	slot->share = share;
	slot->mapped = true;
	elfshare__mapped(share, 1);
	*userdata = slot;
	s->slots[s->n_slots++] = slot;
	COUNT(gone.stats.modules, 1);
	return true;
}

static void slot_free(struct module_slot *slot)
{
	if (!slot)
		return;
	if (!slot->mapped)
		gone__remove(slot);
	else
		elfshare__mapped(slot->share, -1);
	modindex__free(slot->idx);
	dwflfile__free(slot->file);
	elfshare__put(slot->share);
	COUNT(gone.stats.modules, -1);
	free(slot);
}

/* libdwfl's find_elf: the file opened when the module was reported. */
static int dwflsession__find_elf(Dwfl_Module *mod, void **userdata,
				 const char *modname, Dwarf_Addr base,
				 char **file_name, Elf **elfp)
{
	struct module_slot *slot = *userdata;
	int fd;

	if (!slot || !slot->file)
		return -1;
	fd = dwflfile__hand_over(slot->file, file_name, elfp);
	slot->file = NULL;
	return fd;
}

/* A debug file libdwfl will map: its copy in memory (see dwflfile.c). */
static int dwflsession__debug_copy(int fd, const char *name)
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
static struct debugfetch *session_fetch;

void dwflsession__use_debuginfod(struct debugfetch *fetch)
{
	session_fetch = fetch;
}

/* libdwfl's find_debuginfo: the search of debugfind.h. */
static int dwflsession__find_debuginfo(Dwfl_Module *mod, void **userdata,
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
		return dwflsession__debug_copy(fd, *debuginfo_file_name);
	if (!session_fetch)
		return fd;
	/* Not on this machine: debuginfod (debugfetch.c), with its limit. */
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len <= 0)
		return fd;
	fd = debugfetch__find(session_fetch, id, (size_t)len,
			      file_name ? file_name : modname,
			      slot ? elfshare__size(slot->share) : 0,
			      debuginfo_file_name);
	return fd >= 0 ? dwflsession__debug_copy(fd, *debuginfo_file_name) : -1;
}

/*
 * The name libdwfl searches a debuglink's directory by: with our root,
 * /proc/PID/root/X is X (procmaps__file_path checked the identity), and
 * X stays valid after the process is gone, when its DWARF may be read.
 */
static const char *dwflsession__link_base(const struct dwflsession *s,
					  const char *path)
{
	char root[32];
	int n;

	if (s->own_root || s->pid <= 0)
		return path;
	n = snprintf(root, sizeof(root), "/proc/%d/root/", (int)s->pid);
	if (n > 0 && !strncmp(path, root, (size_t)n))
		return path + n - 1;
	return path;
}

/* A module left or re-entered its process's maps. */
static void slot_set_mapped(struct module_slot *slot, bool mapped)
{
	if (slot->mapped == mapped)
		return;
	slot->mapped = mapped;
	if (mapped) {
		gone__remove(slot);
		elfshare__mapped(slot->share, 1);
	} else {
		gone__add(slot);
		elfshare__mapped(slot->share, -1);
	}
}

/* dwfl_report_end's: userdata is the module's void ** (MODCB_ARGS). */
static int removed_module(Dwfl_Module *mod, void *userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	void **data = userdata;
	struct module_slot *slot = *data;
	struct dwflsession *s = arg;

	*data = NULL;
	for (size_t i = 0; slot && i < s->n_slots; i++) {
		if (s->slots[i] == slot) {
			s->slots[i] = s->slots[--s->n_slots];
			break;
		}
	}
	slot_free(slot);
	return DWARF_CB_OK;
}

/* Removes the session's modules marked release: all others reported again. */
static void dwflsession__release(struct dwflsession *s)
{
	Dwfl *dwfl = s->dwfl;

	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < s->n_slots; i++) {
		Dwarf_Addr start, end;
		const char *name;

		if (s->slots[i]->release)
			continue;
		name = dwfl_module_info(s->slots[i]->mod, NULL, &start, &end,
					NULL, NULL, NULL, NULL);
		/* The same name and range: libdwfl keeps the module as is. */
		if (!dwfl_report_module(dwfl, name, start, end))
			pr_debug("symbols: %s: %s", name, dwfl_errmsg(-1));
	}
	dwfl_report_end(dwfl, removed_module, s);
}

/*
 * The list of modules no process maps kept to its bounds: a deleted
 * file is not kept open (elfshare.c), the oldest beyond GONE_MAX go.
 */
static void gone__trim(void)
{
	struct dwflsession *owners[GONE_MAX + 8];
	size_t n_owners = 0;
	uint64_t n = gone.n;

	for (struct module_slot *slot = gone.head; slot;
	     slot = slot->gone_next) {
		bool release = n > GONE_MAX ||
			       elfshare__release_deleted(slot->share,
							 GONE_MEMORY_MAX);

		if (!release)
			continue;
		n--;
		slot->release = true;
		COUNT(gone.stats.evictions, 1);
		for (size_t i = 0; i < n_owners; i++)
			if (owners[i] == slot->owner)
				goto next;
		if (n_owners == ARRAY_SIZE(owners)) {
			/* The rest at the next trim. */
			slot->release = false;
			COUNT(gone.stats.evictions, -1);
			break;
		}
		owners[n_owners++] = slot->owner;
next:		;
	}
	for (size_t i = 0; i < n_owners; i++)
		dwflsession__release(owners[i]);
}

/*
 * Reports the files of maps not reported yet.  All files are opened
 * first, then their DWARF loaded: loading is slow (libc's separate debug
 * file takes ~100 ms) and a short-lived target may be gone by then, but
 * an open file outlives it.  Modules not in maps leave it (see the top).
 */
void dwflsession__report(struct dwflsession *s, const struct procmaps *maps)
{
	Dwfl_Module **added = calloc(procmaps__count(maps) + 1, sizeof(*added));
	size_t n_added = 0;
	bool *seen = calloc(s->n_slots + 1, sizeof(*seen));
	size_t n_before = s->n_slots;

	dwfl_report_begin_add(s->dwfl);
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const struct procmaps_entry *first;
		struct module_slot file, *known;
		struct elfshare_file *share;
		struct dwflfile *elf;
		char path[PATH_MAX];
		Dwfl_Module *mod;
		int fd, err;

		if (!e->exec || e->path[0] != '/')
			continue;
		first = first_mapping(maps, i);
		file = (struct module_slot){
			.dev = e->dev,
			.inode = e->inode,
			.base = first->start - first->offset,
		};
		known = dwflsession__find_slot(s, file.dev, file.inode,
					       file.base);
		if (known) {
			slot_set_mapped(known, true);
			for (size_t k = 0; seen && k < n_before; k++)
				if (s->slots[k] == known)
					seen[k] = true;
			continue;
		}
		if (s->pid <= 0) {
			/* No process (symbolizer__new_file): a file here. */
			snprintf(path, sizeof(path), "%s", e->path);
		} else if (procmaps__file_path(s->pid, e, path, sizeof(path))) {
			pr_debug("symbols: cannot open %s", e->path);
			continue;
		}
		if (targetfile__open(path, 0, &fd))
			continue;
		/* elfshare owns fd from here. */
		err = elfshare__get(fd, &share);
		if (!err) {
			err = dwflfile__open(share, file.base,
					     dwflsession__link_base(s, path),
					     &elf);
			if (err)
				elfshare__put(share);
		}
		if (err) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 strerror(-err));
			continue;
		}
		mod = dwflfile__report(elf, s->dwfl, e->path);
		if (!mod) {
			pr_debug("symbols: cannot use %s: %s", e->path,
				 dwfl_errmsg(-1));
			dwflfile__free(elf);
			elfshare__put(share);
			continue;
		}
		if (!dwflsession__slot(s, mod, elf, share, &file))
			continue;
		pr_debug("symbols: %s at 0x%" PRIx64, e->path, file.base);
		if (added)
			added[n_added++] = mod;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	/* What the process no longer maps (none known: keep all). */
	for (size_t k = 0; seen && k < n_before; k++)
		if (!seen[k])
			slot_set_mapped(s->slots[k], false);
	free(seen);
	/* Each file to libdwfl now (find_elf): build IDs are read from it. */
	for (size_t i = 0; i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getelf(added[i], &bias))
			pr_debug("symbols: cannot use %s: %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL),
				 dwfl_errmsg(-1));
	}
	for (size_t i = 0; s->own_root && i < n_added; i++) {
		Dwarf_Addr bias;

		if (!dwfl_module_getdwarf(added[i], &bias))
			pr_debug("symbols: no DWARF for %s",
				 dwfl_module_info(added[i], NULL, NULL, NULL, NULL,
						  NULL, NULL, NULL));
	}
	free(added);
	gone__trim();
}

/*
 * The session can know a file its process's last names read did not: a
 * lookup that missed re-reads the maps itself (symbolizer.c).  Such a
 * file's unmapping is no loss to the caller's read, so the caller asks
 * here too: a dlopened copy reported so, then unloaded and deleted, was
 * held until its process next mapped a file it had not.
 */
bool dwflsession__outdated(const struct dwflsession *s,
			   const struct procmaps *maps)
{
	for (size_t i = 0; i < s->n_slots; i++) {
		const struct module_slot *slot = s->slots[i];

		if (slot->mapped &&
		    !procmaps__maps_file(maps, slot->dev, slot->inode, false))
			return true;
	}
	return false;
}

/*
 * The list trimmed again: a file that was not deleted yet when its last
 * process let go of it (a short program is deleted after it exits) is
 * closed once it is, not at the next trim, which a quiet host may never
 * bring (the storm test's last caught program stayed open).
 */
void dwflsession__housekeep(void)
{
	gone__trim();
}

void dwflsession__gone(struct dwflsession *s)
{
	if (s->gone)
		return;
	s->gone = true;
	for (size_t i = 0; i < s->n_slots; i++)
		slot_set_mapped(s->slots[i], false);
	gone__trim();
}

void dwflsession__stats(struct dwflsession_stats *out)
{
	struct elfshare_stats files;

	elfshare__stats(&files);
	*out = (struct dwflsession_stats){
		.modules = __atomic_load_n(&gone.stats.modules,
					   __ATOMIC_RELAXED),
		.gone = __atomic_load_n(&gone.n, __ATOMIC_RELAXED),
		.evictions = __atomic_load_n(&gone.stats.evictions,
					     __ATOMIC_RELAXED),
	};
	out->files = files.files;
	out->open_files = files.open_files;
	out->memory_bytes = files.memory_bytes;
	out->shared = files.shared;
}

/* Whether the process sees the same / as syncprof (not a container's). */
static bool dwflsession__shares_root(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
	if (stat("/", &ours) || stat(path, &theirs))
		return false;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

static int free_module_index(Dwfl_Module *mod, void **userdata,
			     const char *name, Dwarf_Addr start, void *arg)
{
	slot_free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

int dwflsession__new(pid_t pid, const char *debuginfo_path,
		     struct dwflsession **out)
{
	struct dwflsession *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->pid = pid;
	if (debuginfo_path)
		s->debuginfo_path = strdup(debuginfo_path);
	else if (pid <= 0)
		s->debuginfo_path = strdup(":.debug:/usr/lib/debug");
	else if (asprintf(&s->debuginfo_path,
			  ":.debug:/usr/lib/debug:/proc/%d/root/usr/lib/debug",
			  (int)pid) < 0)
		s->debuginfo_path = NULL;
	s->own_root = pid > 0 && !dwflsession__shares_root(pid);
	if (!s->debuginfo_path) {
		dwflsession__free(s);
		return -ENOMEM;
	}
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwflsession__find_elf,
		.find_debuginfo = dwflsession__find_debuginfo,
		.debuginfo_path = &s->debuginfo_path,
	};
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl) {
		dwflsession__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void dwflsession__free(struct dwflsession *s)
{
	if (!s)
		return;
	if (s->dwfl) {
		dwfl_getmodules(s->dwfl, free_module_index, NULL, 0);
		dwfl_end(s->dwfl);
	}
	free(s->slots);
	free(s->debuginfo_path);
	free(s);
}

Dwfl *dwflsession__dwfl(const struct dwflsession *s)
{
	return s->dwfl;
}

Dwfl_Module *dwflsession__module(const struct dwflsession *s, uint64_t addr)
{
	return dwfl_addrmodule(s->dwfl, addr);
}

/* The module's index, built on first use; NULL if it cannot be. */
struct modindex *dwflsession__index(Dwfl_Module *mod)
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
	if (!slot->shrank && elfshare__shrank(slot->share, &now)) {
		slot->shrank = true;
		pr_warn("symbols: %s was truncated while syncprof read it (%"
			PRIu64 " bytes, then %" PRIu64 "); what was past its "
			"end is not named", name, elfshare__size(slot->share),
			now);
	}
	return slot->idx;
}
