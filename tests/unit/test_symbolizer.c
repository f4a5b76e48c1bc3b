// SPDX-License-Identifier: GPL-2.0
/*
 * symbolizer: call sites and lock objects of a live (then dead) child,
 * named from outside.
 *
 * The fixtures are built by `make test` (or `make build/tests/fixtures/X`,
 * see the "symbolizer fixtures" section of the Makefile) and looked up in
 * $SYNCPROF_FIXTURES, else build/tests/fixtures relative to the current
 * directory (the repository root):
 *
 *   callsites[-VARIANT]  tests/fixtures/callsites.c, built several ways,
 *                        with libcallsites.so (callsites_lib.c)
 *   cxxsites             tests/fixtures/cxxsites.cpp
 *   rustsites-legacy, rustsites-v0
 *                        tests/fixtures/rustsites.rs: "func 0xADDR NAME"
 *                        lines, a function's first byte and its name
 *
 * Each prints, for every call site, its return address and the names
 * expected for it (the compiler's own __LINE__ and __func__), and for every
 * lock the name expected; then "ready"; then it waits for EOF on stdin.
 * The test reads /proc/PID/maps itself to know which file holds which
 * address and at what file offset.  What each build is expected to give:
 *
 *   DWARF (callsites, -pie, -nopie, -debuglink, -buildid with its
 *   directory, cxxsites, and libcallsites.so in all of them): function,
 *   file and line of the call, through inlined wrappers.
 *   .symtab without DWARF (-nodebug, -buildid without its directory):
 *   the ELF symbol and the offset in it, no file, line 0.
 *   neither (-stripped): module and offset only; the executable's locks
 *   are not named (its .dynsym holds none of them).
 *
 * No root needed: the children are the test's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "elfimage.h"
#include "symbolizer.h"

#define UNUSED __attribute__((unused))

#define MAX_SITES 32
#define MAX_OBJECTS 32
#define MAX_MAPPINGS 512
#define LINE_TIMEOUT_MS 20000
#define MANY_LOOKUPS 10000

/* What the executable's own addresses should resolve to. */
enum debug_level {
	FULL,		/* DWARF: function, file, line */
	SYMTAB,		/* .symtab only: function and offset */
	STRIPPED,	/* no .symtab: module and offset */
};

struct site {
	uint64_t ret;
	uint64_t start;		/* address of `symbol`, 0 if unknown */
	unsigned int line;
	char file[256];
	char symbol[128];	/* ELF symbol holding the call, "-" if unknown */
	char func[256];		/* expected function name with DWARF */
	/* An inlined call: the frame it was inlined into (line 0: none). */
	unsigned int caller_line;
	char caller_file[256];
	char caller_func[256];
};

struct object {
	uint64_t addr;
	char name[256];		/* "-": no name */
	char dwarf_name[256];	/* with DWARF (a member's path); "": name */
};

/* A function's first byte and its demangled name (the Rust fixture). */
struct func {
	uint64_t addr;
	char name[256];
};

struct mapping {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	bool exec;
	char path[PATH_MAX];
};

struct child {
	pid_t pid;
	int in_fd;		/* its stdin */
	int out_fd;		/* its stdout */
	char buf[8192];
	size_t len;
	char exe[PATH_MAX];	/* as the kernel names it in maps */
	char variant[64];
	struct site sites[MAX_SITES];
	size_t n_sites;
	struct object objects[MAX_OBJECTS];
	size_t n_objects;
	struct func funcs[MAX_SITES];
	size_t n_funcs;
	struct mapping *maps;	/* read while it runs */
	size_t n_maps;
};

static char fixtures_dir[PATH_MAX];
/* Whatever a test leaves behind when an assertion fails. */
static struct child cur = { .pid = -1, .in_fd = -1, .out_fd = -1 };
static struct symbolizer *cur_sym;

/* ---- the child ------------------------------------------------------- */

static void fixture_path(const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", fixtures_dir, name);

	assert_true(n > 0 && (size_t)n < len);
	if (access(path, X_OK | R_OK)) {
		print_error("fixture %s: %s; build it with 'make %s' (or "
			    "'make test') from the repository root, or set "
			    "SYNCPROF_FIXTURES\n", path, strerror(errno),
			    "build/tests/fixtures/...");
		fail();
	}
}

static void child_spawn(struct child *c, const char *name)
{
	char path[PATH_MAX];
	int in[2], out[2];
	pid_t pid;

	fixture_path(name, path, sizeof(path));
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { path, NULL };

		if (dup2(in[0], STDIN_FILENO) < 0 ||
		    dup2(out[1], STDOUT_FILENO) < 0)
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->pid = pid;
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->len = 0;
}

/* One line of the child's stdout without its '\n'; false at EOF. */
static bool child_read_line(struct child *c, char *line, size_t size)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		struct pollfd pfd = { .fd = c->out_fd, .events = POLLIN };
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - c->buf);

			assert_true(len < size);
			memcpy(line, c->buf, len);
			line[len] = '\0';
			c->len -= len + 1;
			memmove(c->buf, nl + 1, c->len);
			return true;
		}
		assert_true(c->len < sizeof(c->buf));
		n = poll(&pfd, 1, LINE_TIMEOUT_MS);
		if (n == 0) {
			print_error("child %d: no output for %d ms\n", (int)c->pid,
				    LINE_TIMEOUT_MS);
			fail();
		}
		assert_true(n > 0);
		n = read(c->out_fd, c->buf + c->len, sizeof(c->buf) - c->len);
		assert_true(n >= 0);
		if (n == 0)
			return false;
		c->len += (size_t)n;
	}
}

