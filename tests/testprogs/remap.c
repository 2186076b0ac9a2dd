// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * remap N: maps the file remap_a (next to this program) at one address,
 * calls its entry point (a loop of N rounds), unmaps it, maps remap_b at
 * the same address and calls its entry point the same way. Both files
 * are mapped whole, readable and executable, so a virtual address in
 * them is its file offset (their code calls nothing). An unwinder that
 * kept a's mapping for that address would unwind b's frames with a's
 * tables; a reader naming a sample by the mappings of a later time would
 * name a's samples after b. Prints "switch SEC.NSEC" between the two.
 */
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AT ((void *)0x7e0000000000UL)

__attribute__((noinline)) static int run(const char *dir, const char *name, unsigned long n)
{
	char path[PATH_MAX];
	unsigned long (*fn)(unsigned long);
	struct stat st;
	Elf64_Ehdr *eh;
	void *at;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return 1;
	}
	at = mmap(AT, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	if (at == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	eh = at;
	fn = (unsigned long (*)(unsigned long))((char *)at + eh->e_entry);
	if (!fn(n))
		printf("0\n");
	return munmap(at, (size_t)st.st_size);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000000UL;
	char self[PATH_MAX];
	struct timespec ts;
	char *dir;

	snprintf(self, sizeof(self), "%s", argv[0]);
	dir = dirname(self);
	if (run(dir, "remap_a", n))
		return 1;
	/* a's unmapped, b not yet mapped: a sample in either file is in a
	 * before this time (CLOCK_MONOTONIC, the samples' clock), in b after */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("switch %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	fflush(stdout);
	return run(dir, "remap_b", n);
}
