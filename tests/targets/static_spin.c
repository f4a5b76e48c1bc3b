// SPDX-License-Identifier: GPL-2.0
/* A statically linked target: syncprof must refuse it with a clear reason. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < seconds * 10; i++) {
		pthread_mutex_lock(&lock);
		usleep(100000);
		pthread_mutex_unlock(&lock);
	}
	return 0;
}
