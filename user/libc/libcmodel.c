// SPDX-License-Identifier: GPL-2.0
/*
 * Contended mode sees a wait only at the futex syscall, deep in libc.  The
 * BPF program steps out with the unwind rows and classifies the wait by
 * the outermost libc frame: the function the application called.
 *
 * Chosen: classify public names from .dynsym, which even a stripped libc
 * keeps, and follow their tail calls.  glibc 2.36's pthread_mutex_timedlock,
 * sem_wait and sem_timedwait end in `jmp` to an internal function, and
 * pthread_mutex_lock jumps to __pthread_mutex_lock_full for robust and PI
 * mutexes: after such a jump the public frame is gone, and the outermost
 * libc pc lies in code that no exported symbol names.  capstone finds the
 * direct jumps that leave a function; the .eh_frame FDE at the target
 * bounds the internal function, which inherits the class (two levels
 * deep).  glibc's own locks are told by the innermost frame instead:
 * __lll_lock_wait_private, exported as GLIBC_PRIVATE.
 *
 * Rejected: the internal slow-path symbols (__lll_lock_wait,
 * __futex_abstimed_wait_common) exist only in libc6-dbg, which production
 * machines rarely have; classifying by futex op alone cannot tell a
 * timedlock from a sem_wait (both FUTEX_WAIT_BITSET).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfimage.h"
#include "array.h"
#include "libcmodel.h"
#include "targetfile.h"
#include "procmaps.h"

/* Bytes of one function decoded for its tail calls. */
#define TAILCALL_CODE_MAX 8192
#define TAILCALL_DEPTH 2

struct libcmodel {
	struct cfitable *cfi;
	struct sp_func_range *funcs;
	size_t n_funcs, cap_funcs;
	struct cfitable_range lll_private;
	bool has_lll_private;
};

static const struct {
	const char *name;
	enum sp_func_class class;
} class_table[] = {
	{ "pthread_mutex_lock", SP_FUNC_MUTEX },
	{ "__pthread_mutex_lock", SP_FUNC_MUTEX },
	{ "pthread_mutex_timedlock", SP_FUNC_MUTEX },
	{ "__pthread_mutex_timedlock", SP_FUNC_MUTEX },
	{ "pthread_mutex_clocklock", SP_FUNC_MUTEX },
	{ "pthread_mutex_trylock", SP_FUNC_MUTEX },
	{ "__pthread_mutex_trylock", SP_FUNC_MUTEX },
	{ "mtx_lock", SP_FUNC_MUTEX },
	{ "mtx_timedlock", SP_FUNC_MUTEX },
	{ "pthread_cond_wait", SP_FUNC_CONDVAR },
	{ "pthread_cond_timedwait", SP_FUNC_CONDVAR },
	{ "pthread_cond_clockwait", SP_FUNC_CONDVAR },
	{ "cnd_wait", SP_FUNC_CONDVAR },
	{ "cnd_timedwait", SP_FUNC_CONDVAR },
	{ "pthread_cond_signal", SP_FUNC_CONDVAR_OTHER },
	{ "pthread_cond_broadcast", SP_FUNC_CONDVAR_OTHER },
	{ "pthread_cond_destroy", SP_FUNC_CONDVAR_OTHER },
	{ "cnd_signal", SP_FUNC_CONDVAR_OTHER },
	{ "cnd_broadcast", SP_FUNC_CONDVAR_OTHER },
	{ "pthread_rwlock_rdlock", SP_FUNC_RWLOCK_R },
	{ "__pthread_rwlock_rdlock", SP_FUNC_RWLOCK_R },
	{ "pthread_rwlock_timedrdlock", SP_FUNC_RWLOCK_R },
	{ "pthread_rwlock_clockrdlock", SP_FUNC_RWLOCK_R },
	{ "pthread_rwlock_wrlock", SP_FUNC_RWLOCK_W },
	{ "__pthread_rwlock_wrlock", SP_FUNC_RWLOCK_W },
	{ "pthread_rwlock_timedwrlock", SP_FUNC_RWLOCK_W },
	{ "pthread_rwlock_clockwrlock", SP_FUNC_RWLOCK_W },
	{ "sem_wait", SP_FUNC_SEM },
	{ "sem_timedwait", SP_FUNC_SEM },
	{ "sem_clockwait", SP_FUNC_SEM },
	{ "pthread_barrier_wait", SP_FUNC_BARRIER },
	{ "pthread_join", SP_FUNC_JOIN },
	{ "pthread_timedjoin_np", SP_FUNC_JOIN },
	{ "pthread_clockjoin_np", SP_FUNC_JOIN },
	{ "thrd_join", SP_FUNC_JOIN },
};