static void read_maps(struct child *c)
{
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
	f = fopen(path, "re");
	assert_non_null(f);
	c->maps = calloc(MAX_MAPPINGS, sizeof(*c->maps));
	assert_non_null(c->maps);
	c->n_maps = 0;
	while (fgets(line, sizeof(line), f)) {
		struct mapping *m = &c->maps[c->n_maps];
		char perms[8];
		int pos = 0;

		assert_true(c->n_maps < MAX_MAPPINGS);
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n",
			   &m->start, &m->end, perms, &m->offset, &pos) < 4 || !pos)
			continue;
		if (line[pos] != '/')
			continue;	/* anonymous, [heap], [stack], [vdso] */
		snprintf(m->path, sizeof(m->path), "%s", line + pos);
		m->exec = perms[2] == 'x';
		c->n_maps++;
	}
	fclose(f);
}

/* The file mapping holding addr, or NULL. */
static const struct mapping *mapping_of(const struct child *c, uint64_t addr)
{
	for (size_t i = 0; i < c->n_maps; i++)
		if (addr >= c->maps[i].start && addr < c->maps[i].end)
			return &c->maps[i];
	return NULL;
}

static void parse_site(struct child *c, const char *line)
{
	struct site *s = &c->sites[c->n_sites];
	int pos = 0;

	assert_true(c->n_sites < MAX_SITES);
	if (sscanf(line, "site 0x%" SCNx64 " 0x%" SCNx64 " %u %255s %127s %n",
		   &s->ret, &s->start, &s->line, s->file, s->symbol, &pos) != 5 ||
	    !pos) {
		print_error("bad line from the fixture: '%s'\n", line);
		fail();
	}
	snprintf(s->func, sizeof(s->func), "%s", line + pos);
	assert_true(s->ret != 0 && s->line > 0 && s->func[0]);
	c->n_sites++;
}

static void parse_func(struct child *c, const char *line)
{
	struct func *f = &c->funcs[c->n_funcs];
	int pos = 0;

	assert_true(c->n_funcs < MAX_SITES);
	if (sscanf(line, "func 0x%" SCNx64 " %n", &f->addr, &pos) != 1 || !pos) {
		print_error("bad line from the fixture: '%s'\n", line);
		fail();
	}
	snprintf(f->name, sizeof(f->name), "%s", line + pos);
	c->n_funcs++;
}

static void parse_caller(struct child *c, const char *line)
{
	struct site *s = NULL;
	uint64_t ret;
	int pos = 0;

	if (sscanf(line, "caller 0x%" SCNx64 " %n", &ret, &pos) != 1 || !pos)
		goto bad;
	for (size_t i = 0; i < c->n_sites; i++)
		if (c->sites[i].ret == ret)
			s = &c->sites[i];
	if (!s || sscanf(line + pos, "%u %255s %255s", &s->caller_line,
			 s->caller_file, s->caller_func) != 3)
		goto bad;
	return;
bad:
	print_error("bad line from the fixture: '%s'\n", line);
	fail();
}

static void parse_object(struct child *c, const char *line)
{
	struct object *o = &c->objects[c->n_objects];
	int pos = 0;

	assert_true(c->n_objects < MAX_OBJECTS);
	if (sscanf(line, "object 0x%" SCNx64 " %n", &o->addr, &pos) != 1 || !pos) {
		print_error("bad line from the fixture: '%s'\n", line);
		fail();
	}
	o->dwarf_name[0] = 0;
	if (sscanf(line + pos, "%255s %255s", o->name, o->dwarf_name) < 1) {
		print_error("bad line from the fixture: '%s'\n", line);
		fail();
	}
	c->n_objects++;
}

/* Spawns fixture `name` and reads what it prints up to "ready". */
static struct child *child_start(const char *name)
{
	struct child *c = &cur;
	char line[1024], path[64];
	ssize_t n;

	child_spawn(c, name);
	for (;;) {
		if (!child_read_line(c, line, sizeof(line))) {
			print_error("%s exited before 'ready'\n", name);
			fail();
		}
		if (!strcmp(line, "ready"))
			break;
		if (!strncmp(line, "variant ", 8))
			snprintf(c->variant, sizeof(c->variant), "%.63s", line + 8);
		else if (!strncmp(line, "site ", 5))
			parse_site(c, line);
		else if (!strncmp(line, "object ", 7))
			parse_object(c, line);
		else if (!strncmp(line, "caller ", 7))
			parse_caller(c, line);
		else if (!strncmp(line, "func ", 5))
			parse_func(c, line);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)c->pid);
	n = readlink(path, c->exe, sizeof(c->exe) - 1);
	assert_true(n > 0);
	c->exe[n] = '\0';
	read_maps(c);
	if (c->n_sites)
		assert_non_null(mapping_of(c, c->sites[0].ret - 1));
	return c;
}

/* EOF on its stdin: it exits 0; reaped here. */
static void child_finish(struct child *c)
{
	int status;

	close(c->in_fd);
	c->in_fd = -1;
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	c->pid = -1;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* Gone for good: nothing left in /proc to read from. */
}

static void child_cleanup(struct child *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->out_fd >= 0)
		close(c->out_fd);
	free(c->maps);
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->in_fd = c->out_fd = -1;
}

static int setup(void **state UNUSED)
{
	child_cleanup(&cur);
	cur_sym = NULL;
	return 0;
}

static int teardown(void **state UNUSED)
{
	symbolizer__free(cur_sym);
	cur_sym = NULL;
	child_cleanup(&cur);
	return 0;
}

