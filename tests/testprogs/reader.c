// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader [TIMES]: read(2) from /dev/zero, on fd 100, sizes 1, 2, 4, ...,
 * 4096, TIMES (default 3) times each: 13 * TIMES reads of known sizes.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	int times = argc > 1 ? atoi(argv[1]) : 3, i, t;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0 || dup2(fd, 100) < 0)
		return 1;
	for (i = 0; i <= 12; i++)
		for (t = 0; t < times; t++)
			if (read(100, buf, 1u << i) != (1 << i))
				return 1;
	return 0;
}
