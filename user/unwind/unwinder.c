// SPDX-License-Identifier: GPL-2.0
/*
 * Tables are keyed by build: a file is identified by device and inode,
 * then by its GNU build ID, so a library mapped again after an exec, or
 * the same build under another path, is loaded once.  A table is
 * immutable once loaded (an inner array created, filled with one batch
 * update, put in its slot); a process's mappings change by replacement:
 * a new inner array, filled, swapped in with one update of the outer
 * map, so the BPF walk sees the old array or the new one, never a mix.
 * Mappings unchanged since the last sync keep their table and bias
 * without reopening the file.  Builds are shared by every followed
 * process: 100 backends of one server cost one libc table and 100 small
 * mapping arrays (make bench, section processes).
 *
 * What no followed process maps any more goes (unwinder__collect, every
 * COLLECT_EVERY exits), beyond the UNMAPPED_KEEP files unmapped last: a
 * file's entry and its walk-by-file key, and a build's table once no
 * file of it is left, its slot used again.  Under --all every program
 * that ever ran kept its entry (each looked up by a scan at every
 * mapping placed) and its table in the kernel.  The files unmapped last
 * are kept because a program run again and again, or a library loaded
 * again, would otherwise have its table built anew each time (a storm of
 * copies of one program: its CFI read at every run).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "array.h"
#include "elfimage.h"
#include "log.h"
#include "modtable.h"
#include "unwinder.h"

#define BUILD_ID_MAX 20

struct build {
	uint64_t dev, inode;	/* the file it was first read from */
	/*
	 * Its PT_LOAD segments, for a mapping's load bias without opening
	 * the file again: a short program's every mapping was an open, a
	 * read of its headers and an mmap (whose unmap flushes the TLB of
	 * every CPU).  Owned by the entry first made for the file.
	 */
	struct elfimage_load *loads;
	size_t n_loads;
	bool owns_loads;
	uint8_t id[BUILD_ID_MAX];
	int id_len;		/* 0: no build ID */
	uint32_t slot;		/* SP_TABLE_NONE: no rows */
	uint32_t n_rows;
	bool fp;
};

/* A mapping as the last sync placed it. */
struct placed {
	uint64_t start, end, offset, dev, inode;
	struct sp_mapping m;
	bool failed;		/* its file could not be read: tried again */
};

/* One process's mappings as last installed. */
struct proc {
	pid_t pid;
	struct placed *placed;
	size_t n_placed;
	uint32_t exec_seq;
	bool installed;
	struct procmaps *last_maps;	/* the last read, for naming */
};

/* A sync's whole read of a process's maps, kept for its names. */
struct kept_maps {
	pid_t pid;
	struct procmaps *maps;
};

/* A table's rows read back from the kernel, for late walks. */
struct rowcopy {
	uint32_t slot;
	uint32_t n;
	struct sp_unwind_row *rows;
};

/* Exits between two collections of what no process maps. */
#define COLLECT_EVERY 64
/* Files no process maps, kept with their tables: the newest. */
#define UNMAPPED_KEEP 64

struct unwinder {
	struct unwinder_config cfg;
	uint32_t *free_slots;	/* table slots released, to use again */
	size_t n_free, cap_free;
	size_t forgets;		/* exits since the last collection */
	struct rowcopy *copies;
	size_t n_copies, cap_copies;
	uint64_t libc_dev, libc_inode;
	struct build *builds;
	size_t n_builds, cap_builds;
	uint32_t next_slot;
	struct proc *procs;
	size_t n_procs, cap_procs;
	bool keep_maps;		/* unwinder__keep_maps */
	struct kept_maps *kept;
	size_t n_kept, cap_kept;
	struct unwinder_stats stats;
};