static int group_setup(void **state UNUSED)
{
	const char *dir = getenv("SYNCPROF_FIXTURES");

	if (!realpath(dir && *dir ? dir : "build/tests/fixtures", fixtures_dir)) {
		fprintf(stderr, "no fixtures directory (%s): build them with "
			"'make test' from the repository root, or set "
			"SYNCPROF_FIXTURES\n", dir && *dir ? dir : "build/tests/fixtures");
		return -1;
	}
	/* A child that dies must not take the test with it. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ---- expectations ---------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* path is suffix, or ends with "/" suffix. */
static bool ends_with_path(const char *path, const char *suffix)
{
	size_t len = strlen(path), slen = strlen(suffix);

	if (len < slen || strcmp(path + len - slen, suffix))
		return false;
	return len == slen || path[len - slen - 1] == '/';
}

static const char *str_or_null(const char *s)
{
	return s ? s : "(null)";
}

/* libstdc++'s and the C library's headers. */
static bool srcpath_is_system_header(const char *path)
{
	return path && (!strncmp(path, "/usr/include/", 13) ||
			!strncmp(path, "/usr/lib/gcc/", 13));
}

static void print_info(const char *what, uint64_t addr,
		       const struct symbol_info *info)
{
	print_message("%s 0x%" PRIx64 ": module=%s+0x%" PRIx64
		      " function=%s+0x%" PRIx64 " file=%s line=%u\n", what, addr,
		      str_or_null(info->module), info->module_offset,
		      str_or_null(info->function), info->function_offset,
		      str_or_null(info->file), info->line);
}

/* How the executable is built; libcallsites.so always has DWARF. */
static enum debug_level level_of(const struct child *c, const char *module,
				 enum debug_level exe_level)
{
	return strcmp(module, c->exe) ? FULL : exe_level;
}

static void assert_site_info(const struct child *c, const struct site *s,
			     enum debug_level exe_level,
			     const struct symbol_info *info)
{
	const struct mapping *m = mapping_of(c, s->ret - 1);
	enum debug_level level;

	assert_non_null(m);
	if (!info->module || strcmp(info->module, m->path))
		print_info("site", s->ret, info);
	/* The path in the target, as its maps name it. */
	assert_non_null(info->module);
	assert_string_equal(info->module, m->path);
	assert_int_equal(info->module_offset, s->ret - m->start + m->offset);

	level = level_of(c, m->path, exe_level);
	switch (level) {
	case FULL:
		if (!info->function || strcmp(info->function, s->func) ||
		    !info->file || !ends_with_path(info->file, s->file) ||
		    info->line != s->line) {
			print_info("site", s->ret, info);
			print_message("  expected function=%s file=.../%s line=%u\n",
				      s->func, s->file, s->line);
		}
		assert_non_null(info->function);
		assert_string_equal(info->function, s->func);
		assert_non_null(info->file);
		if (!ends_with_path(info->file, s->file)) {
			print_error("file %s does not end with %s\n", info->file,
				    s->file);
			fail();
		}
		assert_int_equal(info->line, s->line);
		/* Not inlined: the offset in the function the symbol names. */
		if (s->start && !strcmp(s->symbol, s->func))
			assert_int_equal(info->function_offset, s->ret - s->start);
		break;
	case SYMTAB:
		if (!info->function || strcmp(info->function, s->symbol) ||
		    info->file || info->line) {
			print_info("site", s->ret, info);
			print_message("  expected function=%s, no file, line 0\n",
				      s->symbol);
		}
		assert_non_null(info->function);
		assert_string_equal(info->function, s->symbol);
		assert_true(info->function_offset > 0);
		if (s->start)
			assert_int_equal(info->function_offset, s->ret - s->start);
		assert_null(info->file);
		assert_int_equal(info->line, 0);
		break;
	case STRIPPED:
		/* The executable exports none of its functions in .dynsym. */
		if (info->function || info->file || info->line)
			print_info("site", s->ret, info);
		assert_null(info->function);
		assert_null(info->file);
		assert_int_equal(info->line, 0);
		break;
	}
}

static void print_frames(const struct symbol_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		print_message("  frame %zu:%s function=%s+0x%" PRIx64
			      " file=%s line=%u decl_line=%u\n", i,
			      f[i].inlined ? " inlined" : "",
			      str_or_null(f[i].info.function),
			      f[i].info.function_offset,
			      str_or_null(f[i].info.file), f[i].info.line,
			      f[i].decl_line);
}

static void assert_frame(const struct symbol_frame *f, const char *func,
			 const char *file, unsigned int line, bool inlined)
{
	assert_non_null(f->info.function);
	assert_string_equal(f->info.function, func);
	assert_non_null(f->info.file);
	if (!ends_with_path(f->info.file, file)) {
		print_error("file %s does not end with %s\n", f->info.file, file);
		fail();
	}
	assert_int_equal(f->info.line, line);
	assert_int_equal(f->inlined, inlined);
}

/*
 * The frames of a call site, inlined calls expanded: every frame but the
 * last inlined, all in the call's module and at its offset.  With DWARF,
 * the last frame is the function the call is in, at the call's line (C)
 * or the user's line (C++, whose inner frames are libstdc++'s inlined
 * wrappers); a call inlined from a helper is the helper's frame, then
 * its caller's at the line of the helper's call.  Without DWARF: one
 * frame, the call site's.
 */
static void check_frames(struct symbolizer *sym, const struct child *c,
			 const struct site *s, enum debug_level exe_level,
			 const struct symbol_info *site_info)
{
	const struct mapping *m = mapping_of(c, s->ret - 1);
	const struct symbol_frame *f = NULL;
	size_t n = 0;
	bool cxx = !strcmp(c->variant, "cxx");

	assert_int_equal(symbolizer__frames(sym, s->ret, true, &f, &n), 0);
	assert_non_null(f);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		if (!f[i].info.module || strcmp(f[i].info.module, m->path) ||
		    f[i].info.module_offset != s->ret - m->start + m->offset ||
		    f[i].inlined != (i + 1 < n))
			print_frames(f, n);
		assert_non_null(f[i].info.module);
		assert_string_equal(f[i].info.module, m->path);
		assert_int_equal(f[i].info.module_offset,
				 s->ret - m->start + m->offset);
		assert_int_equal(f[i].inlined, i + 1 < n);
	}
	if (level_of(c, m->path, exe_level) == FULL) {
		/* Each function begins before the line the frame is at. */
		for (size_t i = 0; i < n; i++) {
			if (!f[i].decl_line || f[i].decl_line > f[i].info.line)
				print_frames(f, n);
			assert_true(f[i].decl_line > 0);
			assert_true(f[i].decl_line <= f[i].info.line);
		}
	}
	if (level_of(c, m->path, exe_level) != FULL) {
		if (n != 1)
			print_frames(f, n);
		assert_int_equal(n, 1);
		assert_string_equal(str_or_null(f[0].info.function),
				    str_or_null(site_info->function));
		assert_int_equal(f[0].info.function_offset,
				 site_info->function_offset);
		assert_null(f[0].info.file);
		return;
	}
	if (cxx) {
		/* lock_guard, mutex::lock, __gthread_mutex_lock... inlined. */
		if (n < 2 || !srcpath_is_system_header(f[0].info.file))
			print_frames(f, n);
		assert_true(n >= 2);
		assert_true(srcpath_is_system_header(f[0].info.file));
		assert_frame(&f[n - 1], s->func, s->file, s->line, false);
		return;
	}
	if (s->caller_line) {
		if (n != 2)
			print_frames(f, n);
		assert_int_equal(n, 2);
		assert_frame(&f[0], s->func, s->file, s->line, true);
		assert_frame(&f[1], s->caller_func, s->caller_file,
			     s->caller_line, false);
		assert_int_equal(f[1].info.function_offset,
				 site_info->function_offset);
		return;
	}
	if (n != 1)
		print_frames(f, n);
	assert_int_equal(n, 1);
	assert_frame(&f[0], s->func, s->file, s->line, false);
	assert_int_equal(f[0].info.function_offset, site_info->function_offset);
}

