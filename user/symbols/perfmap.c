// SPDX-License-Identifier: GPL-2.0
/*
 * Read whole and sorted, again only when the file's size or mtime
 * changed (a JIT appends as it compiles); entries may overlap when code
 * was recompiled at the same address, and the last line wins, as perf
 * does.  The file is looked up in the target's own /tmp through
 * /proc/PID/root, so a containerized JVM's map is found; once the target
 * is gone (its PID may be reused), in this machine's /tmp, where a JIT
 * leaves it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "perfmap.h"

struct perfmap_entry {
	uint64_t start;
	uint64_t end;
	size_t line;		/* order in the file: the last one wins */
	char *name;
};

struct perfmap {
	char path[96];		/* through the target's root */
	char host_path[64];	/* the same file once the target is gone */
	struct perfmap_entry *v;
	size_t n, cap;
	off_t size;
	struct timespec mtime;
};

int perfmap__new(pid_t pid, struct perfmap **out)
{
	struct perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	snprintf(m->path, sizeof(m->path), "/proc/%d/root/tmp/perf-%d.map",
		 (int)pid, (int)pid);
	snprintf(m->host_path, sizeof(m->host_path), "/tmp/perf-%d.map",
		 (int)pid);
	*out = m;
	return 0;
}

static void perfmap__clear(struct perfmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	m->n = 0;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	perfmap__clear(m);
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

int perfmap__refresh(struct perfmap *m, bool live)
{
	const char *path = live ? m->path : m->host_path;
	char *line = NULL;
	size_t cap = 0, number = 0;
	struct stat st;
	int err = 0;
	FILE *f;

	if (stat(path, &st))
		return -errno;
	if (st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec)
		return 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	perfmap__clear(m);
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, size;
		int used = 0;
		char *name;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size,
			   &used) != 2 || !used || !size)
			continue;
		name = strdup(line + used);
		if (!name || array__grow(&m->v, &m->cap, m->n + 1,
					 sizeof(*m->v))) {
			free(name);
			err = -ENOMEM;
			break;
		}
		name[strcspn(name, "\n")] = '\0';
		m->v[m->n++] = (struct perfmap_entry){
			start, start + size, number++, name };
	}
	free(line);
	fclose(f);
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	return err;
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
	return best->name;
}