int unwinder__new(const struct unwinder_config *cfg, struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	struct stat st;

	if (!u)
		return -ENOMEM;
	u->cfg = *cfg;
	u->cfg.libc_path = NULL;	/* the caller's string */
	if (cfg->libc_path && !stat(cfg->libc_path, &st)) {
		u->libc_dev = st.st_dev;
		u->libc_inode = st.st_ino;
	}
	*out = u;
	return 0;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	/* The kernel's maps go with the BPF object. */
	for (size_t i = 0; i < u->n_builds; i++)
		if (u->builds[i].owns_loads)
			free(u->builds[i].loads);
	free(u->builds);
	for (size_t i = 0; i < u->n_procs; i++) {
		free(u->procs[i].placed);
		procmaps__free(u->procs[i].last_maps);
	}
	free(u->procs);
	unwinder__keep_maps(u, false);
	free(u->kept);
	for (size_t i = 0; i < u->n_copies; i++)
		free(u->copies[i].rows);
	free(u->copies);
	free(u->free_slots);
	free(u);
}

uint32_t unwinder__mapping_flags(const struct procmaps_entry *e,
				 uint64_t libc_dev, uint64_t libc_inode)
{
	uint32_t flags = 0;

	if (procmaps__is_library(e->path, "libc") ||
	    procmaps__is_library(e->path, "libpthread"))
		flags |= SP_MAP_F_LIBC;
	if (libc_inode && e->inode == libc_inode && e->dev == libc_dev)
		flags |= SP_MAP_F_LIBC | SP_MAP_F_LIBC_MODEL;
	return flags;
}

/* An inner array of n values, filled with one batch update. */
static int unwinder__new_array(const char *name, size_t value_size,
			       const void *values, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
	LIBBPF_OPTS(bpf_map_batch_opts, batch);
	uint32_t *keys, count = n;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(uint32_t),
			    (uint32_t)value_size, n, &opts);
	if (fd < 0)
		return -errno;
	keys = malloc(n * sizeof(*keys));
	if (!keys) {
		close(fd);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i;
	if (bpf_map_update_batch(fd, keys, values, &count, &batch))
		err = -errno;
	else if (count != n)
		err = -EIO;
	free(keys);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int unwinder__load_rows(struct unwinder *u, const struct modtable *t,
			       struct build *b)
{
	size_t n;
	const struct sp_unwind_row *rows = modtable__rows(t, &n);
	uint32_t slot;
	int fd, err = 0;

	b->slot = SP_TABLE_NONE;
	b->n_rows = 0;
	if (!n)
		return 0;
	slot = u->n_free ? u->free_slots[u->n_free - 1] : u->next_slot;
	if (n > UINT32_MAX || slot >= SP_UNWIND_MAX_TABLES)
		return -ENOSPC;
	fd = unwinder__new_array("sp_unwind_rows", sizeof(*rows), rows,
				 (uint32_t)n);
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(u->cfg.tables_fd, &slot, &fd, BPF_ANY))
		err = -errno;
	close(fd);
	if (err)
		return err;
	if (u->n_free)
		u->n_free--;
	else
		u->next_slot++;
	b->slot = slot;
	b->n_rows = (uint32_t)n;
	u->stats.rows += n;
	u->stats.bytes += n * sizeof(*rows);
	return 0;
}

static struct build *unwinder__find_file(struct unwinder *u, uint64_t dev,
					 uint64_t inode)
{
	for (size_t i = 0; i < u->n_builds; i++)
		if (u->builds[i].dev == dev && u->builds[i].inode == inode)
			return &u->builds[i];
	return NULL;
}

static struct build *unwinder__find_id(struct unwinder *u, const uint8_t *id,
				       int len)
{
	for (size_t i = 0; len > 0 && i < u->n_builds; i++)
		if (u->builds[i].id_len == len &&
		    !memcmp(u->builds[i].id, id, (size_t)len))
			return &u->builds[i];
	return NULL;
}