static void check_site(struct symbolizer *sym, const struct child *c,
		       const struct site *s, enum debug_level exe_level,
		       struct symbol_info *out)
{
	struct symbol_info info;

	memset(&info, 0xa5, sizeof(info));
	assert_int_equal(symbolizer__callsite(sym, s->ret, &info), 0);
	assert_site_info(c, s, exe_level, &info);
	check_frames(sym, c, s, exe_level, &info);
	if (out)
		*out = info;
}

static void check_object(struct symbolizer *sym, const struct child *c,
			 const struct object *o, enum debug_level exe_level)
{
	const struct mapping *m = mapping_of(c, o->addr);
	const char *expected = strcmp(o->name, "-") ? o->name : NULL;
	const char *name = symbolizer__object(sym, o->addr);
	bool in_exe = m && !strcmp(m->path, c->exe);

	/* With DWARF (the library always has it), a member's path. */
	if (o->dwarf_name[0] && (!in_exe || exe_level == FULL))
		expected = o->dwarf_name;
	/* A stripped executable's .dynsym names none of its locks. */
	if (in_exe && exe_level == STRIPPED)
		expected = NULL;
	if (!expected) {
		if (name)
			print_error("object 0x%" PRIx64 ": expected no name, got %s\n",
				    o->addr, name);
		assert_null(name);
		return;
	}
	if (!name || strcmp(name, expected))
		print_error("object 0x%" PRIx64 ": expected %s, got %s\n",
			    o->addr, expected, str_or_null(name));
	assert_non_null(name);
	assert_string_equal(name, expected);
}

static void assert_same_info(const struct symbol_info *a,
			     const struct symbol_info *b)
{
	assert_string_equal(str_or_null(a->module), str_or_null(b->module));
	assert_int_equal(a->module_offset, b->module_offset);
	assert_string_equal(str_or_null(a->function), str_or_null(b->function));
	assert_int_equal(a->function_offset, b->function_offset);
	assert_string_equal(str_or_null(a->file), str_or_null(b->file));
	assert_int_equal(a->line, b->line);
}

/* The sites the C fixture prints: 5 of the executable, 2 of the library. */
static void assert_callsites_output(const struct child *c, const char *variant)
{
	size_t in_exe = 0, in_lib = 0;

	assert_string_equal(c->variant, variant);
	assert_int_equal(c->n_sites, 7);
	assert_int_equal(c->n_objects, 7);
	for (size_t i = 0; i < c->n_sites; i++) {
		const struct mapping *m = mapping_of(c, c->sites[i].ret - 1);

		assert_non_null(m);
		assert_true(m->exec);
		if (!strcmp(m->path, c->exe))
			in_exe++;
		else if (!strcmp(base_name(m->path), "libcallsites.so"))
			in_lib++;
	}
	assert_int_equal(in_exe, 5);
	assert_int_equal(in_lib, 2);
}

/* When the lookups happen, relative to the target's exit. */
enum schedule {
	LIVE,		/* all while it runs */
	HALF,		/* every other one while it runs, the rest after */
	DEAD,		/* none before it exited and was reaped */
};

static bool before_exit(size_t i, enum schedule when)
{
	return when == LIVE || (when == HALF && i % 2 == 0);
}

/*
 * Every site and object of the child, looked up on `when`'s schedule;
 * then all again after it exited: the same answers, and the strings of
 * the first answers still intact (they live until symbolizer__free).
 */
static void check_child(struct child *c, const char *debuginfo_path,
			enum debug_level exe_level, enum schedule when)
{
	struct symbol_info infos[MAX_SITES];
	struct symbolizer *sym;

	assert_int_equal(symbolizer__new(c->pid, debuginfo_path, &sym), 0);
	assert_non_null(sym);
	cur_sym = sym;

