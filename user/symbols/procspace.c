// SPDX-License-Identifier: GPL-2.0
/*
 * Canonical addresses for several processes.
 *
 * Each process's mappings are kept as segments: a file mapping (an ELF
 * module's segment, or shared memory: a /dev/shm file, System V memory,
 * MAP_SHARED anonymous memory, all of which have an inode), extended
 * over the anonymous mapping right after it (a module's .bss, where
 * PTHREAD_MUTEX_INITIALIZER locks live).  An address in a segment is a
 * (file, offset) pair.  The first process seen to map a file region is
 * its home: the region's canonical addresses are the home's own, so with
 * a server's forked workers (the common case) every address stays what
 * it is, and only a child that exec'ed, or mapped libraries in another
 * order, is translated.  A region whose home range overlaps another
 * file's region gets a synthetic range above user space instead.
 *
 * Chosen over keying rows by (module, offset) in the kernel: the walk
 * would look up a mapping per frame for every wait, where the loader
 * translates each distinct row once per read.  Chosen over synthetic
 * addresses for everything: addresses in reports stay real ones.
 *
 * Names come from one symbolizer per home process image (a process that
 * exec'ed keeps its old one for the regions of its old image), created
 * when the process first becomes a home: 100 forked backends of one
 * server cost one symbolizer.
 *
 * A process that exited keeps its segments a while (its last waits are
 * read after its exit is seen), then goes: the EXITED_KEEP that exited
 * last are kept.  Under --all every process that ever ran stayed, with
 * its segments (about 7 kB a short process, measured), and each lookup
 * walked them all.  The regions it homed, and their symbolizer, stay:
 * they name what it ran.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "log.h"
#include "procmaps.h"
#include "procspace.h"
#include "symbolizer.h"

/* Synthetic ranges start above any user address (57-bit paging too). */
#define SYNTHETIC_BASE	(1ull << 58)
/* Processes that exited, kept for their last waits: the newest. */
#define EXITED_KEEP	256

struct segment {
	uint64_t start, end;	/* in the process */
	uint64_t offset;	/* file offset of start */
	uint64_t dev, inode;
	bool shared_data;	/* no executable mapping of the file */
	char *path;
};

struct proc {
	pid_t pid;
	struct segment *segs;
	size_t n_segs, cap_segs;
	struct symbolizer *sym;	/* its current image's, once a home */
	bool exited;
	bool image_named;	/* sym is for the current image */
	uint64_t exit_seq;	/* order of exits, while exited */
};

struct region {
	uint64_t canon_start, canon_end;
	uint64_t home_start;	/* the same bytes in the home process */
	uint64_t dev, inode;
	uint64_t offset;	/* file offset at canon_start */
	bool shared_data;
	char *path;
	struct symbolizer *sym;	/* names it (owned by syms[]) */
	pid_t home;
};

struct procspace {
	struct proc *procs;
	size_t n_procs, cap_procs;
	struct region *regions;
	size_t n_regions, cap_regions;
	struct symbolizer **syms;	/* every symbolizer made, to free */
	size_t n_syms, cap_syms;
	uint64_t next_synthetic;
	uint64_t exits;		/* exits seen, for exit_seq */
	pid_t first;		/* the first process: its symbolizer names
				   what no region does */
	size_t n_exited;	/* exited processes held */
};

int procspace__new(struct procspace **out)
{
	struct procspace *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->next_synthetic = SYNTHETIC_BASE;
	*out = ps;
	return 0;
}

static void segs_free(struct proc *p)
{
	for (size_t i = 0; i < p->n_segs; i++)
		free(p->segs[i].path);
	p->n_segs = 0;
}

void procspace__free(struct procspace *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n_procs; i++) {
		segs_free(&ps->procs[i]);
		free(ps->procs[i].segs);
	}
	for (size_t i = 0; i < ps->n_regions; i++)
		free(ps->regions[i].path);
	for (size_t i = 0; i < ps->n_syms; i++)
		symbolizer__free(ps->syms[i]);
	free(ps->procs);
	free(ps->regions);
	free(ps->syms);
	free(ps);
}

/*
 * procs is sorted by PID: every read looks up the process of each of its
 * addresses, and a scan through the live and the exited was most of
 * procspace__update's time under --all.  Index of pid, or where it goes.
 */
