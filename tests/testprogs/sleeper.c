// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sleeper N MS [times]: print "pid=<pid>", then nanosleep(MS ms) exactly N
 * times; with "times", print each sleep's own length, "slept NS", as the
 * program measured it around the call (CLOCK_MONOTONIC). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, ms = argc > 2 ? atol(argv[2]) : 1, i;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	int times = argc > 3 && !strcmp(argv[3], "times");
	struct timespec t0, t1;

	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (times)
			printf("slept %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
						       (t1.tv_nsec - t0.tv_nsec));
	}
	return 0;
}
