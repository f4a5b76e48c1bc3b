// SPDX-License-Identifier: GPL-2.0
/*
 * elfutils' debuginfod client, loaded with dlopen: syncprof runs on a
 * machine without libdebuginfod1 (an optional package, as libdwfl itself
 * treats it), and only a user who set DEBUGINFOD_URLS pays for loading it
 * and libcurl.  The header (libdebuginfod-dev) gives the types.
 *
 * Why not libdwfl's own use of the same client (dwfl_standard_find_
 * debuginfo calls it when DEBUGINFOD_URLS is set): it has no limit but
 * the client's per-transfer DEBUGINFOD_TIMEOUT (90 s by default), which a
 * report waits out for every module of an unreachable server, and it
 * tells nothing.  The symbolizer hides DEBUGINFOD_URLS from it while it
 * looks locally, and asks here when nothing local was found.
 *
 * Cache: the client's own (DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client),
 * kept across runs, where a later run finds the file without the
 * network; within a run each build ID is asked once.  Limits: the
 * progress callback aborts a fetch past limit_s (after one such abort no
 * further module is asked this run: the server is not answering), and a
 * fetch past the module's size limit (10 times the module, at least
 * SIZE_MIN, at most SIZE_MAX; DEBUGINFOD_MAXSIZE, when set, instead): a
 * server could otherwise write any amount into root's cache (1 GiB of
 * garbage in 3 s, measured).  The client itself checks the size only
 * against a Content-Length the server chose to send.
 *
 * A reply is used only when it is an ELF file with the module's build
 * ID; anything else is removed from the client's cache (a later run
 * would read it from there without asking) and said, once, as the
 * reason the module stays unnamed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "debugfetch.h"
#include "log.h"

/* A fetch slower than this is said, with where the cache keeps it. */
#define SLOW_S 1.0
/* A debug file may be this many times its module's size ... */
#define SIZE_FACTOR 10
/* ... but at least, and at most (the memory copy's limit, dwflsession.c): */
#define SIZE_MIN (64ull << 20)
#define SIZE_MAX_ (1ull << 30)

/* A build ID asked for in vain, and why: each is asked once a run. */
struct asked {
	unsigned char id[64];
	size_t len;
	int err;
};

struct debugfetch {
	void *lib;
	debuginfod_client *(*begin)(void);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
	debuginfod_client *client;
	double limit_s;
	double deadline;	/* of the fetch under way */
	uint64_t max_bytes;	/* of the fetch under way */
	uint64_t user_max;	/* DEBUGINFOD_MAXSIZE, or 0 */
	bool too_big;		/* the fetch under way passed max_bytes */
	bool given_up;		/* a fetch hit the limit: ask no more */
	struct asked *asked;	/* build IDs that failed: not asked again */
	size_t n_asked, cap_asked;
	char *news;		/* the sentence, when it changed */
	bool news_new;
};

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The client calls back with itself only; it keeps the fetcher as its
 * user data, read back through the loaded library's own accessor.
 */
static void *(*get_user_data)(debuginfod_client *);

static int debugfetch__progress(debuginfod_client *c, long a, long b)
{
	struct debugfetch *f = get_user_data ? get_user_data(c) : NULL;

	/* a: bytes so far; b: the whole, when the server said it. */
	if (f && ((a > 0 && (uint64_t)a > f->max_bytes) ||
		  (b > 0 && (uint64_t)b > f->max_bytes))) {
		f->too_big = true;
		return 1;
	}
	return f && monotonic_s() > f->deadline;
}

static void *debugfetch__sym(struct debugfetch *f, const char *name, bool *ok)
{
	void *p = dlsym(f->lib, name);

	*ok &= p != NULL;
	return p;
}

int debugfetch__new(double limit_s, struct debugfetch **out)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debugfetch *f;
	bool ok = true;

	*out = NULL;
	if (!urls || !urls[0])
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->limit_s = getenv("DEBUGINFOD_MAXTIME") &&
		     atof(getenv("DEBUGINFOD_MAXTIME")) > 0 ?
		     atof(getenv("DEBUGINFOD_MAXTIME")) : limit_s;
	if (getenv("DEBUGINFOD_MAXSIZE"))
		f->user_max = strtoull(getenv("DEBUGINFOD_MAXSIZE"), NULL, 10);
	f->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!f->lib) {
		pr_warn("DEBUGINFOD_URLS is set, but elfutils' debuginfod client "
			"cannot be loaded (%s): stripped modules stay unnamed "
			"(install libdebuginfod1)", dlerror());
		free(f);
		return 0;
	}
	*(void **)&f->begin = debugfetch__sym(f, "debuginfod_begin", &ok);
	*(void **)&f->find = debugfetch__sym(f, "debuginfod_find_debuginfo", &ok);
	*(void **)&f->set_progressfn = debugfetch__sym(f, "debuginfod_set_progressfn", &ok);
	*(void **)&f->set_user_data = debugfetch__sym(f, "debuginfod_set_user_data", &ok);
	*(void **)&f->get_user_data = debugfetch__sym(f, "debuginfod_get_user_data", &ok);
	*(void **)&f->end = debugfetch__sym(f, "debuginfod_end", &ok);
	if (ok)
		f->client = f->begin();
	if (!f->client) {
		pr_warn("DEBUGINFOD_URLS is set, but elfutils' debuginfod client "
			"does not start: stripped modules stay unnamed");
		debugfetch__free(f);
		return 0;
	}
	get_user_data = f->get_user_data;
	f->set_user_data(f->client, f);
	f->set_progressfn(f->client, debugfetch__progress);
	*out = f;
	return 0;
}

