// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "readiness.h"

int readiness__claim(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (fd < 0 || flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC))
		return -errno;
	return 0;
}

/*
 * A reader that went away makes the write fail with EPIPE, never a
 * SIGPIPE that ends syncprof: the signal is held over the write and a
 * pending one taken back.
 */
int readiness__announce(int fd, pid_t pid)
{
	static const struct timespec now;
	sigset_t pipe_only, old;
	char line[32];
	int len, err = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	len = snprintf(line, sizeof(line), "ready %d\n", (int)pid);
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
	do
		n = write(fd, line, (size_t)len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if (n != len)
		err = -EIO;
	if (err == -EPIPE && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe_only, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (close(fd) && !err && errno != EINTR)
		err = -errno;
	if (err)
		pr_warn("--ready-fd %d: cannot write: %s", fd, strerror(-err));
	return err;
}
