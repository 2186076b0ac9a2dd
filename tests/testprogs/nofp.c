// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A known call chain built without frame pointers, through a libc
 * callback: main -> nofp_a -> nofp_b -> nofp_c -> qsort -> nofp_cmp,
 * where nofp_cmp spends the time. Frame-pointer walking stops at the
 * comparator; CFI unwinding reaches main and __libc_start_call_main.
 *
 *   nofp [MILLISECONDS]   (of CPU time, default 500: the samples of a
 *                          cpu-clock profile do not depend on how busy
 *                          the machine is)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static int nofp_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b, i;

	for (i = 0; i < 200; i++)
		sink += (unsigned long)(x ^ i);
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void nofp_c(int *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (int)((i * 2654435761u) % 1000003u);
	qsort(v, n, sizeof(*v), nofp_cmp);
}

__attribute__((noinline)) static void nofp_b(int *v, size_t n)
{
	nofp_c(v, n);
	sink++;
}

__attribute__((noinline)) static void nofp_a(int *v, size_t n)
{
	nofp_b(v, n);
	sink++;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500, end = now_ms() + ms;
	static int v[4096];

	while (now_ms() < end)
		nofp_a(v, sizeof(v) / sizeof(v[0]));
	return 0;
}
