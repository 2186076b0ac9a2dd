// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Debug files' compressed sections kept uncompressed on disk
 * (symbols/debugcache.h): this test binary's own DWARF (it is built with
 * -g), compressed by libelf as gcc -gz and Debian's -dbg packages
 * compress it, read through the copy as it reads without one. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include "symbols/debugcache.h"
#include "symbols/srcline.h"
#include "test.h"

struct dc_dir {
	char root[64], cache[96], file[96];
};

static void rm_rf(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "  could not remove %s\n", dir);
}

static bool starts(const char *s, const char *with)
{
	return s && !strncmp(s, with, strlen(with));
}

/* A copy of this binary at path with its .debug_ sections compressed
 * (zlib, SHF_COMPRESSED); its descriptor */
static int compressed_copy(const char *path)
{
	int in = open("/proc/self/exe", O_RDONLY), out;
	size_t shstr, n = 0;
	Elf_Scn *scn = NULL;
	struct stat st;
	GElf_Shdr sh;
	Elf *e;

	out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (in < 0 || out < 0 || fstat(in, &st) ||
	    sendfile(out, in, NULL, (size_t)st.st_size) != st.st_size)
		return -1;
	close(in);
	elf_version(EV_CURRENT);
	e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e || elf_getshdrstrndx(e, &shstr))
		return -1;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && sh.sh_size &&
		    starts(elf_strptr(e, shstr, sh.sh_name), ".debug_") &&
		    elf_compress(scn, ELFCOMPRESS_ZLIB, 0) == 1)
			n++;
	if (!n || elf_update(e, ELF_C_WRITE) < 0)
		return -1;
	elf_end(e);
	return out;
}

/* Sections of the file at fd: compressed ones, and .text's file range */
static int count_compressed(int fd, uint64_t *text, uint64_t *text_size)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstr;
	GElf_Shdr sh;
	int n = 0;

	if (!e || elf_getshdrstrndx(e, &shstr))
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		n += (sh.sh_flags & SHF_COMPRESSED) != 0;
		if (text && starts(elf_strptr(e, shstr, sh.sh_name), ".text")) {
			*text = sh.sh_offset;
			*text_size = sh.sh_size;
		}
	}
	elf_end(e);
	return n;
}

/* The frames at every step-th offset of .text the same through the copy
 * as through the compressed file itself; how many offsets had any */
static int same_frames(int fd, struct pmt_debugcache *c, int *failed)
{
	struct pmt_srcfile *a = pmt_srcfile__open(fd, NULL, NULL, true, NULL);
	struct pmt_srcfile *b = pmt_srcfile__open(fd, NULL, NULL, true, c);
	const struct pmt_srcframe *fa, *fb;
	uint64_t off, text = 0, size = 0;
	int named = 0, na, nb, i;

	count_compressed(fd, &text, &size);
	for (off = text; a && b && off < text + size && !*failed; off += size / 997 | 1) {
		na = pmt_srcfile__frames(a, off, &fa);
		struct pmt_srcframe keep[PMT_SRC_INLINE + 1];
		memcpy(keep, fa, sizeof(*fa) * (size_t)(na > 0 ? na : 0));
		nb = pmt_srcfile__frames(b, off, &fb);
		if (na != nb)
			FAIL_AT("offset 0x%llx: %d frames, %d through the copy",
				(unsigned long long)off, na, nb);
		for (i = 0; i < na && i < nb && !*failed; i++)
			if (keep[i].line != fb[i].line || strcmp(keep[i].file, fb[i].file) ||
			    (!keep[i].name) != (!fb[i].name) ||
			    (keep[i].name && strcmp(keep[i].name, fb[i].name)))
				FAIL_AT("offset 0x%llx frame %d: %s:%u, %s:%u through the copy",
					(unsigned long long)off, i, keep[i].file, keep[i].line,
					fb[i].file, fb[i].line);
		named += na > 0;
	}
	if (!a || !b)
		FAIL_AT("no DWARF read: %p %p", (void *)a, (void *)b);
	pmt_srcfile__free(a);
	pmt_srcfile__free(b);
	return named;
}

