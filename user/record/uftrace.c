// SPDX-License-Identifier: GPL-2.0
/*
 * uftrace's format, learnt from its sources (utils/data-file.c,
 * utils/session.c, utils/symbol.c, cmds/info.c, utils/fstack.c) and from
 * its own recordings read back with `uftrace dump`:
 *   info         a 40-byte header ("Ftrace!", version 4, features), then
 *                text lines for each info bit set, in bit order; nr_tid
 *                and the tid list say which TID.dat files to read;
 *   task.txt     SESS (pid, session id, executable) and TASK lines;
 *   sid-ID.map   /proc/PID/maps lines: which module an address is in;
 *                a [stack] line tells uftrace where the kernel starts;
 *   NAME.sym     "# path name:" and "offset type name" lines, offsets
 *                relative to the module's start (SYM_REL_ADDR);
 *   TID.dat      16-byte records: time, then type/magic/depth/address.
 * Waits have no code address, so they get a module of their own: one
 * symbol per distinct span, named with its label.
 *
 * A LOST record at depth 0 is hidden by `uftrace replay` unless
 * --kernel-full (it skips losses outside any function), so each loss is
 * wrapped in a "(waits lost)" span: replay shows "LOST N records" inside
 * it, report and tui count it.  Rejected: a LOST record alone (invisible
 * by default); one root span per thread (its time is meaningless).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "linereader.h"
#include "outfile.h"
#include "text.h"
#include "uftrace.h"

#define UFTRACE_MAGIC		"Ftrace!"
#define UFTRACE_FILE_VERSION	4
#define UFTRACE_RECORD_MAGIC	5
#define UFTRACE_MAX_STACK	1024
/* Feature bits: TASK_SESSION, SYM_REL_ADDR, MAX_STACK. */
#define UFTRACE_FEATURES	((1u << 1) | (1u << 5) | (1u << 6))
/* Info bits, in the order their lines are written. */
enum {
	INFO_EXE_NAME = 0,
	INFO_CMDLINE = 3,
	INFO_OSINFO = 6,
	INFO_TASKINFO = 7,
	INFO_RECORD_DATE = 11,
	INFO_VERSION = 13,
};
/* Streams open at once; more threads than this reopen in append mode. */
#define UFTRACE_OPEN_MAX	256
#define NS_PER_S		UINT64_C(1000000000)

struct uftrace_file_header {
	char magic[8];
	uint32_t version;
	uint16_t header_size;
	uint8_t endian;
	uint8_t elf_class;
	uint64_t feat_mask;
	uint64_t info_mask;
	uint16_t max_stack;
	uint16_t unused1;
	uint32_t unused2;
};

struct uftrace_record {
	uint64_t time;
	uint64_t word;
};

/* One thread's .dat file. */
struct uftrace_stream {
	uint32_t tid;
	struct outfile *f;	/* NULL while closed */
	bool created;
	uint64_t first_ns;
	uint64_t last_ns;	/* records never go back in time */
};

/* A span's key, and the place its symbol has for good. */
struct uftrace_span {
	struct recnames_span key;
	long id;		/* order of first appearance */
};

struct uftrace_writer {
	struct outdir *dir;
	char sid[17];
	struct uftrace_stream *streams;	/* sorted by tid */
	size_t n, cap, n_open;
	struct uftrace_span *spans;	/* sorted by key */
	size_t n_spans, cap_spans;
	uint64_t first_ns;
	int err;
};

uint64_t uftrace__record_word(enum uftrace_rec_type type, unsigned int depth,
			      uint64_t addr)
{
	return (uint64_t)(type & 3) | (uint64_t)UFTRACE_RECORD_MAGIC << 3 |
	       (uint64_t)(depth & 0x3ff) << 6 |
	       (addr & 0xffffffffffffull) << 16;
}

uint64_t uftrace__span_addr(long span)
{
	return UFTRACE_SPAN_BASE + (uint64_t)(span + 2) * 16;
}

/*
 * The symbol of a wait's span: numbered as spans first appear, so that a
 * record written at one checkpoint still names its span at the next.
 */
static long uftrace__span_id(struct uftrace_writer *o, const struct sp_key *k)
{
	const struct recnames_span key = {
		.object = k->object, .callsite = k->callsite,
		.stack_id = k->stack_id, .type = k->type,
	};
	size_t lo = 0, hi = o->n_spans;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = recnames__span_cmp(&key, &o->spans[mid].key);

		if (!c)
			return o->spans[mid].id;
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (array__grow(&o->spans, &o->cap_spans, o->n_spans + 1,
			sizeof(*o->spans)))
		return -2;
	memmove(&o->spans[lo + 1], &o->spans[lo],
		(o->n_spans - lo) * sizeof(*o->spans));
	o->spans[lo] = (struct uftrace_span){ key, (long)o->n_spans };
	o->n_spans++;
	return (long)o->n_spans - 1;
}

