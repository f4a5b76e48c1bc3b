/* SPDX-License-Identifier: GPL-2.0 */
/* Source paths from debug info: whose code a file is, and short names. */
#ifndef SYNCPROF_SRCPATH_H
#define SYNCPROF_SRCPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A header of the system or the toolchain (/usr/include, libstdc++'s
 * include/c++, gcc's own headers, glibc's sources), not the user's code.
 */
bool srcpath__is_system(const char *path);
/*
 * Length of the longest directory prefix ("/a/b/") shared by all paths,
 * so that paths + prefix_len are the shortened names.  0 when they share
 * nothing but "/" or when a path is relative.
 */
size_t srcpath__common_dir(const char *const *paths, size_t n);

/*
 * file made absolute against dir (a CU's comp_dir) when it is relative,
 * with "." and ".." segments folded; malloc'ed, NULL without memory.
 */
char *srcpath__join(const char *dir, const char *file);

#endif
