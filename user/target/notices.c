// SPDX-License-Identifier: GPL-2.0
/*
 * Runtimes are told by what they cannot hide: Go's linker writes
 * .go.buildinfo (and .note.go.buildid), every Rust program links
 * rust_begin_unwind, InnoDB's waits are srw_mutex_impl/ssux_lock_impl
 * (or, where the server exports no symbol, as Debian's mariadbd, its
 * read-only data names InnoDB's settings: innodb_buffer_pool_size), a
 * JVM maps libjvm.so, GLib is libglib-2.0.so, musl's libc is its loader
 * (ld-musl-*) or a library under a *-linux-musl directory.  Rejected:
 * reading /proc/PID/comm or the command line (a renamed binary, a
 * launcher script).
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfimage.h"
#include "notices.h"
#include "procmaps.h"

enum notice_id {
	NOTICE_GO,
	NOTICE_JVM,
	NOTICE_FULL_FUTEX,
	NOTICE_MUSL,
	NOTICE_CHILDREN,
	NOTICE_FULL_EVERYWHERE,
	NOTICE_OFF_FUTEX,
	NOTICE_OFF_CPU,
	NOTICE_LOCK_ORDER,
	NOTICE_OFFSETS,
	NOTICE_DEBUGINFOD,
	NOTICE__COUNT,
};

/* Stripped modules named in NOTICE_OFFSETS, at most. */
#define OFFSETS_MAX 8

struct notices {
	char *text[NOTICE__COUNT];
	const char *list[NOTICE__COUNT];
	size_t n;
	char *stripped[OFFSETS_MAX];	/* modules whose sites are offsets */
	size_t n_stripped;
};

struct exe_facts {
	bool go, rust, innodb;
	bool lwlock, proc_sleep;	/* PostgreSQL's lock functions */
};

static bool has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *s;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

/* Whether section name's contents hold the bytes of text. */
static bool section_has(Elf *elf, const char *name, const char *text)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = NULL;
		GElf_Shdr shdr;
		const char *s;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!s || strcmp(s, name))
			continue;
		while ((data = elf_getdata(scn, data)))
			if (data->d_buf &&
			    memmem(data->d_buf, data->d_size, text, strlen(text)))
				return true;
	}
	return false;
}

static int on_func(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	struct exe_facts *f = ctx;

	(void)vaddr;
	(void)size;
	if (!strncmp(name, "rust_begin_unwind", 17))
		f->rust = true;
	if (strstr(name, "srw_mutex_impl") || strstr(name, "ssux_lock_impl"))
		f->innodb = true;
	if (!strcmp(name, "runtime.main"))
		f->go = true;
	if (!strcmp(name, "LWLockAcquire"))
		f->lwlock = true;
	if (!strcmp(name, "ProcSleep"))
		f->proc_sleep = true;
	return 0;
}

static void exe_facts(pid_t pid, struct exe_facts *f)
{
	struct elfimage *image;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (elfimage__open(path, &image))
		return;
	f->go = has_section(elfimage__elf(image), ".go.buildinfo") ||
		has_section(elfimage__elf(image), ".note.go.buildid");
	elfimage__for_each_func(image, on_func, f);
	if (!f->innodb)
		f->innodb = section_has(elfimage__elf(image), ".rodata",
					"innodb_buffer_pool_size");
	elfimage__close(image);
}

