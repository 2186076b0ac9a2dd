// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * twopaths N: N getppid() calls through path_a and N/10 through path_b,
 * built as Debian builds its packages (no frame pointers): stacks on a
 * system call tracepoint, exact per path.
 */
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void path_a(int n)
{
	int i;

	for (i = 0; i < n; i++)
		getppid();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void path_b(int n)
{
	int i;

	for (i = 0; i < n; i++)
		getppid();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	path_a(n);
	path_b(n / 10);
	return 0;
}
