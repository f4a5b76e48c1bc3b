// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srcpath.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool srcpath__is_system(const char *path)
{
	static const char *const prefixes[] = {
		"/usr/include/",
		"/usr/local/include/",
		"/usr/lib/gcc/",	/* gcc's own headers */
		"/usr/lib/llvm",	/* clang's */
	};
	/* Wherever a toolchain lives: libstdc++'s and glibc's trees. */
	static const char *const parts[] = {
		"/include/c++/",
		"/libstdc++-v3/",
		"/nptl/",
		"/sysdeps/",
		/* Rust's standard library: /rustc/<hash>/library/std/src/
		   (rustup), /usr/src/rustc-<version>/library/ (Debian). */
		"/library/std/src/",
		"/library/core/src/",
		"/library/alloc/src/",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (has_prefix(path, prefixes[i]))
			return true;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (strstr(path, parts[i]))
			return true;
	/* glibc's build prints its sources relative: ./nptl/..., ../sysdeps/... */
	return has_prefix(path, "./nptl/") || has_prefix(path, "../sysdeps/");
}

size_t srcpath__common_dir(const char *const *paths, size_t n)
{
	size_t len;

	if (!n || paths[0][0] != '/')
		return 0;
	/* Start from the first path's directory, then shrink. */
	len = (size_t)(strrchr(paths[0], '/') - paths[0]) + 1;
	for (size_t i = 1; i < n; i++) {
		size_t same = 0;

		if (paths[i][0] != '/')
			return 0;
		while (same < len && paths[i][same] == paths[0][same])
			same++;
		/* Back to the last '/' both share. */
		while (same > 0 && paths[0][same - 1] != '/')
			same--;
		len = same;
	}
	return len > 1 ? len : 0;
}

char *srcpath__join(const char *dir, const char *file)
{
	char *joined, *out, *seg, *save = NULL;
	size_t len;

	if (file[0] == '/' || !dir || dir[0] != '/')
		return strdup(file);
	if (asprintf(&joined, "%s/%s", dir, file) < 0)
		return NULL;
	len = strlen(joined);
	out = malloc(len + 2);
	if (!out) {
		free(joined);
		return NULL;
	}
	/* Fold segments into out, which always starts with '/'. */
	size_t used = 0;

	out[0] = '\0';
	for (seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			while (used > 0 && out[used - 1] != '/')
				used--;
			if (used > 0)
				used--;	/* the '/' before it */
			out[used] = '\0';
			continue;
		}
		used += (size_t)sprintf(out + used, "/%s", seg);
	}
	if (!used) {
		out[0] = '/';
		out[1] = '\0';
	}
	free(joined);
	return out;
}
