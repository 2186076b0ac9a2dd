// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sleeper N MS: print "pid=<pid>", then nanosleep(MS ms) exactly N times. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, ms = argc > 2 ? atol(argv[2]) : 1, i;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