enum sp_func_class libcmodel__classify(const char *name)
{
	for (size_t i = 0; i < sizeof(class_table) / sizeof(class_table[0]); i++)
		if (!strcmp(class_table[i].name, name))
			return class_table[i].class;
	return SP_FUNC_OTHER;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct sp_func_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;	/* longest first */
}

size_t libcmodel__normalize(struct sp_func_range *r, size_t n)
{
	size_t out = 0;

	qsort(r, n, sizeof(*r), cmp_range);
	for (size_t i = 0; i < n; i++) {
		if (r[i].end <= r[i].start)
			continue;
		if (out && r[i].start < r[out - 1].end) {
			/* An alias or a nested range: the first one wins. */
			if (r[i].end <= r[out - 1].end)
				continue;
			r[i].start = r[out - 1].end;
		}
		r[out++] = r[i];
	}
	return out;
}

static int libcmodel__push(struct libcmodel *m, uint64_t start, uint64_t end,
			   enum sp_func_class class)
{
	if (array__grow(&m->funcs, &m->cap_funcs, m->n_funcs + 1,
			sizeof(*m->funcs)))
		return -ENOMEM;
	m->funcs[m->n_funcs++] = (struct sp_func_range){
		.start = start, .end = end, .class = class,
	};
	return 0;
}

struct dynsym_walk {
	struct libcmodel *m;
	int err;
};

static int libcmodel__on_symbol(void *ctx, const char *name, uint64_t vaddr,
				uint64_t size)
{
	struct dynsym_walk *w = ctx;
	enum sp_func_class class;

	if (!strcmp(name, "__lll_lock_wait_private") && size) {
		w->m->lll_private = (struct cfitable_range){ vaddr, vaddr + size };
		w->m->has_lll_private = true;
		return 0;
	}
	class = libcmodel__classify(name);
	if (class == SP_FUNC_OTHER || !size)
		return 0;
	w->err = libcmodel__push(w->m, vaddr, vaddr + size, class);
	return w->err;
}

enum sp_func_class libcmodel__class_at(const struct libcmodel *m,
				       uint64_t addr)
{
	size_t lo = 0, hi = m->n_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->funcs[mid].start)
			hi = mid;
		else if (addr >= m->funcs[mid].end)
			lo = mid + 1;
		else
			return (enum sp_func_class)m->funcs[mid].class;
	}
	return SP_FUNC_OTHER;
}