/* The build behind the open image: known, or read and loaded now. */
static int unwinder__build(struct unwinder *u, struct elfimage *image,
			   const struct procmaps_entry *e, struct build *out)
{
	struct build b = { .dev = e->dev, .inode = e->inode };
	const struct build *known;
	struct modtable *t;
	uint64_t t0 = clock__monotonic_ns();
	int err;

	err = elfimage__build_id(image, b.id, sizeof(b.id));
	b.id_len = err > 0 ? err : 0;
	known = unwinder__find_id(u, b.id, b.id_len);
	if (known) {
		b.slot = known->slot;
		b.n_rows = known->n_rows;
		b.fp = known->fp;
	} else {
		err = modtable__build(image, u->cfg.skip, &t);
		if (err)
			return err;
		b.fp = modtable__frame_pointers(t);
		err = unwinder__load_rows(u, t, &b);
		u->stats.tables++;
		u->stats.fp_tables += b.fp;
		u->stats.skipped += modtable__skipped(t);
		u->stats.user_skipped += modtable__user_skipped(t);
		modtable__free(t);
		if (err)
			return err;
		pr_debug("unwind: %s: %u rows%s", e->path, b.n_rows,
			 b.fp ? ", frame pointers where none" : "");
	}
	if (array__grow(&u->builds, &u->cap_builds, u->n_builds + 1,
			sizeof(*u->builds)))
		return -ENOMEM;
	b.owns_loads = !elfimage__loads(image, &b.loads, &b.n_loads);
	u->builds[u->n_builds++] = b;
	u->stats.build_ms += (double)(clock__monotonic_ns() - t0) * 1e-6;
	*out = b;
	return 0;
}

/*
 * The file's table for walks the mapping array cannot place yet (the
 * VMA's file, looked up in the kernel: bpf/unwind.h): keyed as the
 * kernel sees the file, valid over this mapping's file range.
 */
static void unwinder__publish_file(struct unwinder *u,
				   const struct procmaps_entry *e,
				   const struct sp_mapping *m)
{
	struct sp_file_key key = {
		.ino = e->inode,
		.dev = (uint32_t)(major(e->dev) << 20 | minor(e->dev)),
	};
	struct sp_file_table t = {
		.off_start = e->offset,
		.off_end = e->offset + (e->end - e->start),
		.vaddr_delta = (int64_t)(e->start - e->offset - m->bias),
		.table = m->table,
		.flags = m->flags,
		.n_rows = m->n_rows,
	};

	if (u->cfg.files_fd < 0 || !e->inode)
		return;
	if (bpf_map_update_elem(u->cfg.files_fd, &key, &t, BPF_ANY))
		pr_debug("unwind: %s: not walkable by file: %s", e->path,
			 strerror(errno));
}

/*
 * A mapping not seen before: its file's build and load bias.  0, or
 * -errno when its file could not be read (no rows: walks stop there).
 */
static int unwinder__place(struct unwinder *u, pid_t pid,
			    const struct procmaps_entry *e, struct sp_mapping *m)
{
	const struct build *known = unwinder__find_file(u, e->dev, e->inode);
	struct elfimage *image = NULL;
	char path[PATH_MAX];
	uint64_t bias = 0;
	struct build b;
	int err;

	*m = (struct sp_mapping){
		.start = e->start,
		.end = e->end,
		.table = SP_TABLE_NONE,
		.flags = unwinder__mapping_flags(e, u->libc_dev, u->libc_inode),
	};
	if (known && known->owns_loads &&
	    !elfimage__bias_from(known->loads, known->n_loads, e->start,
				 e->offset, &bias)) {
		/* A file placed before: nothing to open. */
		b = *known;
		err = 0;
	} else {
		err = procmaps__file_path(pid, e, path, sizeof(path));
		if (!err)
			err = elfimage__open(path, &image);
		if (!err)
			err = elfimage__load_bias(image, e->start, e->offset,
						  &bias);
		if (!err && known)
			b = *known;
		else if (!err)
			err = unwinder__build(u, image, e, &b);
		elfimage__close(image);
	}
	m->bias = bias;
	if (err) {
		/* No rows: a walk that reaches it stops there. */
		pr_debug("unwind: no table for %s: %s", e->path, strerror(-err));
		unwinder__publish_file(u, e, m);
		return err;
	}
	m->table = b.slot;
	m->n_rows = b.n_rows;
	if (b.fp)
		m->flags |= SP_MAP_F_FP;
	unwinder__publish_file(u, e, m);
	return 0;
}

static bool same_placement(const struct placed *a, size_t na,
			   const struct placed *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (memcmp(&a[i].m, &b[i].m, sizeof(a[i].m)))
			return false;
	return true;
}

