// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pingpong N: two processes pass a byte back and forth through two pipes N
 * times: 2N wakeups and context switches, a scheduler-heavy load.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	int a[2], b[2], status;
	char c = 0;

	if (pipe(a) || pipe(b))
		return 1;
	if (fork() == 0) {
		for (i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	wait(&status);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}
