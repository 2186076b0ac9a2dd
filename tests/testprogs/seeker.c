// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seeker N KEYS [PAUSE_MS]: lseek(2) on /dev/null to offsets 0, 1, ...,
 * KEYS-1, 0, ..., N times in all: an aggregation --by offset holds KEYS
 * keys, each hit N/KEYS times, at the rate of a bare system call
 * (benchmarks), or with PAUSE_MS a pause of that long every 1000 calls.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, keys = argc > 2 ? atol(argv[2]) : 1, i;
	long pause = argc > 3 ? atol(argv[3]) : 0;
	struct timespec ts = {pause / 1000, (pause % 1000) * 1000000L};
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || keys < 1)
		return 1;
	for (i = 0; i < n; i++) {
		lseek(fd, (off_t)(i % keys), SEEK_SET);
		if (pause && i % 1000 == 999)
			nanosleep(&ts, NULL);
	}
	return 0;
}