	for (size_t i = 0; i < c->n_sites; i++)
		if (before_exit(i, when))
			check_site(sym, c, &c->sites[i], exe_level, &infos[i]);
	for (size_t i = 0; i < c->n_objects; i++)
		if (before_exit(i, when))
			check_object(sym, c, &c->objects[i], exe_level);
	child_finish(c);
	for (size_t i = 0; i < c->n_sites; i++)
		if (!before_exit(i, when))
			check_site(sym, c, &c->sites[i], exe_level, &infos[i]);
	for (size_t i = 0; i < c->n_objects; i++)
		if (!before_exit(i, when))
			check_object(sym, c, &c->objects[i], exe_level);

	for (size_t i = 0; i < c->n_sites; i++) {
		struct symbol_info again;

		assert_site_info(c, &c->sites[i], exe_level, &infos[i]);
		memset(&again, 0x5a, sizeof(again));
		assert_int_equal(symbolizer__callsite(sym, c->sites[i].ret, &again), 0);
		assert_same_info(&again, &infos[i]);
	}
	for (size_t i = 0; i < c->n_objects; i++)
		check_object(sym, c, &c->objects[i], exe_level);

	symbolizer__free(sym);
	cur_sym = NULL;
}

/* callsites-VARIANT (tests/fixtures/callsites.c) */
static void run_fixture(const char *name, const char *variant,
			const char *debuginfo_path, enum debug_level exe_level,
			enum schedule when)
{
	struct child *c = child_start(name);

	assert_callsites_output(c, variant);
	check_child(c, debuginfo_path, exe_level, when);
}

/* ---- the builds ------------------------------------------------------- */

static void test_default_build(void **state UNUSED)
{
	run_fixture("callsites", "default", NULL, FULL, LIVE);
}

static void test_pie(void **state UNUSED)
{
	run_fixture("callsites-pie", "pie", NULL, FULL, LIVE);
}

static void test_nopie(void **state UNUSED)
{
	run_fixture("callsites-nopie", "nopie", NULL, FULL, LIVE);
}

static void test_symtab_without_dwarf(void **state UNUSED)
{
	run_fixture("callsites-nodebug", "default", NULL, SYMTAB, LIVE);
}

static void test_stripped(void **state UNUSED)
{
	run_fixture("callsites-stripped", "default", NULL, STRIPPED, LIVE);
}

static void test_debuglink(void **state UNUSED)
{
	/* callsites-debuglink.debug next to it, found by the default path. */
	run_fixture("callsites-debuglink", "default", NULL, FULL, LIVE);
}

static void build_id_dir(char *path, size_t len)
{
	struct stat st;
	int n = snprintf(path, len, "%s/symdebug", fixtures_dir);

	assert_true(n > 0 && (size_t)n < len);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		print_error("no %s: build it with 'make %s/callsites-buildid'\n",
			    path, fixtures_dir);
		fail();
	}
}

static void test_build_id_in_debuginfo_path(void **state UNUSED)
{
	char dir[PATH_MAX];

	build_id_dir(dir, sizeof(dir));
	run_fixture("callsites-buildid", "buildid", dir, FULL, LIVE);
}

static void test_build_id_not_in_default_path(void **state UNUSED)
{
	/* Not under the default path: .symtab names only, as -nodebug. */
	run_fixture("callsites-buildid", "buildid", NULL, SYMTAB, LIVE);
}

/* ---- after the target exits ------------------------------------------ */

/*
 * The symbolizer reads what it needs at creation: looked up after the
 * target exited (and /proc/PID with it), every address still resolves
 * the same, whether the DWARF is in the file, behind a debuglink, or
 * under a build-ID directory.
 */
static void test_lifetime(void **state UNUSED)
{
	run_fixture("callsites", "default", NULL, FULL, HALF);
}

static void test_lifetime_stripped(void **state UNUSED)
{
	run_fixture("callsites-stripped", "default", NULL, STRIPPED, HALF);
}

static void test_lifetime_debuglink(void **state UNUSED)
{
	run_fixture("callsites-debuglink", "default", NULL, FULL, HALF);
}

static void test_lifetime_build_id(void **state UNUSED)
{
	char dir[PATH_MAX];

	build_id_dir(dir, sizeof(dir));
	run_fixture("callsites-buildid", "buildid", dir, FULL, HALF);
}

/* Not one lookup before the exit: nothing can have been loaded lazily. */
static void test_first_lookup_after_exit(void **state UNUSED)
{
	run_fixture("callsites", "default", NULL, FULL, DEAD);
}

static void test_first_lookup_after_exit_debuglink(void **state UNUSED)
{
	run_fixture("callsites-debuglink", "default", NULL, FULL, DEAD);
}

static void test_first_lookup_after_exit_build_id(void **state UNUSED)
{
	char dir[PATH_MAX];

	build_id_dir(dir, sizeof(dir));
	run_fixture("callsites-buildid", "buildid", dir, FULL, DEAD);
}

/* ---- C++ --------------------------------------------------------------- */

static void assert_cxx_output(const struct child *c)
{
	bool lock_guard = false;

	assert_string_equal(c->variant, "cxx");
	/* add() twice (counter, app::backup), get, reset, bump<int>. */
	assert_int_equal(c->n_sites, 5);
	assert_int_equal(c->n_objects, 4);
	for (size_t i = 0; i < c->n_sites; i++) {
		const struct mapping *m = mapping_of(c, c->sites[i].ret - 1);

		assert_non_null(m);
		assert_string_equal(m->path, c->exe);
		if (!strcmp(c->sites[i].func, "app::Counter::add()"))
			lock_guard = true;
	}
	assert_true(lock_guard);
}

static void run_cxx(enum schedule when)
{
	struct child *c = child_start("cxxsites");

	assert_cxx_output(c);
	/* check_site() compares the whole file name and line, and the name. */
	check_child(c, NULL, FULL, when);
}

/*
 * std::lock_guard, std::scoped_lock, std::unique_lock and a plain
 * m_.lock(), all inlined down to the call of pthread_mutex_lock in
 * gthr-default.h: the file and line are the user's (cxxsites.cpp, the
 * line of the lock_guard), never std_mutex.h's or gthr-default.h's; the
 * function is the demangled method: app::Counter::add(),
 * app::Counter::get() const, void app::bump<int>(int&).  The objects:
 * "counter", "app::backup", "app::registry+0x8".
 */