static size_t procspace__slot(const struct procspace *ps, pid_t pid)
{
	size_t lo = 0, hi = ps->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct proc *procspace__find(struct procspace *ps, pid_t pid)
{
	size_t i = procspace__slot(ps, pid);

	return i < ps->n_procs && ps->procs[i].pid == pid ? &ps->procs[i]
							  : NULL;
}

static struct proc *procspace__get(struct procspace *ps, pid_t pid)
{
	size_t i = procspace__slot(ps, pid);

	if (i < ps->n_procs && ps->procs[i].pid == pid)
		return &ps->procs[i];
	if (array__grow(&ps->procs, &ps->cap_procs, ps->n_procs + 1,
			sizeof(*ps->procs)))
		return NULL;
	memmove(&ps->procs[i + 1], &ps->procs[i],
		(ps->n_procs - i) * sizeof(*ps->procs));
	ps->n_procs++;
	ps->procs[i] = (struct proc){ .pid = pid };
	if (!ps->first)
		ps->first = pid;
	return &ps->procs[i];
}

static int segs_add(struct proc *p, const struct segment *s)
{
	struct segment *d;

	if (array__grow(&p->segs, &p->cap_segs, p->n_segs + 1,
			sizeof(*p->segs)))
		return -ENOMEM;
	d = &p->segs[p->n_segs];
	*d = *s;
	d->path = strdup(s->path ? s->path : "");
	if (!d->path)
		return -ENOMEM;
	p->n_segs++;
	return 0;
}

/* Whether a file of p's segments is not in maps any more. */
static bool segs_lost_file(const struct proc *p, const struct procmaps *maps)
{
	for (size_t i = 0; i < p->n_segs; i++)
		if (!procmaps__maps_file(maps, p->segs[i].dev, p->segs[i].inode,
					 false))
			return true;
	return false;
}

/* The segments of a maps list (see the design comment). */
static int segs_from_maps(struct proc *p, const struct procmaps *maps)
{
	segs_free(p);
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		struct segment *last = p->n_segs ? &p->segs[p->n_segs - 1]
						 : NULL;
		int err;

		if (!e->inode) {
			/* A module's .bss: anonymous, right after its data. */
			if (last && !e->path[0] && last->end == e->start &&
			    !last->shared_data)
				last->end = e->end;
			continue;
		}
		struct segment s = {
			.start = e->start, .end = e->end, .offset = e->offset,
			.dev = e->dev, .inode = e->inode,
			.shared_data = !procmaps__maps_file(maps, e->dev,
							    e->inode, true),
			.path = (char *)e->path,
		};
		err = segs_add(p, &s);
		if (err)
			return err;
	}
	return 0;
}

static const struct region *region_of_file(const struct procspace *ps,
					   uint64_t dev, uint64_t inode,
					   uint64_t offset);
static int procspace__home(struct procspace *ps, struct proc *p,
			   const struct segment *s);

/*
 * Regions homed in p that p no longer maps: a launched target read while
 * its dynamic loader was still at work, a library unloaded.  Their range
 * is free again (a process never maps two things at one address).
 */
static void procspace__drop_stale(struct procspace *ps, const struct proc *p)
{
	size_t out = 0;

	for (size_t i = 0; i < ps->n_regions; i++) {
		struct region *r = &ps->regions[i];
		bool mapped = r->home != p->pid;

		for (size_t k = 0; !mapped && k < p->n_segs; k++) {
			const struct segment *g = &p->segs[k];

			mapped = g->inode == r->inode && g->dev == r->dev &&
				 r->home_start >= g->start &&
				 r->home_start < g->end;
		}
		if (!mapped) {
			free(r->path);
			continue;
		}
		ps->regions[out++] = *r;
	}
	ps->n_regions = out;
}

int procspace__update_from(struct procspace *ps, pid_t pid, pid_t parent,
			   struct procmaps *maps)
{
	struct proc *p = procspace__get(ps, pid);
	struct symbolizer *sym;
	bool homed = false, lost;
	int err;

