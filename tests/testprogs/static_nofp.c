// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * static_nofp N: linked statically, no frame pointers (as Go, musl and
 * appliance binaries are): a static executable has .eh_frame but no
 * .eh_frame_hdr. N rounds of main -> top -> mid -> leaf, ~1 ms each.
 */
#include <stdlib.h>

__attribute__((noinline)) long leaf(long n)
{
	long x = 0, i;

	for (i = 0; i < n; i++)
		x += (i * i) ^ (x >> 3);
	return x;
}

__attribute__((noinline)) long mid(long n)
{
	return leaf(n) + 1;
}

__attribute__((noinline)) long top(long n)
{
	return mid(n) + 1;
}

int main(int argc, char **argv)
{
	volatile long s = 0;
	int r = argc > 1 ? atoi(argv[1]) : 300, i;

	for (i = 0; i < r; i++)
		s += top(1000000 + i);
	return 0;
}