/* A new mapping array for the process, swapped in whole. */
static int unwinder__install(struct unwinder *u, pid_t pid,
			     const struct placed *placed, size_t n,
			     uint32_t exec_seq)
{
	struct sp_mapping *v = calloc(n + 1, sizeof(*v));
	uint32_t key = (uint32_t)pid;
	int fd, err = 0;

	if (!v)
		return -ENOMEM;
	v[0].start = n;
	v[0].end = exec_seq;
	for (size_t i = 0; i < n; i++)
		v[i + 1] = placed[i].m;
	fd = unwinder__new_array("sp_mappings", sizeof(*v), v, (uint32_t)n + 1);
	free(v);
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(u->cfg.mappings_fd, &key, &fd, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

static struct proc *unwinder__proc(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->n_procs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (array__grow(&u->procs, &u->cap_procs, u->n_procs + 1,
			sizeof(*u->procs)))
		return NULL;
	u->procs[u->n_procs] = (struct proc){ .pid = pid };
	return &u->procs[u->n_procs++];
}

/*
 * A sync that builds tables re-reads the maps when this long has passed
 * since it read them, and goes on with what it finds: a library loaded
 * meanwhile is seen while the process lives, not after the sync (a short
 * GStreamer pipeline dlopen'ed its plugins while the tables of
 * gst_init's libraries were built, 40 ms, and exited before the next
 * read).  Rounds are bounded; placements are kept between them.
 */
#define SYNC_RESCAN_NS	(2ull * 1000000ull)
#define SYNC_ROUNDS	64

static const struct placed *placed_in(const struct placed *v, size_t n,
				      const struct procmaps_entry *e)
{
	for (size_t i = 0; i < n; i++) {
		const struct placed *p = &v[i];

		if (p->start == e->start && p->end == e->end &&
		    p->offset == e->offset && p->dev == e->dev &&
		    p->inode == e->inode && !p->failed)
			return p;
	}
	return NULL;
}

/* A whole read of pid's maps kept (the newest), or let go. */
static void unwinder__stash(struct unwinder *u, pid_t pid,
			    struct procmaps *whole)
{
	for (size_t i = 0; i < u->n_kept; i++) {
		if (u->kept[i].pid != pid)
			continue;
		procmaps__free(u->kept[i].maps);
		u->kept[i].maps = whole;
		return;
	}
	if (array__grow(&u->kept, &u->cap_kept, u->n_kept + 1,
			sizeof(*u->kept))) {
		procmaps__free(whole);
		return;
	}
	u->kept[u->n_kept++] = (struct kept_maps){ pid, whole };
}

/*
 * The maps of pid: its executable file mappings; -ESRCH when none.
 * While maps are kept, the whole read is kept for unwinder__take_maps.
 */
static int unwinder__read_maps(struct unwinder *u, pid_t pid,
			       struct procmaps **out)
{
	struct procmaps *whole;
	int err = procmaps__read_since(pid, unwinder__last_maps(u, pid),
				       &whole);

	if (err) {
		pr_debug("unwind: PID %d: maps: %s", (int)pid, strerror(-err));
		return err;
	}
	if (u->keep_maps && !procmaps__exec_files(whole, out)) {
		/* A zombie's empty read is no layout to name by. */
		if (procmaps__count(*out))
			unwinder__stash(u, pid, whole);
		else
			procmaps__free(whole);
	} else {
		procmaps__keep_exec_files(whole);
		*out = whole;
	}
	if (!procmaps__count(*out)) {
		/* Exited (a zombie maps nothing): keep what was placed. */
		procmaps__free(*out);
		*out = NULL;
		return -ESRCH;
	}
	return 0;
}

void unwinder__keep_maps(struct unwinder *u, bool keep)
{
	u->keep_maps = keep;
	if (keep)
		return;
	for (size_t i = 0; i < u->n_kept; i++)
		procmaps__free(u->kept[i].maps);
	u->n_kept = 0;
}

struct procmaps *unwinder__take_maps(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; u && i < u->n_kept; i++) {
		struct procmaps *maps = u->kept[i].maps;

		if (u->kept[i].pid != pid)
			continue;
		u->kept[i] = u->kept[--u->n_kept];
		return maps;
	}
	return NULL;
}

/*
 * One round: maps placed (placements of the round before and of the
 * installed array kept).  Before each table it builds, a round whose
 * maps were read SYNC_RESCAN_NS ago reads them again: 1, with *again,
 * the round cut short (the next goes on from there); if that read fails
 * (the process ended), the round goes on with the maps it has.
 */
static int unwinder__place_round(struct unwinder *u, struct proc *pr,
				 const struct procmaps *maps, uint64_t read_ns,
				 const struct placed *before, size_t n_before,
				 bool last, struct placed **out, size_t *n_out,
				 struct procmaps **again)
{
	size_t count = procmaps__count(maps), n = 0;
	struct placed *next = calloc(count + 1, sizeof(*next));
	int err = 0;

	*again = NULL;
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const struct placed *old = placed_in(before, n_before, e);
		struct placed *p;

		if (!old)
			old = placed_in(pr->placed, pr->n_placed, e);
		if (!old && clock__monotonic_ns() - read_ns > SYNC_RESCAN_NS) {
			if (u->cfg.busy)
				u->cfg.busy(u->cfg.busy_ctx);
			if (!last) {
				last = true;	/* one read per round */
				if (!unwinder__read_maps(u, pr->pid, again)) {
					err = 1;
					break;
				}
			}
		}
		p = &next[n++];
		*p = (struct placed){
			.start = e->start, .end = e->end, .offset = e->offset,
			.dev = e->dev, .inode = e->inode,
		};
		if (old) {
			p->m = old->m;
			continue;
		}
		err = unwinder__place(u, pr->pid, e, &p->m);
		/* Out of reach for a moment (the process ending): again. */
		p->failed = err == -ENOENT || err == -ESRCH;
		err = 0;
	}
	*out = next;
	*n_out = n;
	return err;
}

