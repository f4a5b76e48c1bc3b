// SPDX-License-Identifier: GPL-2.0
/*
 * A process that maps many libraries and waits: for measuring what a
 * profiler pays per mapped file when it attaches (make bench, section
 * targetfiles).  dlopens each PATH, prints "ready PID", and sleeps until
 * it is killed.
 *
 *   manylibs PATH...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "manylibs: %s\n", dlerror());
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