static struct uftrace_stream *uftrace__stream(struct uftrace_writer *o,
					      uint32_t tid)
{
	size_t lo = 0, hi = o->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->streams[mid].tid == tid)
			return &o->streams[mid];
		if (o->streams[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (array__grow(&o->streams, &o->cap, o->n + 1, sizeof(*o->streams)))
		return NULL;
	memmove(&o->streams[lo + 1], &o->streams[lo],
		(o->n - lo) * sizeof(*o->streams));
	o->n++;
	o->streams[lo] = (struct uftrace_stream){ .tid = tid };
	return &o->streams[lo];
}

static int uftrace__close_all(struct uftrace_writer *o)
{
	int err = 0;

	for (size_t i = 0; i < o->n; i++) {
		int e = outfile__close(o->streams[i].f);

		if (e && !err)
			err = e;
		o->streams[i].f = NULL;
	}
	o->n_open = 0;
	return err;
}

static FILE *uftrace__file(struct uftrace_writer *o, struct uftrace_stream *s)
{
	char name[32];
	int err;

	if (s->f)
		return outfile__stream(s->f);
	if (o->n_open >= UFTRACE_OPEN_MAX) {
		err = uftrace__close_all(o);
		if (err) {
			o->err = err;
			return NULL;
		}
	}
	snprintf(name, sizeof(name), "%u.dat", s->tid);
	err = outfile__open(o->dir, name, s->created ? OUTFILE_APPEND
						     : OUTFILE_NEW, &s->f);
	if (err) {
		o->err = err;
		return NULL;
	}
	s->created = true;
	o->n_open++;
	return outfile__stream(s->f);
}

static void uftrace__put(struct uftrace_writer *o, struct uftrace_stream *s,
			 uint64_t time, enum uftrace_rec_type type,
			 uint64_t addr)
{
	struct uftrace_record rec;
	FILE *f = uftrace__file(o, s);

	if (!f)
		return;
	if (time < s->last_ns)
		time = s->last_ns;
	if (!s->first_ns)
		s->first_ns = time;
	s->last_ns = time;
	rec.time = time;
	rec.word = uftrace__record_word(type, 0, addr);
	if (fwrite(&rec, sizeof(rec), 1, f) != 1 && !o->err)
		o->err = outfile__flush(s->f) ?: -EIO;
}

static void uftrace__event(struct uftrace_writer *o,
			   const struct sp_wait_event *e)
{
	struct uftrace_stream *s = uftrace__stream(o, e->key.tid);
	bool only_lost = e->flags & SP_EVENT_LOST_ONLY;

	if (!s) {
		o->err = -ENOMEM;
		return;
	}
	if (e->lost) {
		uint64_t from = e->lost_ns;
		uint64_t to = only_lost ? e->end_ns : e->start_ns;

		if (to < from)
			to = from;
		uftrace__put(o, s, from, UFTRACE_REC_ENTRY, uftrace__span_addr(-1));
		uftrace__put(o, s, from, UFTRACE_REC_LOST, e->lost);
		uftrace__put(o, s, to, UFTRACE_REC_EXIT, uftrace__span_addr(-1));
	}
	if (!only_lost) {
		long id = uftrace__span_id(o, &e->key);
		uint64_t addr = uftrace__span_addr(id);

		if (id < -1) {
			o->err = -ENOMEM;
			return;
		}
		uftrace__put(o, s, e->start_ns, UFTRACE_REC_ENTRY, addr);
		uftrace__put(o, s, e->end_ns, UFTRACE_REC_EXIT, addr);
	}
}

static void ts_text(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / NS_PER_S,
		 ns % NS_PER_S);
}

/* One of the small files, put in place whole when closed. */
static FILE *uftrace__create(struct uftrace_writer *o, const char *name,
			     struct outfile **file)
{
	int err = outfile__open(o->dir, name, OUTFILE_WHOLE, file);

	if (err) {
		errno = -err;
		return NULL;
	}
	return outfile__stream(*file);
}

/* A string as one line of text: no newline, no quote. */
static void line_text(const char *in, char *buf, size_t len)
{
	text__sanitize(in ? in : "?", buf, len);
	for (char *p = buf; *p; p++)
		if (*p == '"')
			*p = '\'';
}

