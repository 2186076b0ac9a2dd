// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* open_loop N PATH: openat(AT_FDCWD, PATH, O_RDONLY) N times, closing what
 * opens (a missing PATH fails at once: ENOENT). The benchmarks' workload
 * for string keys and expressions on the openat tracepoints. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;
	const char *path = argc > 2 ? argv[2] : "/nonexistent/pmtrace-bench";
	int fd;

	for (i = 0; i < n; i++) {
		fd = openat(AT_FDCWD, path, O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