	if (!p) {
		procmaps__free(maps);
		return -ENOMEM;
	}
	if (parent && !p->n_segs) {
		const struct proc *from = procspace__find(ps, parent);

		/* fork: the parent's layout, until the child's own is read. */
		for (size_t i = 0; from && i < from->n_segs; i++) {
			err = segs_add(p, &from->segs[i]);
			if (err) {
				procmaps__free(maps);
				return err;
			}
			/* segs_add may move procs: none added here. */
			from = procspace__find(ps, parent);
		}
	}
	if (p->exited) {
		procmaps__free(maps);
		return 0;
	}
	err = maps ? 0 : procmaps__read(pid, &maps);
	if (err)
		return err;
	lost = segs_lost_file(p, maps) ||
	       (p->sym && symbolizer__outdated(p->sym, maps));
	err = segs_from_maps(p, maps);
	if (!err)
		procspace__drop_stale(ps, p);
	/*
	 * Files seen first here are homed now, while /proc can name them;
	 * a symbolizer made before they were mapped (a dlopen) reports them
	 * now.  Only this process's: refreshing every home at each load
	 * anywhere re-read the maps of all of them (--all: thousands of
	 * reads a second).
	 */
	sym = p->sym;
	for (size_t i = 0; !err && i < p->n_segs; i++) {
		const struct segment *s = &p->segs[i];

		if (!region_of_file(ps, s->dev, s->inode, s->offset)) {
			err = procspace__home(ps, p, s);
			homed = true;
		}
	}
	/*
	 * A file it no longer maps leaves its session now (a deleted one is
	 * closed there: a plugin host's unloaded copy was held for minutes,
	 * until the process next mapped a file of its own).
	 */
	if ((homed || lost) && sym && sym == p->sym)
		symbolizer__update(sym, maps);
	procmaps__free(maps);
	return err;
}

int procspace__update(struct procspace *ps, pid_t pid, pid_t parent)
{
	return procspace__update_from(ps, pid, parent, NULL);
}

int procspace__exec_from(struct procspace *ps, pid_t pid,
			 struct procmaps *maps)
{
	struct proc *p = procspace__get(ps, pid);

	if (!p) {
		procmaps__free(maps);
		return -ENOMEM;
	}
	/* The old image's regions keep their symbolizer; this one is new. */
	if (p->sym)
		symbolizer__freeze(p->sym);
	p->sym = NULL;
	p->image_named = false;
	return procspace__update_from(ps, pid, 0, maps);
}

int procspace__exec(struct procspace *ps, pid_t pid)
{
	return procspace__exec_from(ps, pid, NULL);
}

/* The oldest exited process beyond EXITED_KEEP goes (never the first). */
static void procspace__forget_exited(struct procspace *ps)
{
	size_t oldest = ps->n_procs;

	if (ps->n_exited <= EXITED_KEEP)
		return;
	for (size_t i = 0; i < ps->n_procs; i++)
		if (ps->procs[i].exited && ps->procs[i].pid != ps->first &&
		    (oldest == ps->n_procs || ps->procs[i].exit_seq <
					      ps->procs[oldest].exit_seq))
			oldest = i;
	if (oldest == ps->n_procs)
		return;
	segs_free(&ps->procs[oldest]);
	free(ps->procs[oldest].segs);
	memmove(&ps->procs[oldest], &ps->procs[oldest + 1],
		(ps->n_procs - oldest - 1) * sizeof(*ps->procs));
	ps->n_procs--;
	ps->n_exited--;
}

void procspace__exited(struct procspace *ps, pid_t pid)
{
	struct proc *p = procspace__find(ps, pid);

	if (!p || p->exited)
		return;
	p->exited = true;
	p->exit_seq = ++ps->exits;
	ps->n_exited++;
	if (p->sym)
		symbolizer__freeze(p->sym);
	procspace__forget_exited(ps);
}

static const struct segment *seg_at(const struct proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n_segs; i++)
		if (addr >= p->segs[i].start && addr < p->segs[i].end)
			return &p->segs[i];
	return NULL;
}

static const struct region *region_of_file(const struct procspace *ps,
					   uint64_t dev, uint64_t inode,
					   uint64_t offset)
{
	for (size_t i = 0; i < ps->n_regions; i++) {
		const struct region *r = &ps->regions[i];

		if (r->inode == inode && r->dev == dev && offset >= r->offset &&
		    offset - r->offset < r->canon_end - r->canon_start)
			return r;
	}
	return NULL;
}

static bool range_taken(const struct procspace *ps, uint64_t start,
			uint64_t end)
{
	for (size_t i = 0; i < ps->n_regions; i++)
		if (start < ps->regions[i].canon_end &&
		    ps->regions[i].canon_start < end)
			return true;
	return false;
}

/* The symbolizer of p's current image, made on first need. */
static struct symbolizer *proc_symbolizer(struct procspace *ps,
					  struct proc *p)
{
	struct symbolizer *sym;

	if (p->sym)
		return p->sym;
	if (p->exited)
		return NULL;
	if (array__grow(&ps->syms, &ps->cap_syms, ps->n_syms + 1,
			sizeof(*ps->syms)))
		return NULL;
	if (symbolizer__new(p->pid, NULL, &sym)) {
		pr_debug("cannot name the modules of PID %d", (int)p->pid);
		return NULL;
	}
	ps->syms[ps->n_syms++] = sym;
	p->sym = sym;
	p->image_named = true;
	return sym;
}