bool notices__go_executable(pid_t pid)
{
	struct exe_facts f = { 0 };

	exe_facts(pid, &f);
	return f.go;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The list in the order of enum notice_id. */
static void notices__relist(struct notices *n)
{
	n->n = 0;
	for (size_t i = 0; i < NOTICE__COUNT; i++)
		if (n->text[i])
			n->list[n->n++] = n->text[i];
}

static int notices__add(struct notices *n, enum notice_id id, char *text)
{
	if (!text)
		return -ENOMEM;
	n->text[id] = text;
	return 0;
}

int notices__detect(pid_t pid, const struct notices_run *run,
		    struct notices **out)
{
	bool full = run->full, several = run->several;
	struct notices *n = calloc(1, sizeof(*n));
	struct exe_facts f = { 0 };
	bool glib = false, jvm = false, musl = false;
	const char *runtime = NULL;
	struct procmaps *maps;
	int err = 0;

	if (!n)
		return -ENOMEM;
	if (!procmaps__read(pid, &maps)) {
		for (size_t i = 0; i < procmaps__count(maps); i++) {
			const char *path = procmaps__entry(maps, i)->path;
			const char *base = base_name(path);

			glib |= !strncmp(base, "libglib-2.0.so", 14);
			jvm |= !strcmp(base, "libjvm.so");
			musl |= !strncmp(base, "ld-musl-", 8) ||
				(strstr(path, "-linux-musl/") &&
				 !strncmp(base, "libc.so", 7));
		}
		procmaps__free(maps);
	}
	exe_facts(pid, &f);
	if (f.go)
		err = notices__add(n, NOTICE_GO, strdup(
			"a Go program: goroutines wait on sync.Mutex in Go's "
			"scheduler, which never reaches the kernel as a lock wait; "
			"futex rows of a cgo build are the runtime's own sleeps "
			"(use Go's mutex profile: runtime.SetMutexProfileFraction)"));
	if (!err && jvm)
		err = notices__add(n, NOTICE_JVM, strdup(
			"a JVM: Java monitors and LockSupport.park show as libjvm's "
			"park waits (futex or condvar rows in libjvm.so), and stacks "
			"stop at JIT code, named only when /tmp/perf-PID.map exists "
			"(jcmd PID Compiler.perfmap writes it)"));
	if (f.go)
		runtime = "Go";
	else if (f.rust)
		runtime = "Rust std";
	else if (f.innodb)
		runtime = "InnoDB";
	else if (glib)
		runtime = "GLib";
	if (!err && full && glib && runtime && !strcmp(runtime, "GLib")) {
		err = notices__add(n, NOTICE_FULL_FUTEX, strdup(
			"full mode probes the pthread functions: GLib's GMutex "
			"and GCond are futexes that never call them, so only "
			"contended mode (the default) sees their waits; its "
			"GRecMutex and GRWLock go through pthread and are seen"));
	} else if (!err && full && runtime) {
		char *text;

		if (asprintf(&text, "full mode probes the pthread functions, and "
			     "%s's locks are futexes that never call them: only "
			     "contended mode (the default) sees their waits",
			     runtime) < 0)
			text = NULL;
		err = notices__add(n, NOTICE_FULL_FUTEX, text);
	}
	if (!err && musl)
		err = notices__add(n, NOTICE_MUSL, strdup(
			"musl libc: waits and counts are measured, but call sites "
			"stay inside musl's libc (its blocking system calls run in "
			"assembly without unwind rules) and contended mode types "
			"its waits as futex (the lock layouts known are glibc's)"));
	if (!err && full && several)
		err = notices__add(n, NOTICE_FULL_EVERYWHERE, strdup(
			"full mode with several processes probes the pthread "
			"functions in every process of this machine that maps "
			"them, filtered in the kernel: other processes pay a "
			"probe hit on each of their lock calls while syncprof "
			"runs (contended mode, the default, costs them nothing)"));
	/*
	 * PostgreSQL: a heavyweight (row, table) lock's backend sleeps on
	 * its latch, in epoll_wait, as its idle backends do; its LWLocks on
	 * its own semaphores.  Neither is a futex wait nor a pthread call.
	 */
	if (!err && f.proc_sleep && !run->off_cpu)
		err = notices__add(n, NOTICE_OFF_FUTEX, strdup(
			"PostgreSQL: its heavyweight (row and table) locks wait "
			"on a latch in epoll_wait, not on a futex, and are not "
			"in these rows: --off-cpu sees them, as lock waits at "
			"ProcSleep's caller"));
	if (!err && f.lwlock && run->lock_order)
		err = notices__add(n, NOTICE_LOCK_ORDER, strdup(
			"PostgreSQL: --lock-order follows the pthread locks, and "
			"PostgreSQL takes none of its own: its LWLocks (atomics "
			"and semaphores) and heavyweight locks (the lock "
			"manager) are not in the order, so no cycle among them "
			"is reported (PostgreSQL's own deadlock detector "
			"watches the heavyweight ones)"));
	if (err) {
		notices__free(n);
		return err;
	}
	notices__relist(n);
	*out = n;
	return 0;
}

const char *notices__children(struct notices *n)
{
	if (n->text[NOTICE_CHILDREN])
		return NULL;
	n->text[NOTICE_CHILDREN] = strdup(
		"the target shows no lock activity, but it has child "
		"processes: --children follows them (and future ones)");
	notices__relist(n);
	return n->text[NOTICE_CHILDREN];
}

const char *notices__off_cpu(struct notices *n, uint64_t blocked_ns,
			     uint64_t lock_ns)
{
	char *text;

	/* Said already; PostgreSQL's own sentence says it; or the work is
	   in children not followed, which is the thing to say. */
	if (!n || n->text[NOTICE_OFF_CPU] || n->text[NOTICE_OFF_FUTEX] ||
	    n->text[NOTICE_CHILDREN])
		return NULL;
	if (asprintf(&text, "the target's threads were blocked %.3f s, and "
		     "%.3f s of it outside the lock waits counted here (poll, "
		     "reads, sleeps, ...): --off-cpu sees those waits too, "
		     "at their call sites", (double)blocked_ns * 1e-9,
		     (double)(blocked_ns - lock_ns) * 1e-9) < 0)
		return NULL;
	n->text[NOTICE_OFF_CPU] = text;
	notices__relist(n);
	return text;
}

const char *notices__offsets(struct notices *n, const char *module)
{
	char list[1024] = "", *text;
	const char *urls;
	size_t at = 0;

	if (!n || !module || n->n_stripped == OFFSETS_MAX)
		return NULL;
	for (size_t i = 0; i < n->n_stripped; i++)
		if (!strcmp(n->stripped[i], module))
			return NULL;
	n->stripped[n->n_stripped] = strdup(module);
	if (!n->stripped[n->n_stripped])
		return NULL;
	n->n_stripped++;
	for (size_t i = 0; i < n->n_stripped && at < sizeof(list); i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
				       i ? ", " : "", n->stripped[i]);
	/* With DEBUGINFOD_URLS set, its own notice says what it answered. */
	urls = getenv("DEBUGINFOD_URLS");
	if (asprintf(&text, "call sites in %s are offsets (module+0xoff): "
		     "stripped, and no debug file was found %s", list,
		     urls && urls[0] ? "here or through debuginfod (install "
		     "the debug symbols package)" : "(install the debug "
		     "symbols package, or set DEBUGINFOD_URLS to a "
		     "debuginfod server)") < 0)
		return NULL;
	free(n->text[NOTICE_OFFSETS]);
	n->text[NOTICE_OFFSETS] = text;
	notices__relist(n);
	return text;
}

const char *notices__debuginfod(struct notices *n, const char *text)
{
	char *copy;

	if (!n || !text)
		return NULL;
	copy = strdup(text);
	if (!copy)
		return NULL;
	free(n->text[NOTICE_DEBUGINFOD]);
	n->text[NOTICE_DEBUGINFOD] = copy;
	notices__relist(n);
	return copy;
}

void notices__free(struct notices *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_stripped; i++)
		free(n->stripped[i]);
	for (size_t i = 0; i < NOTICE__COUNT; i++)
		free(n->text[i]);
	free(n);
}

const char *const *notices__list(const struct notices *n, size_t *count)
{
	*count = n ? n->n : 0;
	return n ? n->list : NULL;
}
