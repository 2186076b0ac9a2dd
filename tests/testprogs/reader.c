// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader [TIMES]: read(2) from /dev/zero, on fd 100, sizes 1, 2, 4, ...,
 * 4096, TIMES (default 3) times each: 13 * TIMES reads of known sizes.
 *
 * reader TIMES N [DELAY_US [SHIFT]]: TIMES rounds of reads of sizes 1, 2,
 * ..., N (N <= 4096), DELAY_US between rounds: N keys interleaved, each
 * TIMES times, so that an aggregation keyed by size changes key every
 * event. With SHIFT, round t reads sizes S+1 ... S+N, S = (t % 4) * SHIFT:
 * keys that go idle and come back (S + N <= 4096).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	int times = argc > 1 ? atoi(argv[1]) : 3, i, t;
	int n = argc > 2 ? atoi(argv[2]) : 0, delay = argc > 3 ? atoi(argv[3]) : 0;
	int shift = argc > 4 ? atoi(argv[4]) : 0, s;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0 || dup2(fd, 100) < 0 || n < 0 || shift < 0 || n + 3 * shift > 4096)
		return 1;
	if (n) {
		for (t = 0; t < times; t++) {
			s = (t % 4) * shift;
			for (i = s + 1; i <= s + n; i++)
				if (read(100, buf, (size_t)i) != i)
					return 1;
			if (delay)
				usleep((useconds_t)delay);
		}
		return 0;
	}
	for (i = 0; i <= 12; i++)
		for (t = 0; t < times; t++)
			if (read(100, buf, 1u << i) != (1 << i))
				return 1;
	return 0;
}
