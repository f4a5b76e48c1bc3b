/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One libdwfl session: the ELF files a process maps, reported by
 * syncprof (not by dwfl_linux_proc_report), their separate debug files
 * found here or by debuginfod, and each module's address index.
 */
#ifndef SYNCPROF_DWFLSESSION_H
#define SYNCPROF_DWFLSESSION_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/types.h>

struct debugfetch;
struct dwflsession;
struct modindex;
struct procmaps;

/*
 * Stripped modules' debug files from debuginfod (NULL: off), for every
 * session from now on.  Not owned.
 */
void dwflsession__use_debuginfod(struct debugfetch *fetch);
/*
 * An empty session for process pid (<= 0: files with no process).
 * debuginfo_path: where separate debug files are looked for, in
 * libdwfl's syntax (NULL: ":.debug:/usr/lib/debug" and the process's
 * own root).
 */
int dwflsession__new(pid_t pid, const char *debuginfo_path,
		     struct dwflsession **out);
void dwflsession__free(struct dwflsession *s);
/*
 * Reports the files of the executable mappings in maps not reported yet
 * (a file at the same load base is reported once), and opens them now.
 */
void dwflsession__report(struct dwflsession *s, const struct procmaps *maps);
/* Whether a module the session holds as mapped is not in maps. */
bool dwflsession__outdated(const struct dwflsession *s,
			   const struct procmaps *maps);
/*
 * The session's process is gone (exited, or exec'ed another image): no
 * module of it is mapped any more (see dwflsession.c on what is kept).
 */
void dwflsession__gone(struct dwflsession *s);

/* What every session holds now, and what they released (for /metrics). */
struct dwflsession_stats {
	uint64_t modules;	/* modules in all sessions */
	uint64_t gone;		/* of which no process maps: kept, bounded */
	uint64_t evictions;	/* modules released so far */
	uint64_t files;		/* distinct files behind them (elfshare.h) */
	uint64_t open_files;	/* of which open */
	uint64_t memory_bytes;	/* deleted files read into memory */
	uint64_t shared;	/* file opens answered by a file known already */
};
void dwflsession__stats(struct dwflsession_stats *out);
/* Each housekeeping tick: the unmapped modules' files deleted since go. */
void dwflsession__housekeep(void);

/* The session's libdwfl handle, for walks over its modules. */
Dwfl *dwflsession__dwfl(const struct dwflsession *s);
/* The module holding addr, or NULL. */
Dwfl_Module *dwflsession__module(const struct dwflsession *s, uint64_t addr);
/*
 * The index of a module of a session (modindex.h), built on first use;
 * NULL if it cannot be.
 */
struct modindex *dwflsession__index(Dwfl_Module *mod);

#endif
