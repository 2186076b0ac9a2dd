// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * untouched [touch] N: USDT pmt:color(i, k, s) and color_of(s, i) N
 * times each, s "red", "green", "blue" for i % 3 (k = i % 3). The strings
 * sit in a mapping of a memfd the program wrote through write() and never
 * reads itself: no page of it is in the process's page tables, so a
 * tracer that cannot fault a page in cannot read them. "touch": the
 * program reads them first (then every read succeeds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sdt.h>

static const char text[] = "red\0green\0blue";
static const size_t at[] = {0, 4, 10};

__attribute__((noinline)) int color_of(const char *s, int i)
{
	__asm__ volatile("" : : "r"(s), "r"(i) : "memory");
	return i;
}

int main(int argc, char **argv)
{
	int touch = argc > 1 && !strcmp(argv[1], "touch");
	int n = argc > 1 + touch ? atoi(argv[1 + touch]) : 30, i, fd;
	const char *m;
	volatile char sum = 0;

	fd = memfd_create("untouched", 0);
	if (fd < 0 || write(fd, text, sizeof(text)) != (ssize_t)sizeof(text)) {
		perror("memfd");
		return 1;
	}
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (touch)
		for (i = 0; i < (int)sizeof(text); i++)
			sum += m[i];
	for (i = 0; i < n; i++) {
		const char *s = m + at[i % 3];

		DTRACE_PROBE3(pmt, color, i, i % 3, s);
		color_of(s, i);
	}
	printf("%d colors%s\n", n, touch ? " (touched)" : "");
	return 0;
}