static bool is_direct_jump(const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x86 = &insn->detail->x86;
	bool jump = false;

	for (uint8_t g = 0; g < insn->detail->groups_count; g++)
		if (insn->detail->groups[g] == CS_GRP_JUMP)
			jump = true;
	if (!jump || x86->op_count != 1 || x86->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x86->operands[0].imm;
	return true;
}

/*
 * Adds the functions that range `f` leaves by a direct jump, with f's
 * class, unless they are classified already.
 */
static int libcmodel__follow(struct libcmodel *m, struct elfimage *image,
			     int fd, csh cs, struct sp_func_range f)
{
	uint8_t code[TAILCALL_CODE_MAX];
	uint64_t offset, size = f.end - f.start, address = f.start;
	const uint8_t *p = code;
	cs_insn *insn;
	ssize_t got;
	int err = 0;

	if (size > sizeof(code))
		size = sizeof(code);
	if (elfimage__file_offset(image, f.start, &offset))
		return 0;
	got = pread(fd, code, size, (off_t)offset);
	if (got <= 0)
		return 0;
	size = (uint64_t)got;
	insn = cs_malloc(cs);
	if (!insn)
		return -ENOMEM;
	while (!err && cs_disasm_iter(cs, &p, &size, &address, insn)) {
		struct cfitable_range callee;
		uint64_t target;

		if (!is_direct_jump(insn, &target) ||
		    (target >= f.start && target < f.end))
			continue;
		if (libcmodel__class_at(m, target) != SP_FUNC_OTHER ||
		    cfitable__function_at(m->cfi, target, &callee) ||
		    callee.start != target)
			continue;	/* classified, or not a function entry */
		err = libcmodel__push(m, callee.start, callee.end, f.class);
		if (!err)
			m->n_funcs = libcmodel__normalize(m->funcs, m->n_funcs);
	}
	cs_free(insn, 1);
	return err;
}

static int libcmodel__tail_calls(struct libcmodel *m, struct elfimage *image,
				 const char *path)
{
	int fd, err = targetfile__open(path, 0, &fd);
	csh cs;

	if (err)
		return err;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		close(fd);
		return -EINVAL;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (int depth = 0; depth < TAILCALL_DEPTH && !err; depth++) {
		size_t n = m->n_funcs;
		struct sp_func_range *level = malloc(n * sizeof(*level));

		if (!level) {
			err = -ENOMEM;
			break;
		}
		memcpy(level, m->funcs, n * sizeof(*level));
		for (size_t i = 0; i < n && !err; i++)
			err = libcmodel__follow(m, image, fd, cs, level[i]);
		free(level);
	}
	cs_close(&cs);
	close(fd);
	return err;
}

int libcmodel__build(const char *path, struct libcmodel **out)
{
	struct libcmodel *m = calloc(1, sizeof(*m));
	struct dynsym_walk walk = { .m = m };
	struct elfimage *image = NULL;
	int err;

	if (!m)
		return -ENOMEM;
	err = cfitable__build(path, NULL, 0, &m->cfi);
	if (!err)
		err = elfimage__open(path, &image);
	if (!err)
		err = elfimage__for_each_dynfunc(image, libcmodel__on_symbol,
						 &walk);
	if (!err && walk.err)
		err = walk.err;
	if (!err) {
		m->n_funcs = libcmodel__normalize(m->funcs, m->n_funcs);
		err = libcmodel__tail_calls(m, image, path);
	}
	elfimage__close(image);
	if (err) {
		libcmodel__free(m);
		return err;
	}
	*out = m;
	return 0;
}

void libcmodel__free(struct libcmodel *m)
{
	if (!m)
		return;
	cfitable__free(m->cfi);
	free(m->funcs);
	free(m);
}

const struct sp_unwind_row *libcmodel__rows(const struct libcmodel *m,
					    size_t *n)
{
	return cfitable__rows(m->cfi, n);
}

const struct sp_func_range *libcmodel__funcs(const struct libcmodel *m,
					     size_t *n)
{
	*n = m->n_funcs;
	return m->funcs;
}

int libcmodel__lll_private(const struct libcmodel *m,
			   struct cfitable_range *range)
{
	if (!m->has_lll_private)
		return -ENOENT;
	*range = m->lll_private;
	return 0;
}

int libcmodel__place(const struct libcmodel *m, pid_t pid, const char *path,
		     struct libcmodel_placement *out)
{
	struct libcmodel_placement place = { .text_start = UINT64_MAX };
	struct elfimage *image;
	struct procmaps *maps;
	bool found = false;
	struct stat st;
	int err;

	if (stat(path, &st))
		return -errno;
	err = procmaps__read(pid, &maps);
	if (err)
		return err;
	err = elfimage__open(path, &image);
	if (err) {
		procmaps__free(maps);
		return err;
	}
	for (size_t i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		uint64_t bias;

		if (!e->exec || e->inode != st.st_ino || e->dev != st.st_dev)
			continue;
		if (elfimage__load_bias(image, e->start, e->offset, &bias))
			continue;
		if (found && bias != place.bias)
			continue;	/* mapped twice: keep the first */
		place.bias = bias;
		if (e->start < place.text_start)
			place.text_start = e->start;
		if (e->end > place.text_end)
			place.text_end = e->end;
		found = true;
	}
	elfimage__close(image);
	procmaps__free(maps);
	if (!found)
		return -ENOENT;
	*out = place;
	return 0;
}
