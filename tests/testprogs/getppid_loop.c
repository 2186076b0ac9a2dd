// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * getppid_loop N [DELAY_MS] [CHILDREN]: print "pid=<pid>", sleep DELAY_MS,
 * then call getppid() exactly N times (raw syscall: libc may not cache it).
 * With CHILDREN, fork that many children that each do the same N calls
 * (the parent makes none) and wait for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void calls(long n)
{
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long delay = argc > 2 ? atol(argv[2]) : 0;
	int children = argc > 3 ? atoi(argv[3]) : 0, i, status, bad = 0;
	struct timespec ts = {delay / 1000, (delay % 1000) * 1000000};

	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	if (delay)
		nanosleep(&ts, NULL);
	if (!children) {
		calls(n);
		return 0;
	}
	for (i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			calls(n);
			_exit(0);
		}
		if (pid < 0)
			return 1;
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}
