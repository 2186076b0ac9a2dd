// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ELF function symbols and their file offsets, checked against this test
 * binary itself: the bytes at a function's file offset are its code. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "util/error.h"
#include "elf/elfsym.h"
#include "test.h"

/* a fresh error value for each call (the first error set wins) */
#define TERR(e) (pmt_error__clear(&(e)), &(e))

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
	struct pmt_error terr = {0};
	char path[256];
	ssize_t n;
	int fd;
	size_t i;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	ASSERT_TRUE(n > 0);
	path[n] = '\0';
	ASSERT_EQ(pmt_elf__funcs(path, &syms, TERR(terr)), 0);
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
	struct pmt_error terr = {0};
	char *err = terr.msg;
	char path[256];

	ASSERT_EQ(pmt_elf__funcs("/nonexistent/x", &syms, TERR(terr)), -ENOENT);
	ASSERT_STREQ(err, "cannot open /nonexistent/x: No such file or directory");
	ASSERT_EQ(pmt_elf__funcs("/proc/self/status", &syms, TERR(terr)), -EINVAL);
	ASSERT_STREQ(err, "/proc/self/status is not an ELF file (an executable or shared library)");
	ASSERT_EQ(pmt_elf__locate("sh", path, sizeof(path)), 0);
	ASSERT_TRUE(strstr(path, "/sh") != NULL);
	ASSERT_EQ(pmt_elf__locate("libc.so.6", path, sizeof(path)), 0);
	ASSERT_EQ(pmt_elf__locate("pmt-no-such-binary", path, sizeof(path)), -ENOENT);
}

/* initialized data of this binary: in the file's bytes */
static int elfsym_data_word = 42;
static int elfsym_bss_words[4096];

/* Addresses of this process in its own file's initialized bytes (its
 * .data) found there at the file's virtual address; its .bss, heap and
 * stack not (the file's bytes end at p_filesz). */
TEST(elfsym_vaddr_in_file)
{
	struct pmt_elf_loads l;
	uint64_t start = 0, end, pgoff = 0, va;
	char line[512], perms[8], path[256];
	int local = 0, fd, i, word = 0;
	off_t at = 0;
	void *heap = malloc(64);
	FILE *maps = fopen("/proc/self/maps", "r");

	ASSERT_TRUE(maps != NULL);
	/* the executable mapping of this binary */
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %255s", &start,
			   &end, perms, &pgoff, path) == 5 &&
		    strchr(perms, 'x') && (uintptr_t)&test_elfsym_vaddr_in_file >= start &&
		    (uintptr_t)&test_elfsym_vaddr_in_file < end)
			break;
	fclose(maps);
	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pmt_elf__loads(fd, &l), 0);
	ASSERT_TRUE(l.n >= 2);
	ASSERT_TRUE(pmt_elf__vaddr_in_file(&l, start, pgoff, (uintptr_t)&elfsym_data_word, &va));
	/* the file holds the word's first value at that virtual address */
	for (i = 0; i < l.n; i++)
		if (va >= l.v[i].vaddr && va - l.v[i].vaddr < l.v[i].filesz)
			at = (off_t)(va - l.v[i].vaddr + l.v[i].off);
	ASSERT_TRUE(at > 0);
	ASSERT_EQ(pread(fd, &word, sizeof(word), at), (long long)sizeof(word));
	ASSERT_EQ(word, 42);
	close(fd);
	ASSERT_TRUE(
		!pmt_elf__vaddr_in_file(&l, start, pgoff, (uintptr_t)&elfsym_bss_words[2048], &va));
	ASSERT_TRUE(!pmt_elf__vaddr_in_file(&l, start, pgoff, (uintptr_t)heap, &va));
	ASSERT_TRUE(!pmt_elf__vaddr_in_file(&l, start, pgoff, (uintptr_t)&local, &va));
	free(heap);
	(void)elfsym_bss_words[0];
}