TEST(debugcache_copy_reads_as_compressed)
{
	struct pmt_debugcache *c;
	struct pmt_debugcache_stats st;
	struct dc_dir d;
	Elf *e;
	int fd, cfd;

	snprintf(d.root, sizeof(d.root), "/tmp/pmt-dc-XXXXXX");
	ASSERT_TRUE(mkdtemp(d.root) != NULL);
	snprintf(d.cache, sizeof(d.cache), "%s/a/b", d.root);
	snprintf(d.file, sizeof(d.file), "%s/file", d.root);
	fd = compressed_copy(d.file);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(count_compressed(fd, NULL, NULL) > 3);
	c = pmt_debugcache__new(d.cache, 0);
	/* the directory made (mode 0700) and the copy in it: nothing
	 * compressed; the same frames through it */
	ASSERT_TRUE(same_frames(fd, c, failed) > 100);
	st = pmt_debugcache__stats(c);
	ASSERT_EQ(st.made, 1);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfd = pmt_debugcache__open(c, fd, e);
	ASSERT_TRUE(cfd >= 0);
	ASSERT_EQ(count_compressed(cfd, NULL, NULL), 0);
	close(cfd);
	st = pmt_debugcache__stats(c);
	ASSERT_EQ(st.made, 1);
	ASSERT_EQ(st.used, 1);
	/* a file others may write to stands for no one's: not copied */
	fchmod(fd, 0620);
	ASSERT_EQ(pmt_debugcache__open(c, fd, e), -1);
	ASSERT_EQ(pmt_debugcache__stats(c).refused, 1);
	fchmod(fd, 0600);
	elf_end(e);
	pmt_debugcache__free(c);
	close(fd);
	rm_rf(d.root);
}

/* The one copy in dir: its name; its bytes on disk (0: none, or more) */
static uint64_t only_copy(const char *dir, char *name, size_t len)
{
	char cmd[256], line[512];
	uint64_t bytes = 0;
	struct stat st;
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (snprintf(name, len, "%s/%s", dir, line) >= (int)len)
			continue;
		if (!stat(name, &st))
			bytes = (uint64_t)st.st_blocks * 512;
		n++;
	}
	pclose(p);
	return n == 1 ? bytes : 0;
}

static int copy_in(struct pmt_debugcache *c, int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int cfd = pmt_debugcache__open(c, fd, e);

	elf_end(e);
	if (cfd >= 0)
		close(cfd);
	return cfd >= 0;
}

/* Held to its bound: the copy used longest ago goes first; a file whose
 * copy would be more than half the bound is not copied; a directory
 * others may write in is not used. */
TEST(debugcache_bound)
{
	struct timespec old[2] = {{.tv_sec = 1000000}, {.tv_sec = 1000000}};
	char first[256], path[160];
	struct pmt_debugcache *c;
	struct dc_dir d;
	uint64_t size;
	int fd[3], i;

	snprintf(d.root, sizeof(d.root), "/tmp/pmt-dc-XXXXXX");
	ASSERT_TRUE(mkdtemp(d.root) != NULL);
	snprintf(d.cache, sizeof(d.cache), "%s/cache", d.root);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/file%d", d.root, i);
		fd[i] = compressed_copy(path);
		ASSERT_TRUE(fd[i] >= 0);
		/* three files by name (build-id, size, mtime) */
		old[1].tv_sec = 2000000 + i;
		futimens(fd[i], old);
	}
	c = pmt_debugcache__new(d.cache, 0);
	ASSERT_TRUE(copy_in(c, fd[0]));
	size = only_copy(d.cache, first, sizeof(first));
	ASSERT_TRUE(size > 0);
	utimensat(AT_FDCWD, first, old, 0); /* used long ago */
	pmt_debugcache__free(c);
	c = pmt_debugcache__new(d.cache, size * 5 / 2);
	ASSERT_TRUE(copy_in(c, fd[1]));
	ASSERT_EQ(access(first, F_OK), 0);
	ASSERT_TRUE(copy_in(c, fd[2]));
	ASSERT_TRUE(access(first, F_OK) != 0);
	ASSERT_EQ(pmt_debugcache__stats(c).made, 2);
	pmt_debugcache__free(c);
	/* more than half the bound: not copied */
	c = pmt_debugcache__new(d.cache, size * 3 / 2);
	ASSERT_TRUE(!copy_in(c, fd[0]));
	ASSERT_EQ(pmt_debugcache__stats(c).refused, 1);
	pmt_debugcache__free(c);
	/* others may write in the directory: not used */
	chmod(d.cache, 0777);
	c = pmt_debugcache__new(d.cache, 0);
	ASSERT_TRUE(!copy_in(c, fd[0]));
	pmt_debugcache__free(c);
	for (i = 0; i < 3; i++)
		close(fd[i]);
	rm_rf(d.root);
}