/* p's segments of s's file become regions, p their home. */
static int procspace__home(struct procspace *ps, struct proc *p,
			   const struct segment *s)
{
	struct symbolizer *sym = s->shared_data ? NULL
						: proc_symbolizer(ps, p);

	for (size_t i = 0; i < p->n_segs; i++) {
		const struct segment *g = &p->segs[i];
		uint64_t size = g->end - g->start, canon = g->start;
		struct region *r;

		if (g->inode != s->inode || g->dev != s->dev ||
		    region_of_file(ps, g->dev, g->inode, g->offset))
			continue;
		if (range_taken(ps, canon, canon + size)) {
			canon = ps->next_synthetic;
			ps->next_synthetic += (size + 0xfffff) & ~0xfffffull;
		}
		if (array__grow(&ps->regions, &ps->cap_regions,
				ps->n_regions + 1, sizeof(*ps->regions)))
			return -ENOMEM;
		r = &ps->regions[ps->n_regions];
		*r = (struct region){
			.canon_start = canon, .canon_end = canon + size,
			.home_start = g->start, .dev = g->dev,
			.inode = g->inode, .offset = g->offset,
			.shared_data = g->shared_data, .sym = sym,
			.path = strdup(g->path), .home = p->pid,
		};
		if (!r->path)
			return -ENOMEM;
		ps->n_regions++;
	}
	return 0;
}

uint64_t procspace__canonical(struct procspace *ps, pid_t pid, uint64_t addr)
{
	struct proc *p = procspace__find(ps, pid);
	const struct segment *s;
	const struct region *r;
	uint64_t offset;

	if (!p || !(s = seg_at(p, addr)))
		return addr;
	offset = s->offset + (addr - s->start);
	r = region_of_file(ps, s->dev, s->inode, offset);
	if (!r) {
		if (procspace__home(ps, p, s))
			return addr;
		r = region_of_file(ps, s->dev, s->inode, offset);
		if (!r)
			return addr;
	}
	return r->canon_start + (offset - r->offset);
}

static const struct region *region_at(const struct procspace *ps,
				      uint64_t canonical)
{
	for (size_t i = 0; i < ps->n_regions; i++)
		if (canonical >= ps->regions[i].canon_start &&
		    canonical < ps->regions[i].canon_end)
			return &ps->regions[i];
	return NULL;
}

int procspace__resolve(struct procspace *ps, uint64_t canonical,
		       struct symbolizer **sym, uint64_t *addr)
{
	const struct region *r = region_at(ps, canonical);
	struct proc *first;

	*addr = canonical;
	first = procspace__find(ps, ps->first);
	*sym = first ? proc_symbolizer(ps, first) : NULL;
	if (!r)
		return -ENOENT;
	*addr = r->home_start + (canonical - r->canon_start);
	if (r->sym)
		*sym = r->sym;
	return r->sym ? 0 : -ENOENT;
}

bool procspace__shared_object(struct procspace *ps, uint64_t canonical,
			      const char **path, uint64_t *offset)
{
	const struct region *r = region_at(ps, canonical);

	if (!r || !r->shared_data)
		return false;
	*path = r->path;
	*offset = r->offset + (canonical - r->canon_start);
	return true;
}

void procspace__refresh(struct procspace *ps)
{
	for (size_t i = 0; i < ps->n_procs; i++)
		if (ps->procs[i].sym && !ps->procs[i].exited)
			symbolizer__refresh(ps->procs[i].sym);
}

static void procspace__delegate_resolve(void *ctx, uint64_t canonical,
					struct symbolizer **sym, uint64_t *addr)
{
	procspace__resolve(ctx, canonical, sym, addr);
}

static bool procspace__delegate_shared(void *ctx, uint64_t canonical,
				       const char **path, uint64_t *offset)
{
	return procspace__shared_object(ctx, canonical, path, offset);
}

static void procspace__delegate_refresh(void *ctx)
{
	procspace__refresh(ctx);
}

int procspace__symbolizer(struct procspace *ps, struct symbolizer **out)
{
	const struct symbolizer_delegate delegate = {
		.resolve = procspace__delegate_resolve,
		.shared_object = procspace__delegate_shared,
		.refresh = procspace__delegate_refresh,
		.ctx = ps,
	};

	return symbolizer__new_delegating(&delegate, out);
}
