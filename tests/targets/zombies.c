// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the process-lifecycle tests: a parent with children that
 * are zombies when a profiler attaches.  Before the start handshake it
 * forks --zombies children that exit at once and are never waited for;
 * on SIGUSR1 (--wait-signal) it lives --live-ms more and exits, and its
 * zombies go with it (init reaps them).
 *
 *   zombies [--zombies N] [--live-ms N] [--wait-signal] [--reuse-ms N]
 *
 * --reuse-ms: on SIGUSR1 it forks a child that exits at once, reaps it,
 * and forks another with the same PID (clone3's set_tid, root only) that
 * lives N ms; prints "reused PID" and exits at once itself, so the last
 * process to end is the second child.
 */
#include <getopt.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/targetkit.h"

/* A child, then another with its PID once it is gone; 0 or -1. */
static int reuse_pid(int live_ms)
{
	pid_t first = fork(), again;
	struct clone_args args = { .exit_signal = SIGCHLD };

	if (first < 0)
		return -1;
	if (!first)
		_exit(0);
	if (waitpid(first, NULL, 0) != first)
		return -1;
	args.set_tid = (uint64_t)(uintptr_t)&first;
	args.set_tid_size = 1;
	again = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (again < 0)
		return -1;
	if (!again) {
		sleep_us(live_ms * 1000);
		_exit(0);
	}
	printf("reused %d\n", (int)again);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "zombies", required_argument, NULL, 'z' },
		{ "live-ms", required_argument, NULL, 'l' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "reuse-ms", required_argument, NULL, 'r' },
		{ 0 },
	};
	int zombies = 3, live_ms = 200, reuse_ms = 0, opt;
	bool go_signal = false;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'z': zombies = atoi(optarg); break;
		case 'l': live_ms = atoi(optarg); break;
		case 'w': go_signal = true; break;
		case 'r': reuse_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: zombies [--zombies N] [--live-ms N] "
				"[--wait-signal] [--reuse-ms N]\n");
			return 2;
		}
	}
	for (int i = 0; i < zombies; i++) {
		siginfo_t info;
		pid_t pid = fork();

		if (pid < 0) {
			perror("zombies: fork");
			return 1;
		}
		if (!pid)
			_exit(0);
		/* Exited, and left unreaped: a zombie from here on. */
		if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT)) {
			perror("zombies: waitid");
			return 1;
		}
	}
	if (go_signal)
		wait_for_go();
	if (reuse_ms) {
		if (reuse_pid(reuse_ms)) {
			perror("zombies: reuse");
			return 1;
		}
		return 0;
	}
	sleep_us(live_ms * 1000);
	return 0;
}
