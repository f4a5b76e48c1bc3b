// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "log.h"

static enum log_level max_level = LOG_WARN;
/* log__hold: errors and libbpf's lines wait here. */
static FILE *held;
static char *held_text;
static size_t held_len;

void log__hold(void)
{
	if (!held)
		held = open_memstream(&held_text, &held_len);
}

void log__release(bool print)
{
	if (!held)
		return;
	fclose(held);
	held = NULL;
	if (print)
		fputs(held_text, stderr);
	else if (held_len && log__enabled(LOG_DEBUG))
		fprintf(stderr, "syncprof: debug: dropped, as the target is "
			"gone:\n%s", held_text);
	free(held_text);
	held_text = NULL;
	held_len = 0;
}

/* Where a line of this level goes now. */
static FILE *log__stream(enum log_level level)
{
	return held && level == LOG_ERROR ? held : stderr;
}

void log__set_level(enum log_level level)
{
	max_level = level;
}

bool log__enabled(enum log_level level)
{
	return level <= max_level;
}

void log__notice(const char *fmt, ...)
{
	va_list ap;

	fputs("syncprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *log__error_prefix(void)
{
	return "syncprof: error";
}

static void log__vprint(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "syncprof: error: ",	/* log__error_prefix() */
		[LOG_WARN] = "syncprof: warning: ",
		[LOG_INFO] = "syncprof: ",
		[LOG_DEBUG] = "syncprof: debug: ",
	};

	FILE *out = log__stream(level);

	if (!log__enabled(level))
		return;
	/* One line at a time: the calibration's thread says things too. */
	flockfile(out);
	fputs(prefix[level], out);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	funlockfile(out);
}

void log__print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log__vprint(level, fmt, ap);
	va_end(ap);
}

static int log__libbpf(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	/* libbpf's messages end in a newline already. */
	if (level == LIBBPF_DEBUG && !log__enabled(LOG_DEBUG))
		return 0;
	if (level == LIBBPF_INFO && !log__enabled(LOG_INFO))
		return 0;
	/* Warnings explain the failures callers report: always shown.  Most
	 * of libbpf's own lines carry its prefix already. */
	if (strncmp(fmt, "libbpf: ", 8))
		fputs("libbpf: ", log__stream(LOG_ERROR));
	return vfprintf(log__stream(LOG_ERROR), fmt, ap);
}

void log__capture_libbpf(void)
{
	libbpf_set_print(log__libbpf);
}