static void test_cxx_inline_chain(void **state UNUSED)
{
	run_cxx(LIVE);
}

static void test_cxx_lifetime(void **state UNUSED)
{
	run_cxx(HALF);
}

static void test_cxx_first_lookup_after_exit(void **state UNUSED)
{
	run_cxx(DEAD);
}

/* ---- Rust ------------------------------------------------------------ */

/*
 * Rust's manglings, demangled: a function's first byte names it (legacy
 * from .symtab, v0 from DWARF's linkage name), without the legacy hash,
 * with v0's instance types.
 */
static void run_rust(const char *name, const char *variant, bool dwarf)
{
	struct child *c = child_start(name);
	struct symbolizer *sym;

	assert_string_equal(c->variant, variant);
	assert_int_equal(c->n_funcs, 2);
	assert_int_equal(symbolizer__new(c->pid, NULL, &sym), 0);
	cur_sym = sym;
	for (size_t i = 0; i < c->n_funcs; i++) {
		const struct func *fn = &c->funcs[i];
		const struct symbol_frame *f;
		struct symbol_info info;
		size_t n;

		/* A call returning to its second byte. */
		assert_int_equal(symbolizer__callsite(sym, fn->addr + 1, &info), 0);
		if (!info.function || strcmp(info.function, fn->name))
			print_info("func", fn->addr, &info);
		assert_string_equal(str_or_null(info.function), fn->name);
		assert_int_equal(info.function_offset, 1);
		/* The exact pc: frames name it the same. */
		assert_int_equal(symbolizer__frames(sym, fn->addr, false, &f, &n), 0);
		if (strcmp(str_or_null(f[n - 1].info.function), fn->name))
			print_frames(f, n);
		assert_string_equal(str_or_null(f[n - 1].info.function), fn->name);
		assert_int_equal(f[n - 1].info.function_offset, 0);
		if (dwarf) {
			assert_non_null(f[n - 1].info.file);
			assert_true(ends_with_path(f[n - 1].info.file,
						   "rustsites.rs"));
		}
	}
	child_finish(c);
	symbolizer__free(sym);
	cur_sym = NULL;
}

static void test_rust_legacy_mangling(void **state UNUSED)
{
	run_rust("rustsites-legacy", "rust-legacy", false);
}

static void test_rust_v0_mangling(void **state UNUSED)
{
	run_rust("rustsites-v0", "rust-v0", true);
}

/* ---- addresses nothing maps ------------------------------------------ */

static void test_unmapped_addresses(void **state UNUSED)
{
	struct child *c = child_start("callsites");
	const struct site *run_global = NULL;
	struct symbolizer *sym;
	size_t unnamed = 0;

	assert_int_equal(symbolizer__new(c->pid, NULL, &sym), 0);
	cur_sym = sym;
	/* The heap and stack locks: no file maps them. */
	for (size_t i = 0; i < c->n_objects; i++) {
		struct symbol_info info;

		if (strcmp(c->objects[i].name, "-"))
			continue;
		unnamed++;
		assert_null(mapping_of(c, c->objects[i].addr));
		memset(&info, 0xa5, sizeof(info));
		assert_int_equal(symbolizer__callsite(sym, c->objects[i].addr + 1, &info),
				 -ENOENT);
		assert_null(info.module);
		assert_null(symbolizer__object(sym, c->objects[i].addr));
	}
	assert_int_equal(unnamed, 2);
	/* A function's address is not a data object. */
	for (size_t i = 0; i < c->n_sites; i++)
		if (!strcmp(c->sites[i].symbol, "run_global"))
			run_global = &c->sites[i];
	assert_non_null(run_global);
	assert_null(symbolizer__object(sym, run_global->start));
	child_finish(c);
	symbolizer__free(sym);
	cur_sym = NULL;
}

/* ---- what the target maps later ---------------------------------------- */

static void test_refresh_after_dlopen(void **state UNUSED)
{
	struct child *c = child_start("callsites");
	char lib[PATH_MAX], cmd[PATH_MAX + 32], line[256];
	struct symbol_info info;
	struct symbolizer *sym;
	uint64_t addr, data;
	size_t n;

	fixture_path("libversioned.so", lib, sizeof(lib));
	assert_int_equal(symbolizer__new(c->pid, NULL, &sym), 0);
	cur_sym = sym;

	n = (size_t)snprintf(cmd, sizeof(cmd), "load %s sp_plain\n", lib);
	assert_int_equal(write(c->in_fd, cmd, n), (ssize_t)n);
	assert_true(child_read_line(c, line, sizeof(line)));
	assert_int_equal(sscanf(line, "loaded 0x%" SCNx64, &addr), 1);

	assert_int_equal(symbolizer__refresh(sym), 0);
	/* A call returning to the second byte of sp_plain. */
	memset(&info, 0xa5, sizeof(info));
	assert_int_equal(symbolizer__callsite(sym, addr + 1, &info), 0);
	assert_non_null(info.module);
	assert_true(ends_with_path(info.module, "libversioned.so"));
	assert_non_null(info.function);
	assert_string_equal(info.function, "sp_plain");
	assert_int_equal(info.function_offset, 1);
	assert_non_null(info.file);
	assert_true(ends_with_path(info.file, "versioned.c"));
	assert_true(info.line > 0);
	/* A function is no data object; the library's exported int is. */
	assert_null(symbolizer__object(sym, addr));
	n = (size_t)snprintf(cmd, sizeof(cmd), "load %s sp_data\n", lib);
	assert_int_equal(write(c->in_fd, cmd, n), (ssize_t)n);
	assert_true(child_read_line(c, line, sizeof(line)));
	assert_int_equal(sscanf(line, "loaded 0x%" SCNx64, &data), 1);
	assert_string_equal(str_or_null(symbolizer__object(sym, data)), "sp_data");
	/* A versioned symbol (sp_cond_wait@@VERS_2.0) without its version. */
	n = (size_t)snprintf(cmd, sizeof(cmd), "load %s sp_cond_wait\n", lib);
	assert_int_equal(write(c->in_fd, cmd, n), (ssize_t)n);
	assert_true(child_read_line(c, line, sizeof(line)));
	assert_int_equal(sscanf(line, "loaded 0x%" SCNx64, &data), 1);
	memset(&info, 0xa5, sizeof(info));
	assert_int_equal(symbolizer__callsite(sym, data + 1, &info), 0);
	assert_string_equal(str_or_null(info.function), "sp_cond_wait");

	child_finish(c);
	/* Still named after the target is gone. */
	memset(&info, 0xa5, sizeof(info));
	assert_int_equal(symbolizer__callsite(sym, addr + 1, &info), 0);
	assert_string_equal(str_or_null(info.function), "sp_plain");
	symbolizer__free(sym);
	cur_sym = NULL;
}