int unwinder__sync_pid(struct unwinder *u, pid_t pid, uint32_t exec_seq)
{
	struct placed *next = NULL;
	struct proc *pr = unwinder__proc(u, pid);
	struct procmaps *maps;
	size_t n = 0;
	int err;

	if (!pr)
		return -ENOMEM;
	err = unwinder__read_maps(u, pid, &maps);
	if (err)
		return err;
	for (int round = 0; maps; round++) {
		uint64_t read_ns = clock__monotonic_ns();
		struct procmaps *again = NULL;
		struct placed *v = NULL;
		size_t nv = 0;

		err = unwinder__place_round(u, pr, maps, read_ns, next, n,
					    round == SYNC_ROUNDS - 1, &v, &nv,
					    &again);
		/* The newest read is kept for unwinder__last_maps. */
		procmaps__free(pr->last_maps);
		pr->last_maps = maps;
		maps = again;
		if (err < 0) {
			procmaps__free(maps);
			free(next);
			return err;
		}
		free(next);
		next = v;
		n = nv;
	}
	if (pr->installed && exec_seq == pr->exec_seq &&
	    same_placement(next, n, pr->placed, pr->n_placed)) {
		free(next);
		return 0;
	}
	err = unwinder__install(u, pid, next, n, exec_seq);
	if (err) {
		pr_debug("unwind: PID %d: install: %s", (int)pid, strerror(-err));
		free(next);
		return err;
	}
	free(pr->placed);
	pr->placed = next;
	pr->n_placed = n;
	pr->exec_seq = exec_seq;
	pr->installed = true;
	return 1;
}

int unwinder__sync(struct unwinder *u, uint32_t exec_seq)
{
	return unwinder__sync_pid(u, u->cfg.pid, exec_seq);
}

const struct procmaps *unwinder__last_maps(const struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; u && i < u->n_procs; i++)
		if (u->procs[i].pid == pid)
			return u->procs[i].last_maps;
	return NULL;
}

struct file_id {
	uint64_t dev, inode;
};

