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
 * network; within a run each build ID is asked once.  Limit: the
 * progress callback aborts a fetch past limit_s; after one such abort no
 * further module is asked this run (the server is not answering).
 */
#include <dlfcn.h>
#include <errno.h>
#include <elfutils/debuginfod.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "debugfetch.h"
#include "log.h"

/* A fetch slower than this is said, with where the cache keeps it. */
#define SLOW_S 1.0

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
	bool given_up;		/* a fetch hit the limit: ask no more */
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

	(void)a;
	(void)b;
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

int debugfetch__find(struct debugfetch *f, const unsigned char *id,
		     size_t len, const char *module, char **path)
{
	const char *name = strrchr(module, '/') ? strrchr(module, '/') + 1
						 : module;
	double start, took;
	char *text = NULL;
	int fd;

	*path = NULL;
	if (!f || f->given_up || !len)
		return -ENOENT;
	start = monotonic_s();
	f->deadline = start + f->limit_s;
	fd = f->find(f->client, id, (int)len, path);
	took = monotonic_s() - start;
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
	if (took >= f->limit_s) {
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
	return fd;
}

const char *debugfetch__news(struct debugfetch *f)
{
	if (!f || !f->news_new)
		return NULL;
	f->news_new = false;
	return f->news;
}
