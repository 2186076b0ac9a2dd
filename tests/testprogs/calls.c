// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * calls N [SLEEP_MS [DELAY_MS]]: a workload of known function calls, for
 * uprobes and kprobes. After DELAY_MS (time to attach with -p), N times:
 * pmt_ut_add(i, 2 * i) (returns 3 * i) and one read(2) of 12345 bytes from
 * /dev/zero (vfs_read count 12345, returns 12345), and pmt_ut_neg(-1 - i)
 * (negative arguments: returns its argument). Then, with SLEEP_MS,
 * pmt_ut_sleep(SLEEP_MS) once (a nanosleep of that long).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define READ_SIZE 12345

__attribute__((noinline, used)) long pmt_ut_add(long a, long b)
{
	__asm__ volatile("" ::: "memory"); /* keep the call */
	return a + b;
}

__attribute__((noinline, used)) long pmt_ut_neg(long a)
{
	__asm__ volatile("" ::: "memory");
	return a;
}

__attribute__((noinline, used)) int pmt_ut_sleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	return nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	static char buf[READ_SIZE];
	long n = argc > 1 ? atol(argv[1]) : 10, ms = argc > 2 ? atol(argv[2]) : 0, i, sum = 0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	if (argc > 3)
		usleep((useconds_t)atol(argv[3]) * 1000);
	for (i = 0; i < n; i++) {
		sum += pmt_ut_add(i, 2 * i);
		sum += pmt_ut_neg(-1 - i) + 1 + i;
		if (read(fd, buf, READ_SIZE) != READ_SIZE)
			return 1;
	}
	if (ms && pmt_ut_sleep(ms))
		return 1;
	return sum == 3 * n * (n - 1) / 2 ? 0 : 1;
}