static int cmp_file_id(const void *pa, const void *pb)
{
	const struct file_id *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->inode < b->inode ? -1 : a->inode > b->inode;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

/* Slot's table out of the kernel and its copy freed; the slot reusable. */
static void unwinder__release_slot(struct unwinder *u, uint32_t slot,
				   uint32_t n_rows)
{
	for (size_t i = 0; i < u->n_copies; i++) {
		if (u->copies[i].slot != slot)
			continue;
		free(u->copies[i].rows);
		u->copies[i] = u->copies[--u->n_copies];
		break;
	}
	if (bpf_map_delete_elem(u->cfg.tables_fd, &slot) && errno != ENOENT)
		return;		/* still in the kernel: the slot stays taken */
	u->stats.rows -= n_rows;
	u->stats.bytes -= n_rows * sizeof(struct sp_unwind_row);
	if (!array__grow(&u->free_slots, &u->cap_free, u->n_free + 1,
			 sizeof(*u->free_slots)))
		u->free_slots[u->n_free++] = slot;
}

/*
 * The files no followed process maps go, with their walk-by-file keys;
 * then the tables no remaining file uses.  0 or -ENOMEM (nothing freed).
 */
static int unwinder__collect(struct unwinder *u)
{
	struct file_id *mapped;
	struct build *dropped;
	uint32_t *kept;
	size_t n = 0, n_kept = 0, n_dropped = 0, out = 0, n_unmapped = 0;

	for (size_t i = 0; i < u->n_procs; i++)
		n += u->procs[i].n_placed;
	mapped = malloc((n + 1) * sizeof(*mapped));
	kept = malloc((u->n_builds + 1) * sizeof(*kept));
	dropped = malloc((u->n_builds + 1) * sizeof(*dropped));
	if (!mapped || !kept || !dropped) {
		free(mapped);
		free(kept);
		free(dropped);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < u->n_procs; i++)
		for (size_t k = 0; k < u->procs[i].n_placed; k++)
			mapped[n++] = (struct file_id){
				u->procs[i].placed[k].dev,
				u->procs[i].placed[k].inode };
	qsort(mapped, n, sizeof(*mapped), cmp_file_id);
	for (size_t i = 0; i < u->n_builds; i++) {
		struct file_id id = { u->builds[i].dev, u->builds[i].inode };

		n_unmapped += !bsearch(&id, mapped, n, sizeof(*mapped),
				       cmp_file_id);
	}
	/* The oldest first: builds are in the order they were made. */
	for (size_t i = 0; i < u->n_builds; i++) {
		struct build *b = &u->builds[i];
		struct file_id id = { b->dev, b->inode };
		bool keep = bsearch(&id, mapped, n, sizeof(*mapped),
				    cmp_file_id) != NULL;

		if (!keep && n_unmapped <= UNMAPPED_KEEP)
			keep = true;
		else if (!keep)
			n_unmapped--;
		if (keep) {
			if (b->slot != SP_TABLE_NONE)
				kept[n_kept++] = b->slot;
			u->builds[out++] = *b;
			continue;
		}
		if (u->cfg.files_fd >= 0) {
			struct sp_file_key key = {
				.ino = b->inode,
				.dev = (uint32_t)(major(b->dev) << 20 |
						  minor(b->dev)),
			};

			bpf_map_delete_elem(u->cfg.files_fd, &key);
		}
		if (b->owns_loads)
			free(b->loads);
		dropped[n_dropped++] = *b;
	}
	u->stats.collected += n_dropped;
	u->n_builds = out;
	/* The tables no kept file uses, each released once. */
	qsort(kept, n_kept, sizeof(*kept), cmp_u32);
	for (size_t i = 0; i < n_dropped; i++) {
		const struct build *b = &dropped[i];
		bool seen = false;

		if (b->slot == SP_TABLE_NONE ||
		    bsearch(&b->slot, kept, n_kept, sizeof(*kept), cmp_u32))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = dropped[k].slot == b->slot;
		if (!seen)
			unwinder__release_slot(u, b->slot, b->n_rows);
	}
	free(mapped);
	free(kept);
	free(dropped);
	return 0;
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	for (size_t i = 0; i < u->n_procs; i++) {
		if (u->procs[i].pid != pid)
			continue;
		bpf_map_delete_elem(u->cfg.mappings_fd, &key);
		free(u->procs[i].placed);
		procmaps__free(u->procs[i].last_maps);
		u->procs[i] = u->procs[--u->n_procs];
		if (++u->forgets >= COLLECT_EVERY && !unwinder__collect(u))
			u->forgets = 0;
		return;
	}
}

/* A table's rows, read from the kernel on first use. */
static const struct rowcopy *unwinder__rows(struct unwinder *u, uint32_t slot,
					    uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct rowcopy c = { .slot = slot, .n = n };
	uint32_t id = 0, out = 0, count = n, *keys;
	int fd, err;

	for (size_t i = 0; i < u->n_copies; i++)
		if (u->copies[i].slot == slot)
			return &u->copies[i];
	if (bpf_map_lookup_elem(u->cfg.tables_fd, &slot, &id))
		return NULL;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return NULL;
	c.rows = calloc(n ? n : 1, sizeof(*c.rows));
	keys = calloc(n ? n : 1, sizeof(*keys));
	err = !c.rows || !keys ? -ENOMEM : 0;
	if (!err && bpf_map_lookup_batch(fd, NULL, &out, keys, c.rows, &count,
					 &opts) && errno != ENOENT)
		err = -errno;
	close(fd);
	free(keys);
	if (!err && count != n)
		err = -EIO;
	if (!err && array__grow(&u->copies, &u->cap_copies, u->n_copies + 1,
				sizeof(*u->copies)))
		err = -ENOMEM;
	if (err) {
		free(c.rows);
		return NULL;
	}
	u->copies[u->n_copies] = c;
	return &u->copies[u->n_copies++];
}

int unwinder__rule_at(struct unwinder *u, pid_t pid, uint64_t addr,
		      struct sp_unwind_row *row, uint32_t *map_flags)
{
	const struct placed *p = NULL;
	const struct rowcopy *c;
	size_t lo = 0, hi;
	uint64_t rel;

	*map_flags = 0;
	for (size_t i = 0; i < u->n_procs && !p; i++) {
		const struct proc *pr = &u->procs[i];

		if (pr->pid != pid || !pr->installed)
			continue;
		for (size_t k = 0; k < pr->n_placed; k++)
			if (addr >= pr->placed[k].m.start &&
			    addr < pr->placed[k].m.end)
				p = &pr->placed[k];
		if (!p)
			return -EAGAIN;
	}
	if (!p || (p->m.table == SP_TABLE_NONE && !p->m.flags))
		return -EAGAIN;
	*map_flags = p->m.flags;
	if (p->m.table == SP_TABLE_NONE)
		return -ENODATA;
	c = unwinder__rows(u, p->m.table, p->m.n_rows);
	if (!c)
		return -EAGAIN;
	rel = addr - p->m.bias;
	hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rel < c->rows[mid].start) {
			hi = mid;
		} else if (rel >= c->rows[mid].end) {
			lo = mid + 1;
		} else {
			*row = c->rows[mid];
			return 0;
		}
	}
	return -ENODATA;
}

static uint64_t layout_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

uint64_t unwinder__layout(const struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->n_procs; i++) {
		const struct proc *pr = &u->procs[i];
		uint64_t h = 0x6a09e667f3bcc908ull;

		if (pr->pid != pid || !pr->installed)
			continue;
		for (size_t k = 0; k < pr->n_placed; k++) {
			const struct sp_mapping *m = &pr->placed[k].m;

			h = layout_mix(h, m->start);
			h = layout_mix(h, m->end);
			h = layout_mix(h, m->bias);
			h = layout_mix(h, (uint64_t)m->table << 32 | m->flags);
			h = layout_mix(h, m->n_rows);
		}
		return h ? h : 1;
	}
	return 0;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->stats;
	st->mappings = 0;
	st->processes = 0;
	for (size_t i = 0; i < u->n_procs; i++) {
		if (!u->procs[i].installed)
			continue;
		st->processes++;
		st->mappings += u->procs[i].n_placed;
		st->bytes += (u->procs[i].n_placed + 1) *
			     sizeof(struct sp_mapping);
	}
}
