// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* spawner N M: N threads running worker_a, then M running worker_b, each
 * joined before the next starts (threadsnoop's pthread_create start
 * routines: usym(arg2) names them). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void *worker_a(void *arg)
{
	return arg;
}

__attribute__((noinline)) void *worker_b(void *arg)
{
	return arg;
}

static int spawn(void *(*fn)(void *), int n)
{
	pthread_t t;
	int i;

	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, fn, NULL))
			return -1;
		pthread_join(t, NULL);
	}
	return n;
}

int main(int argc, char **argv)
{
	int a = spawn(worker_a, argc > 1 ? atoi(argv[1]) : 3);
	int b = spawn(worker_b, argc > 2 ? atoi(argv[2]) : 2);

	printf("%d %d threads\n", a, b);
	return a < 0 || b < 0;
}
