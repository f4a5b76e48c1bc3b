// SPDX-License-Identifier: GPL-2.0
/*
 * A target for the process-lifecycle tests: a parent with children that
 * are zombies when a profiler attaches.  Before the start handshake it
 * forks --zombies children that exit at once and are never waited for;
 * on SIGUSR1 (--wait-signal) it lives --live-ms more and exits, and its
 * zombies go with it (init reaps them).
 *
 *   zombies [--zombies N] [--live-ms N] [--wait-signal]
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/targetkit.h"

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "zombies", required_argument, NULL, 'z' },
		{ "live-ms", required_argument, NULL, 'l' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ 0 },
	};
	int zombies = 3, live_ms = 200, opt;
	bool go_signal = false;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'z': zombies = atoi(optarg); break;
		case 'l': live_ms = atoi(optarg); break;
		case 'w': go_signal = true; break;
		default:
			fprintf(stderr, "usage: zombies [--zombies N] [--live-ms N] "
				"[--wait-signal]\n");
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
	sleep_us(live_ms * 1000);
	return 0;
}