/* The resident KB of the mappings of files under dir (/proc/self/smaps) */
static long rss_under(const char *dir)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512], path[256];
	unsigned long lo, hi;
	long kb, sum = 0;
	bool in = false;

	while (f && fgets(line, sizeof(line), f)) {
		/* a mapping's line, its path where it has one */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = sscanf(line, "%*x-%*x %*s %*s %*s %*u %255s", path) == 1 &&
			     starts(path, dir);
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			sum += kb;
	}
	if (f)
		fclose(f);
	return sum;
}

/* libc's DWARF through its uncompressed copy (libc6-dbg, 10 MB): lookups
 * across its text (libdw reads every CU's header before the one it looks
 * for) leave at most 2 MB of the copy resident, the pages of their last
 * 32 page faults (each maps at most 16: the kernel's fault-around), the
 * rest given back to the page cache; the frames read again after a drop
 * are the same. */
TEST(srcfile_image_given_back)
{
	const struct pmt_srcframe *fr;
	struct pmt_debugcache *c;
	struct pmt_srcfile *f;
	char path[256] = "", line[512], first[16][64] = {{0}};
	unsigned long lo, hi, pgoff;
	uint64_t off, start = 0, end = 0;
	struct dc_dir d;
	long rss, peak = 0;
	int fd, i, named = 0;
	FILE *m = fopen("/proc/self/maps", "re");

	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "%lx-%lx r-xp %lx %*s %*u %255s", &lo, &hi, &pgoff, path) == 4 &&
		    strstr(path, "/libc.so")) {
			start = pgoff;
			end = pgoff + hi - lo;
			break;
		}
	if (m)
		fclose(m);
	ASSERT_TRUE(end > start);
	snprintf(d.root, sizeof(d.root), "/tmp/pmt-dc-XXXXXX");
	ASSERT_TRUE(mkdtemp(d.root) != NULL);
	snprintf(d.cache, sizeof(d.cache), "%s/cache", d.root);
	c = pmt_debugcache__new(d.cache, 0);
	fd = open(path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	f = pmt_srcfile__open(fd, path, NULL, false, c);
	close(fd);
	ASSERT_TRUE(f != NULL); /* libc6-dbg: make test-deps */
	for (off = start, i = 0; off < end; off += (end - start) / 400, i++) {
		int n = pmt_srcfile__frames(f, off, &fr);

		named += n > 0 && fr[0].line > 0;
		if (n > 0 && i < 16)
			snprintf(first[i], sizeof(first[i]), "%s:%u", fr[0].file, fr[0].line);
		rss = rss_under(d.cache);
		peak = rss > peak ? rss : peak;
	}
	ASSERT_TRUE(named > 300);
	if (peak > 2048)
		FAIL_AT("%ld KB of libc's debug copy resident", peak);
	/* the answers' strings point into the copy's pages, given back
	 * since: read again from the file, the same */
	for (off = start, i = 0; off < end && i < 16; off += (end - start) / 400, i++) {
		char again[64] = "";

		if (pmt_srcfile__frames(f, off, &fr) > 0)
			snprintf(again, sizeof(again), "%s:%u", fr[0].file, fr[0].line);
		if (again[0] && strcmp(again, first[i]))
			FAIL_AT("offset 0x%llx: %s, then %s", (unsigned long long)off, first[i],
				again);
	}
	pmt_srcfile__free(f);
	pmt_debugcache__free(c);
	rm_rf(d.root);
}
