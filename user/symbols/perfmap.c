// SPDX-License-Identifier: GPL-2.0
/*
 * Read whole and sorted, again only when the file's identity, size or
 * mtime changed (a JIT appends as it compiles); entries may overlap when
 * code was recompiled at the same address, and the last line wins, as
 * perf does.  The file is looked up in the target's own /tmp through
 * /proc/PID/root, so a containerized JVM's map is found; once the target
 * is gone (its PID may be reused), in this machine's /tmp, where a JIT
 * leaves it.
 *
 * The target writes this file, and anyone can create it in /tmp before
 * the target does: it is read through targetfile.h (a regular file, no
 * link, bounded in time), only when the target's user or root owns it,
 * and at most PERFMAP_MAX_BYTES of it, kept as read: names point into
 * the text, so the table costs the file plus 24 bytes a line.  A JVM's
 * map of 200,000 methods is about 20 MB.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "log.h"
#include "perfmap.h"
#include "targetfile.h"

#define PERFMAP_MAX_BYTES   (64u << 20)
#define PERFMAP_MAX_ENTRIES (1u << 21)

struct perfmap_entry {
	uint64_t start;
	uint64_t end;
	uint32_t line;		/* order in the file: the last one wins */
	uint32_t name;		/* offset in text */
};

struct perfmap {
	char path[96];		/* through the target's root */
	char host_path[64];	/* the same file once the target is gone */
	uid_t uid;		/* the target's; (uid_t)-1 if unknown */
	char *text;
	struct perfmap_entry *v;
	size_t n, cap;
	struct targetfile_stamp stamp;
	bool have_stamp, said_owner, said_size;
};

int perfmap__new(pid_t pid, struct perfmap **out)
{
	struct perfmap *m = calloc(1, sizeof(*m));
	char proc[32];
	struct stat st;

	if (!m)
		return -ENOMEM;
	snprintf(m->path, sizeof(m->path), "/proc/%d/root/tmp/perf-%d.map",
		 (int)pid, (int)pid);
	snprintf(m->host_path, sizeof(m->host_path), "/tmp/perf-%d.map",
		 (int)pid);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	m->uid = stat(proc, &st) ? (uid_t)-1 : st.st_uid;
	*out = m;
	return 0;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->text);
	free(m->v);
	free(m);
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct perfmap_entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

int perfmap__parse(struct perfmap *m, char *text, size_t len)
{
	uint32_t number = 0;
	int err = 0;

	free(m->text);
	m->text = text;
	m->n = 0;
	for (size_t at = 0; at < len;) {
		char *line = text + at, *nl = memchr(line, '\n', len - at);
		uint64_t start, size;
		int used = 0;

		at = nl ? (size_t)(nl - text) + 1 : len;
		if (nl)
			*nl = '\0';
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size,
			   &used) != 2 || !used || !size || start + size < start)
			continue;
		if (m->n == PERFMAP_MAX_ENTRIES) {
			err = -EFBIG;
			break;
		}
		if (array__grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v))) {
			err = -ENOMEM;
			break;
		}
		m->v[m->n++] = (struct perfmap_entry){
			start, start + size, number++, (uint32_t)(line + used - text) };
	}
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	return err;
}

int perfmap__refresh(struct perfmap *m, bool live)
{
	const char *path = live ? m->path : m->host_path;
	struct targetfile_content got;
	int err = targetfile__read(path, 0, PERFMAP_MAX_BYTES,
				   m->have_stamp ? &m->stamp : NULL, &got);

	if (err || !got.data)
		return err;
	m->stamp = got.stamp;
	m->have_stamp = true;
	if (got.stamp.uid && got.stamp.uid != m->uid) {
		if (!m->said_owner)
			pr_warn("skipped %s: owned by uid %u, not by the "
				"target's user", path, (unsigned int)got.stamp.uid);
		m->said_owner = true;
		free(got.data);
		return -EPERM;
	}
	err = perfmap__parse(m, got.data, got.len);
	if ((got.truncated || err == -EFBIG) && !m->said_size)
		pr_warn("%s: larger than %u MiB or %u lines; only the first "
			"were read", path, PERFMAP_MAX_BYTES >> 20,
			PERFMAP_MAX_ENTRIES);
	m->said_size |= got.truncated || err == -EFBIG;
	return err == -EFBIG ? 0 : err;
}

const char *perfmap__lookup(const struct perfmap *m, uint64_t addr,
			    uint64_t *offset)
{
	const struct perfmap_entry *best = NULL;
	size_t lo = 0, hi = m ? m->n : 0;

	if (!m)
		return NULL;
	/* The entries starting at or before addr; a few back for overlaps. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 8;) {
		if (addr < m->v[i].end && (!best || m->v[i].line > best->line))
			best = &m->v[i];
	}
	if (!best)
		return NULL;
	*offset = addr - best->start;
	return m->text + best->name;
}