static int uftrace__tasks(struct uftrace_writer *o, const struct recmeta *meta,
			  const char *sid)
{
	struct outfile *file;
	FILE *f = uftrace__create(o, "task.txt", &file);
	char ts[32], exe[1024];

	if (!f)
		return -errno;
	line_text(meta->exe ? meta->exe : meta->comm, exe, sizeof(exe));
	ts_text(ts, sizeof(ts), o->first_ns);
	fprintf(f, "SESS timestamp=%s pid=%d sid=%s exename=\"%s\"\n", ts,
		(int)meta->pid, sid, exe);
	for (size_t i = 0; i < o->n; i++) {
		ts_text(ts, sizeof(ts), o->streams[i].first_ns);
		fprintf(f, "TASK timestamp=%s tid=%u pid=%d\n", ts,
			o->streams[i].tid, (int)meta->pid);
	}
	return outfile__close(file);
}

static int uftrace__map(struct uftrace_writer *o, const char *sid, size_t spans)
{
	struct outfile *file;
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "sid-%s.map", sid);
	f = uftrace__create(o, name, &file);
	if (!f)
		return -errno;
	fprintf(f, "%012" PRIx64 "-%012" PRIx64 " r-xp 00000000 00:00 0 %s\n",
		UFTRACE_SPAN_BASE, uftrace__span_addr((long)spans + 1),
		UFTRACE_SPAN_MODULE);
	/* uftrace places the kernel above the stack's range. */
	fprintf(f, "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
	return outfile__close(file);
}

static int uftrace__symbols(struct uftrace_writer *o, struct recnames *names,
			    size_t spans)
{
	struct outfile *file;
	FILE *f = uftrace__create(o, UFTRACE_SPAN_MODULE ".sym", &file);

	if (!f)
		return -errno;
	fprintf(f, "# symbols: %zu\n# path name: %s\n", spans + 1,
		UFTRACE_SPAN_MODULE);
	fprintf(f, "%016" PRIx64 " T %s\n",
		uftrace__span_addr(-1) - UFTRACE_SPAN_BASE, UFTRACE_LOST_LABEL);
	for (size_t i = 0; i < spans; i++) {
		const struct uftrace_span *s = &o->spans[i];
		const struct sp_key key = {
			.object = s->key.object, .callsite = s->key.callsite,
			.stack_id = s->key.stack_id, .type = s->key.type,
		};
		long named = recnames__find(names, &key);

		fprintf(f, "%016" PRIx64 " T %s\n",
			uftrace__span_addr(s->id) - UFTRACE_SPAN_BASE,
			named >= 0 ? recnames__label(names, (size_t)named) : "?");
	}
	fprintf(f, "%016" PRIx64 " ? __sym_end\n",
		uftrace__span_addr((long)spans) - UFTRACE_SPAN_BASE);
	return outfile__close(file);
}

/* The host's distribution, as os-release's PRETTY_NAME says it. */
static void os_release(char *buf, size_t len)
{
	struct linereader *lines;
	char *line;

	snprintf(buf, len, "Unknown");
	if (linereader__open("/etc/os-release", &lines))
		return;
	while ((line = linereader__next(lines, NULL))) {
		char *v;

		if (strncmp(line, "PRETTY_NAME=", 12))
			continue;
		v = line + 12 + (line[12] == '"');
		v[strcspn(v, "\"")] = '\0';
		line_text(v, buf, len);
		break;
	}
	linereader__close(lines);
}