/* ---- many lookups -------------------------------------------------------- */

struct lookup {
	uint64_t ret;
	const struct mapping *m;
};

/*
 * [*lo, *hi): the bytes of m backed by the file's executable PT_LOAD
 * (its text, without the page's zero padding), from the program headers.
 */
static void text_range(const struct mapping *m, uint64_t *lo, uint64_t *hi)
{
	ElfW(Ehdr) ehdr;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);

	*lo = *hi = 0;
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &ehdr, sizeof(ehdr), 0), sizeof(ehdr));
	assert_int_equal(ehdr.e_phentsize, sizeof(ElfW(Phdr)));
	for (int i = 0; i < ehdr.e_phnum; i++) {
		ElfW(Phdr) phdr;
		uint64_t from, to;

		assert_int_equal(pread(fd, &phdr, sizeof(phdr),
				       (off_t)(ehdr.e_phoff + i * sizeof(phdr))),
				 sizeof(phdr));
		if (phdr.p_type != PT_LOAD || !(phdr.p_flags & PF_X))
			continue;
		from = phdr.p_offset > m->offset ? phdr.p_offset : m->offset;
		to = phdr.p_offset + phdr.p_filesz;
		if (to > m->offset + (m->end - m->start))
			to = m->offset + (m->end - m->start);
		if (from < to) {
			*lo = m->start + (from - m->offset);
			*hi = m->start + (to - m->offset);
		}
	}
	close(fd);
	assert_true(*lo < *hi);
}

static bool is_fixture_file(const struct child *c, const struct mapping *m)
{
	return !strcmp(m->path, c->exe) ||
	       !strcmp(base_name(m->path), "libcallsites.so");
}

/*
 * MANY_LOOKUPS distinct return addresses in text: every byte of the
 * fixture's and of libcallsites.so's (a page or less each), the rest
 * spread evenly over the other libraries' (libc, ld.so).
 */
/* *n_fixture: how many of them, first, lie in the fixture's own files. */
static struct lookup *many_addresses(const struct child *c, size_t *n_fixture)
{
	struct lookup *out = calloc(MANY_LOOKUPS, sizeof(*out));
	size_t n = 0, other_bytes = 0;
	uint64_t lo, hi, stride;

	assert_non_null(out);
	for (size_t i = 0; i < c->n_maps; i++) {
		const struct mapping *m = &c->maps[i];

		if (!m->exec)
			continue;
		text_range(m, &lo, &hi);
		if (!is_fixture_file(c, m)) {
			other_bytes += hi - lo - 1;
			continue;
		}
		/* ret - 1 in the text. */
		for (uint64_t a = lo + 1; a <= hi && n < MANY_LOOKUPS; a++)
			out[n++] = (struct lookup){ a, m };
	}
	assert_true(n > 1000 && n < MANY_LOOKUPS / 2);
	*n_fixture = n;
	stride = other_bytes / (MANY_LOOKUPS - n);
	assert_true(stride >= 1);
	for (size_t i = 0; i < c->n_maps && n < MANY_LOOKUPS; i++) {
		const struct mapping *m = &c->maps[i];

		if (!m->exec || is_fixture_file(c, m))
			continue;
		text_range(m, &lo, &hi);
		for (uint64_t a = lo + 1; a < hi && n < MANY_LOOKUPS; a += stride)
			out[n++] = (struct lookup){ a, m };
	}
	assert_int_equal(n, MANY_LOOKUPS);
	return out;
}

