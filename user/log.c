// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "log.h"

static enum log_level max_level = LOG_WARN;

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

	if (!log__enabled(level))
		return;
	fputs(prefix[level], stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
		fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log__capture_libbpf(void)
{
	libbpf_set_print(log__libbpf);
}
