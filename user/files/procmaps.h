/* SPDX-License-Identifier: GPL-2.0 */
/* A parsed /proc/PID/maps: which file backs which address. */
#ifndef SYNCPROF_PROCMAPS_H
#define SYNCPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct procmaps_entry {
	uint64_t start;
	uint64_t end;
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint64_t dev;		/* as st_dev: makedev(major, minor) */
	bool exec;
	bool deleted;		/* the file was unlinked or replaced */
	const char *path;	/* "" for anonymous memory */
};

struct procmaps;

/* Parses one maps line; path points into line_copy (caller's buffer). */
int procmaps__parse_line(char *line, struct procmaps_entry *entry);
int procmaps__parse(FILE *file, struct procmaps **out);
/* An empty list, for mappings that do not come from /proc (NULL: ENOMEM). */
struct procmaps *procmaps__new(void);
/* Appends a copy of entry, path included; keep the list sorted by start. */
int procmaps__add(struct procmaps *maps, const struct procmaps_entry *entry);
/* The maps of pid, with code mappings named by their files' own paths. */
int procmaps__read(pid_t pid, struct procmaps **out);
/*
 * The same, after prev (an earlier read of pid, or NULL): a code mapping
 * prev holds with the same file, range and text keeps that name without
 * asking its link again.
 */
int procmaps__read_since(pid_t pid, const struct procmaps *prev,
			 struct procmaps **out);
void procmaps__free(struct procmaps *maps);

/* Drops every entry but executable, file-backed ones. */
void procmaps__keep_exec_files(struct procmaps *maps);
/* A copy of the executable, file-backed entries only. */
int procmaps__exec_files(const struct procmaps *maps, struct procmaps **out);
size_t procmaps__count(const struct procmaps *maps);
const struct procmaps_entry *procmaps__entry(const struct procmaps *maps,
					     size_t index);
/* Whether a mapping (an executable one, with exec) is of the file dev:inode. */
bool procmaps__maps_file(const struct procmaps *maps, uint64_t dev,
			 uint64_t inode, bool exec);
/* The file-backed entry that holds addr, or NULL. */
const struct procmaps_entry *procmaps__find(const struct procmaps *maps,
					    uint64_t addr);
/*
 * The first mapped file whose name is STEM.so[.N] or STEM-X.Y.so (libc,
 * libpthread, ...), or NULL.
 */
const struct procmaps_entry *procmaps__find_library(const struct procmaps *maps,
						    const char *stem);
bool procmaps__is_library(const char *path, const char *stem);
/*
 * A path syncprof can open that names the very file behind entry (same
 * device and inode): /proc/PID/root + its path, else /proc/PID/map_files.
 * -ENOENT when neither does (the file was replaced, or no permission).
 */
int procmaps__file_path(pid_t pid, const struct procmaps_entry *entry,
			char *path, size_t len);

#endif