static size_t named_lookups(struct symbolizer *sym, const struct lookup *l,
			    size_t n)
{
	size_t named = 0;

	for (size_t i = 0; i < n; i++) {
		struct symbol_info info;
		int err;

		memset(&info, 0xa5, sizeof(info));
		err = symbolizer__callsite(sym, l[i].ret, &info);
		if (err || !info.module || strcmp(info.module, l[i].m->path) ||
		    info.module_offset != l[i].ret - l[i].m->start + l[i].m->offset) {
			print_info("lookup", l[i].ret, &info);
			print_error("lookup %zu of %zu: err %d, expected %s+0x%" PRIx64 "\n",
				    i, n, err, l[i].m->path,
				    l[i].ret - l[i].m->start + l[i].m->offset);
			fail();
		}
		if (info.function)
			named++;
	}
	return named;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Creates a symbolizer, looks every address up twice, frees it. */
static size_t lookup_round(const struct child *c, const struct lookup *l)
{
	struct symbolizer *sym;
	size_t named;

	assert_int_equal(symbolizer__new(c->pid, NULL, &sym), 0);
	cur_sym = sym;
	named = named_lookups(sym, l, MANY_LOOKUPS);
	/* Asked again (cached or not): the same answers. */
	assert_int_equal(named_lookups(sym, l, MANY_LOOKUPS), named);
	symbolizer__free(sym);
	cur_sym = NULL;
	return named;
}

/*
 * Not a benchmark: 10,000 distinct addresses all resolve (return 0, the
 * right module and offset), and a symbolizer that did so gives all its
 * memory back when freed.  The first rounds warm what elfutils and libc
 * keep for the process (less each round); the third must end about where
 * it began.
 */
static void test_many_distinct_lookups(void **state UNUSED)
{
	struct child *c = child_start("callsites");
	size_t n_fixture, named_fixture, before, after, named;
	struct lookup *l = many_addresses(c, &n_fixture);
	struct symbolizer *sym;

	named = lookup_round(c, l);
	assert_int_equal(lookup_round(c, l), named);
	before = heap_in_use();
	assert_int_equal(lookup_round(c, l), named);
	after = heap_in_use();
	print_message("%d lookups, %zu named; heap in use before %zu, after %zu\n",
		      MANY_LOOKUPS, named, before, after);
	/*
	 * A broken symbol index names next to nothing.  The fixture's own
	 * symbols are always there (libc's are not without libc6-dbg); its
	 * text is ~57% functions, the rest PLT, init code and padding.
	 */
	assert_int_equal(symbolizer__new(c->pid, NULL, &sym), 0);
	cur_sym = sym;
	named_fixture = named_lookups(sym, l, n_fixture);
	symbolizer__free(sym);
	cur_sym = NULL;
	print_message("fixture: %zu of %zu addresses named\n", named_fixture, n_fixture);
	assert_true(named_fixture * 3 > n_fixture);
	/* A leak of even a few bytes per lookup would show here. */
	assert_true(after < before + 64 * 1024);
	child_finish(c);
	free(l);
}

/* ---- a file without its process --------------------------------------- */

/* A file that is no ELF (a mapped data file, a script): no module, named
   by its path alone, and nothing freed that was never made. */
static void test_file_that_is_not_elf(void **state UNUSED)
{
	const uint64_t base = 0x7f1300000000ull;
	char path[] = "/tmp/syncprof-notelf-XXXXXX";
	struct symbol_info info;
	struct symbolizer *sym;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 18), 18);
	close(fd);
	assert_int_equal(symbolizer__new_file(path, base, NULL, &sym), 0);
	assert_int_equal(symbolizer__callsite(sym, base + 8, &info), 0);
	assert_string_equal(info.module, path);
	assert_null(info.function);
	symbolizer__free(sym);
	unlink(path);
}

static void test_file_without_process(void **state UNUSED)
{
	const uint64_t base = 0x7f1200000000ull;
	struct elfimage_func run;
	struct elfimage *image;
	struct symbol_info info;
	struct symbolizer *sym;
	char path[PATH_MAX];

	fixture_path("libcallsites.so", path, sizeof(path));
	assert_int_equal(elfimage__open(path, &image), 0);
	assert_int_equal(elfimage__find_func(image, "lib_run", &run), 0);
	elfimage__close(image);

	assert_int_equal(symbolizer__new_file(path, base, NULL, &sym), 0);
	cur_sym = sym;
	/* A return address just past lib_run's first byte. */
	assert_int_equal(symbolizer__callsite(sym, base + run.vaddr + 1, &info), 0);
	assert_string_equal(info.module, path);
	assert_int_equal(info.module_offset, run.file_offset + 1);
	assert_string_equal(info.function, "lib_run");
	assert_int_equal(info.function_offset, 1);
	assert_non_null(info.file);
	assert_string_equal(base_name(info.file), "callsites_lib.c");
	assert_true(info.line > 0);
	/* Below the file: nothing maps it, and no process to ask. */
	assert_int_equal(symbolizer__callsite(sym, base, &info), -ENOENT);
	assert_null(symbolizer__object(sym, base + run.vaddr));
	symbolizer__free(sym);
	cur_sym = NULL;

	assert_int_equal(symbolizer__new_file("libcallsites.so", base, NULL, &sym),
			 -EINVAL);
	assert_int_equal(symbolizer__new_file("/nonexistent/lib.so", base, NULL, &sym),
			 -ENOENT);
}

/*
 * The debug file a target's binary names by its .gnu_debuglink, planted
 * next to it as a FIFO: not opened (libdwfl's own search blocked in
 * open() for good); the binary's own symbols still name its functions.
 */
static void test_fifo_as_debug_file(void **state UNUSED)
{
	const uint64_t base = 0x7f1200000000ull;
	char dir[] = "/tmp/syncprof-debugfifo-XXXXXX";
	char src[PATH_MAX], bin[PATH_MAX], fifo[PATH_MAX], buf[65536];
	struct symbolizer *sym;
	ssize_t n;
	int in, out;

	assert_non_null(mkdtemp(dir));
	fixture_path("callsites-debuglink", src, sizeof(src));
	snprintf(bin, sizeof(bin), "%s/callsites-debuglink", dir);
	snprintf(fifo, sizeof(fifo), "%s/callsites-debuglink.debug", dir);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(bin, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	assert_int_equal(close(out), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	assert_int_equal(symbolizer__new_file(bin, base, NULL, &sym), 0);
	symbolizer__free(sym);
	unlink(fifo);
	unlink(bin);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_default_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nopie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab_without_dwarf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_debuglink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_id_in_debuginfo_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_id_not_in_default_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifetime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifetime_debuglink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifetime_build_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifetime_stripped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_lookup_after_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_lookup_after_exit_debuglink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_lookup_after_exit_build_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_inline_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_lifetime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_first_lookup_after_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rust_legacy_mangling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rust_v0_mangling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmapped_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refresh_after_dlopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_distinct_lookups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_without_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_that_is_not_elf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_as_debug_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