void debugfetch__free(struct debugfetch *f)
{
	if (!f)
		return;
	if (f->client)
		f->end(f->client);
	if (f->lib)
		dlclose(f->lib);
	free(f->news);
	free(f->asked);
	free(f);
}

static void debugfetch__say(struct debugfetch *f, char *text)
{
	if (!text)
		return;
	free(f->news);
	f->news = text;
	f->news_new = true;
}

/* Whether the file at fd is an ELF file with this build ID. */
static bool debugfetch__matches(int fd, const unsigned char *id, size_t len)
{
	Elf *elf = elf_version(EV_CURRENT) != EV_NONE ?
		   elf_begin(fd, ELF_C_READ, NULL) : NULL;
	const void *bits;
	bool same = false;
	ssize_t n;

	if (elf && elf_kind(elf) == ELF_K_ELF) {
		n = dwelf_elf_gnu_build_id(elf, &bits);
		same = n == (ssize_t)len && !memcmp(bits, id, len);
	}
	if (elf)
		elf_end(elf);
	return same;
}

/* Remembers a build ID asked in vain: err, for every later ask. */
static int debugfetch__failed(struct debugfetch *f, const unsigned char *id,
			      size_t len, int err)
{
	struct asked *a;

	if (len > sizeof(a->id) ||
	    array__grow(&f->asked, &f->cap_asked, f->n_asked + 1,
			sizeof(*f->asked)))
		return err;
	a = &f->asked[f->n_asked++];
	memcpy(a->id, id, len);
	a->len = len;
	a->err = err;
	return err;
}

/* The size limit of a module's debug file (see the top). */
static uint64_t debugfetch__limit(const struct debugfetch *f,
				  uint64_t module_size)
{
	uint64_t max = module_size * SIZE_FACTOR;

	if (f->user_max)
		return f->user_max;
	if (max < SIZE_MIN)
		max = SIZE_MIN;
	return max > SIZE_MAX_ ? SIZE_MAX_ : max;
}

int debugfetch__find(struct debugfetch *f, const unsigned char *id,
		     size_t len, const char *module, uint64_t module_size,
		     char **path)
{
	const char *name = strrchr(module, '/') ? strrchr(module, '/') + 1
						 : module;
	double start, took;
	char *text = NULL;
	int fd;

	*path = NULL;
	if (!f || f->given_up || !len)
		return -ENOENT;
	for (size_t i = 0; i < f->n_asked; i++)
		if (f->asked[i].len == len && !memcmp(f->asked[i].id, id, len))
			return f->asked[i].err;
	start = monotonic_s();
	f->deadline = start + f->limit_s;
	f->max_bytes = debugfetch__limit(f, module_size);
	f->too_big = false;
	fd = f->find(f->client, id, (int)len, path);
	took = monotonic_s() - start;
	if (fd >= 0 && !debugfetch__matches(fd, id, len)) {
		/* Not its debug file: out of the cache, or a later run uses it. */
		close(fd);
		if (*path)
			unlink(*path);
		if (asprintf(&text, "debuginfod: the server's reply for %s's "
			     "debug file is not it (not ELF, or another build "
			     "ID): not used, and removed from the client's "
			     "cache", name) < 0)
			text = NULL;
		debugfetch__say(f, text);
		free(*path);
		*path = NULL;
		return debugfetch__failed(f, id, len, -ENOEXEC);
	}
	if (fd >= 0) {
		if (took > SLOW_S &&
		    asprintf(&text, "debuginfod: %s's debug file took %.1f s "
			     "to fetch; later runs read it from the client's "
			     "cache", name, took) < 0)
			text = NULL;
		debugfetch__say(f, text);
		pr_info("debuginfod: %s's debug file in %.2f s: %s", name, took,
			*path ? *path : "?");
		return fd;
	}
	if (f->too_big || fd == -EFBIG) {
		if (asprintf(&text, "debuginfod: %s's debug file is larger "
			     "than its limit of %" PRIu64 " MiB: not fetched "
			     "(DEBUGINFOD_MAXSIZE, in bytes, sets another)",
			     name, f->max_bytes >> 20) < 0)
			text = NULL;
		fd = -EFBIG;
	} else if (took >= f->limit_s) {
		f->given_up = true;
		if (asprintf(&text, "debuginfod: no answer for %s's debug file "
			     "within %.0f s; no further module is asked this run "
			     "(DEBUGINFOD_URLS)", name, f->limit_s) < 0)
			text = NULL;
	} else if (asprintf(&text, "debuginfod: no debug file for %s (%s, "
			    "after %.1f s)", name, strerror(-fd), took) < 0) {
		text = NULL;
	}
	debugfetch__say(f, text);
	free(*path);
	*path = NULL;
	return debugfetch__failed(f, id, len, fd);
}

const char *debugfetch__news(struct debugfetch *f)
{
	if (!f || !f->news_new)
		return NULL;
	f->news_new = false;
	return f->news;
}
