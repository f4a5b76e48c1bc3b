/* SPDX-License-Identifier: GPL-2.0 */
/* The one diagnostics printer: everything goes to stderr, prefixed. */
#ifndef SYNCPROF_LOG_H
#define SYNCPROF_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_ERROR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

void log__set_level(enum log_level level);
bool log__enabled(enum log_level level);
void log__print(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A line the user sees at every verbosity: "syncprof: ...". */
void log__notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "syncprof: error", which every error line starts with. */
const char *log__error_prefix(void);
/* Routes libbpf's own messages through log__print. */
void log__capture_libbpf(void);
/*
 * Holds error lines and libbpf's messages back until log__release:
 * printed then, or dropped (shown with -vv) when what failed no longer
 * matters, as an attach to a target that exited meanwhile.
 */
void log__hold(void);
void log__release(bool print);

#define pr_err(...)	log__print(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	log__print(LOG_WARN, __VA_ARGS__)
#define pr_info(...)	log__print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	log__print(LOG_DEBUG, __VA_ARGS__)

#endif
