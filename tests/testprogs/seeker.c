// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seeker N KEYS: lseek(2) on /dev/null to offsets 0, 1, ..., KEYS-1, 0, ...,
 * N times in all: an aggregation --by offset holds KEYS keys, each hit
 * N/KEYS times, at the rate of a bare system call (benchmarks).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, keys = argc > 2 ? atol(argv[2]) : 1, i;
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || keys < 1)
		return 1;
	for (i = 0; i < n; i++)
		lseek(fd, (off_t)(i % keys), SEEK_SET);
	return 0;
}
