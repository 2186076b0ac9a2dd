// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ELF function symbols and their file offsets, checked against this test
 * binary itself: the bytes at a function's file offset are its code. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "elf/elfsym.h"
#include "test.h"

__attribute__((noinline, used)) int pmt_elfsym_probe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 7;
}

TEST(elfsym_offsets)
{
	struct pmt_elf_syms syms;
	const struct pmt_elf_sym *s;
	unsigned char file[16];
	char err[256], path[256];
	ssize_t n;
	int fd;
	size_t i;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	ASSERT_TRUE(n > 0);
	path[n] = '\0';
	ASSERT_EQ(pmt_elf__funcs(path, &syms, err, sizeof(err)), 0);
	s = pmt_elf__find(&syms, "pmt_elfsym_probe_target");
	ASSERT_TRUE(s != NULL);
	fd = open(path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pread(fd, file, sizeof(file), (off_t)s->off), (ssize_t)sizeof(file));
	close(fd);
	ASSERT_EQ(memcmp(file, (const void *)pmt_elfsym_probe_target, sizeof(file)), 0);
	/* sorted, one entry a name */
	for (i = 1; i < syms.n; i++)
		ASSERT_TRUE(strcmp(syms.v[i - 1].name, syms.v[i].name) < 0);
	ASSERT_TRUE(pmt_elf__find(&syms, "pmt_no_such_function") == NULL);
	pmt_elf__free(&syms);
	ASSERT_EQ(pmt_elfsym_probe_target(1), 10);
}

TEST(elfsym_errors)
{
	struct pmt_elf_syms syms;
	char err[256], path[256];

	ASSERT_EQ(pmt_elf__funcs("/nonexistent/x", &syms, err, sizeof(err)), -ENOENT);
	ASSERT_STREQ(err, "cannot open /nonexistent/x: No such file or directory");
	ASSERT_EQ(pmt_elf__funcs("/proc/self/status", &syms, err, sizeof(err)), -EINVAL);
	ASSERT_STREQ(err, "/proc/self/status is not an ELF file (an executable or shared library)");
	ASSERT_EQ(pmt_elf__locate("sh", path, sizeof(path)), 0);
	ASSERT_TRUE(strstr(path, "/sh") != NULL);
	ASSERT_EQ(pmt_elf__locate("libc.so.6", path, sizeof(path)), 0);
	ASSERT_EQ(pmt_elf__locate("pmt-no-such-binary", path, sizeof(path)), -ENOENT);
}