static int uftrace__info(struct uftrace_writer *o, const struct recmeta *meta)
{
	struct uftrace_file_header h = {
		.magic = UFTRACE_MAGIC,
		.version = UFTRACE_FILE_VERSION,
		.header_size = sizeof(h),
		.endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 1 : 2,
		.elf_class = sizeof(void *) == 8 ? 2 : 1,
		.feat_mask = UFTRACE_FEATURES,
		.info_mask = 1u << INFO_EXE_NAME | 1u << INFO_CMDLINE |
			     1u << INFO_OSINFO | 1u << INFO_TASKINFO |
			     1u << INFO_RECORD_DATE | 1u << INFO_VERSION,
		.max_stack = UFTRACE_MAX_STACK,
	};
	struct outfile *file;
	FILE *f = uftrace__create(o, "info", &file);
	char text[4096], date[64];
	struct utsname uts;
	time_t now = time(NULL);
	uint64_t end = meta->end_ns > meta->attach_ns ? meta->end_ns
						       : meta->attach_ns;

	if (!f)
		return -errno;
	fwrite(&h, sizeof(h), 1, f);
	line_text(meta->exe ? meta->exe : meta->comm, text, sizeof(text));
	fprintf(f, "exename:%s\n", text);
	line_text(meta->cmdline, text, sizeof(text));
	fprintf(f, "cmdline:%s\n", text);
	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));
	os_release(text, sizeof(text));
	fprintf(f, "osinfo:lines=3\nosinfo:kernel=%s %s\nosinfo:hostname=%s\n"
		"osinfo:distro=\"%s\"\n", uts.sysname, uts.release,
		uts.nodename, text);
	fprintf(f, "taskinfo:lines=2\ntaskinfo:nr_tid=%zu\ntaskinfo:tids=",
		o->n);
	for (size_t i = 0; i < o->n; i++)
		fprintf(f, "%s%u", i ? "," : "", o->streams[i].tid);
	/* ctime's own format, newline included, as uftrace writes it. */
	if (!ctime_r(&now, date))
		snprintf(date, sizeof(date), "?\n");
	fprintf(f, "\nrecord_date:%s", date);
	fprintf(f, "elapsed_time:%" PRIu64 ".%09" PRIu64 " sec\n",
		(end - meta->attach_ns) / NS_PER_S,
		(end - meta->attach_ns) % NS_PER_S);
	fprintf(f, "uftrace_version:syncprof (uftrace data format %d)\n",
		UFTRACE_FILE_VERSION);
	return outfile__close(file);
}

int uftrace__writer_new(struct outdir *dir, uint64_t sid,
			struct uftrace_writer **out)
{
	struct uftrace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->dir = dir;
	snprintf(w->sid, sizeof(w->sid), "%016" PRIx64, sid);
	*out = w;
	return 0;
}

int uftrace__writer_add(struct uftrace_writer *w, const struct sp_wait_event *e)
{
	if (!w->err)
		uftrace__event(w, e);
	return w->err;
}

/* Symbols, in order of their ids: after sorting by key, rebuilt. */
static int uftrace__by_id(const struct uftrace_writer *w,
			  struct uftrace_span **out)
{
	struct uftrace_span *by_id = calloc(w->n_spans + 1, sizeof(*by_id));

	if (!by_id)
		return -ENOMEM;
	for (size_t i = 0; i < w->n_spans; i++)
		by_id[w->spans[i].id] = w->spans[i];
	*out = by_id;
	return 0;
}

int uftrace__writer_sync(struct uftrace_writer *w, const struct recmeta *meta,
			 struct recnames *names)
{
	struct uftrace_writer o;
	int err = w->err;

	/* The records first: the files below never name what is not there. */
	for (size_t i = 0; !err && i < w->n; i++)
		if (w->streams[i].f)
			err = outfile__flush(w->streams[i].f);
	if (err)
		return w->err = err;
	w->first_ns = meta->attach_ns;
	for (size_t i = 0; i < w->n; i++)
		if (w->streams[i].first_ns && (!w->first_ns ||
					       w->streams[i].first_ns < w->first_ns))
			w->first_ns = w->streams[i].first_ns;
	o = *w;
	err = uftrace__by_id(w, &o.spans);
	if (!err)
		err = uftrace__tasks(&o, meta, w->sid);
	if (!err)
		err = uftrace__map(&o, w->sid, w->n_spans);
	if (!err)
		err = uftrace__symbols(&o, names, w->n_spans);
	if (!err)
		err = uftrace__info(&o, meta);
	free(o.spans);
	return err;
}

int uftrace__writer_free(struct uftrace_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = uftrace__close_all(w);
	free(w->streams);
	free(w->spans);
	free(w);
	return err;
}

int uftrace__export(struct outdir *dir, const struct recmeta *meta,
		    struct recnames *names, struct evlog_reader *events)
{
	struct uftrace_writer *w;
	struct sp_wait_event e;
	int err, got = 0;

	err = uftrace__writer_new(dir, meta->attach_ns ^
				  ((uint64_t)meta->pid << 40), &w);
	if (err)
		return err;
	evlog__rewind(events);
	while (!err && (got = evlog__read(events, &e)) > 0)
		err = uftrace__writer_add(w, &e);
	if (!err && got < 0)
		err = got;
	if (!err)
		err = uftrace__writer_sync(w, meta, names);
	if (!err)
		err = uftrace__writer_free(w);
	else
		uftrace__writer_free(w);
	return err;
}
