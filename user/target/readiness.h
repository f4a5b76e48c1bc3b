/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --ready-fd FD: the moment syncprof is attached, told to whoever waits
 * for it (a test, a script, a service manager) as one line on a file
 * descriptor it passed in, as s6's notification-fd does.  Chosen over a
 * line on stderr, which needs -v and a pipe (a live screen owns the
 * terminal), and over a file syncprof creates, which a reader must poll
 * and cannot tell from a crash: a pipe's reader wakes on the line, or on
 * end-of-file if syncprof ends without attaching.
 */
#ifndef SYNCPROF_READINESS_H
#define SYNCPROF_READINESS_H

#include <sys/types.h>

/*
 * Takes descriptor fd for the announcement: it must be open for writing;
 * it is closed on exec, so a launched command never holds it open.
 * 0 or -EBADF (nothing printed).
 */
int readiness__claim(int fd);
/*
 * Writes "ready PID\n" (pid: the profiled process, the launched command's
 * for -- COMMAND) to fd and closes it; a no-op for fd < 0.  0, or -errno
 * after a warning: a reader that went away harms nothing else.
 */
int readiness__announce(int fd, pid_t pid);

#endif
