/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A module's separate debug file, found as libdwfl's standard callback
 * finds it, opened as a file the target controls (targetfile.h).
 */
#ifndef SYNCPROF_DEBUGFIND_H
#define SYNCPROF_DEBUGFIND_H

#include <elfutils/libdwfl.h>

/*
 * For Dwfl_Callbacks.find_debuginfo: dirs is the debuginfo path (':'
 * separated: "" the file's directory, relative ones under it, absolute
 * ones as roots), modname the file's path as the target names it,
 * file_name the path it was opened by.  A descriptor and *found (to
 * free), or -1.
 */
int debugfind__open(Dwfl_Module *mod, const char *dirs, const char *modname,
		    const char *file_name, const char *debuglink, char **found);

#endif
